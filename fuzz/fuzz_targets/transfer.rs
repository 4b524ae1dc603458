//! The worker-to-page batch (`transfer::Batch::decode`), damaged or made up: an error, never a
//! panic; a batch that decodes is consistent enough to evaluate and to encode again.
#![no_main]

use libfuzzer_sys::fuzz_target;
use slo_core::evaluate::{report, Duration};
use slo_core::spec::{Spec, Targets, TtftTarget};
use slo_core::transfer::Batch;

fuzz_target!(|data: &[u8]| {
    let Ok(batch) = Batch::decode(data) else {
        return;
    };
    let n = batch.table.len();
    let spec = Spec::single(Targets {
        ttft: Some(TtftTarget::Fixed { ms: 500.0 }),
        tpot_ms: Some(50.0),
        ..Targets::default()
    });
    let r = report(&batch.table, &spec, &Duration::known(60.0, "fuzz"));
    assert!(r.overall.attempted <= n as u64);
    let again = Batch::decode(&batch.encode()).expect("a decoded batch encodes and decodes");
    assert_eq!(again.table.len(), n);
});
