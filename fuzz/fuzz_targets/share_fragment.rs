//! Share-link fragments (`#spec=...`), as pasted or opened from a damaged link.
#![no_main]

use libfuzzer_sys::fuzz_target;
use slo_core::spec;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    match spec::from_share_fragment(&text) {
        Ok(s) => assert!(s.validate().is_empty()),
        Err(errors) => assert!(!errors.is_empty()),
    }
});
