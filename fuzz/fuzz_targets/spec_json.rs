//! SLO spec JSON: any text; a spec that is accepted must survive its own round trips (JSON and
//! the share link), or a saved spec or a shared link would not load again.
#![no_main]

use libfuzzer_sys::fuzz_target;
use slo_core::spec::{self, Spec};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    match Spec::from_json(&text) {
        Ok(s) => {
            assert!(s.validate().is_empty());
            assert_eq!(Spec::from_json(&s.to_json()).as_ref(), Ok(&s));
            assert_eq!(
                spec::from_share_fragment(&spec::to_share_fragment(&s)).as_ref(),
                Ok(&s)
            );
        }
        Err(errors) => {
            assert!(!errors.is_empty());
            for e in &errors {
                assert!(!e.path.is_empty() && !e.message.is_empty(), "{e}");
            }
        }
    }
});
