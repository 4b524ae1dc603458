//! The worker-to-page batch (`transfer::Batch::from_parts`), damaged or made up: an error, never
//! a panic; a batch that is put together is consistent enough to evaluate and to take apart
//! again. The input is the parts in one buffer (`Parts::to_bytes`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use slo_core::evaluate::{evaluate, report, Duration};
use slo_core::spec::{Spec, Targets, TtftTarget};
use slo_core::transfer::{Batch, Parts};

fuzz_target!(|data: &[u8]| {
    let Ok(parts) = Parts::from_bytes(data) else {
        return;
    };
    let Ok(batch) = Batch::from_parts(parts) else {
        return;
    };
    let n = batch.table.len();
    let spec = Spec::single(Targets {
        ttft: Some(TtftTarget::Fixed { ms: 500.0 }),
        tpot_ms: Some(50.0),
        ..Targets::default()
    });
    let duration = Duration::known(60.0, "fuzz");
    let r = report(&batch.table, &spec, &duration);
    assert!(r.overall.attempted <= n as u64);
    if let Some(p) = &batch.prepared {
        let _ = evaluate(&batch.table, p, &spec, &duration);
    }
    let again = Batch::from_parts(batch.into_parts()).expect("a batch put together comes apart and back");
    assert_eq!(again.table.len(), n);
});
