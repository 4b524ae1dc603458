//! The whole path from bytes to a report: the first 12 bytes choose a (valid) spec and the run's
//! duration, the rest is read as a CSV log, and `evaluate::report` judges it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use slo_core::evaluate::{self, Duration};
use slo_core::ingest::{self, Format, IngestOptions};
use slo_core::quantile::Method;
use slo_core::spec::{
    CancelPolicy, ClassRule, ClassSpec, ItlStatistic, Spec, StallRule, Targets, TtftTarget,
};

const SPEC_BYTES: usize = 12;

/// A valid spec from 12 bytes: which targets, their values, buckets, method, policies.
fn spec_of(b: &[u8; SPEC_BYTES]) -> Spec {
    let ms = |x: u8, scale: f64| f64::from(x) * scale + 0.5;
    let targets = Targets {
        ttft: match b[0] & 3 {
            0 => None,
            1 | 2 => Some(TtftTarget::Fixed { ms: ms(b[1], 10.0) }),
            _ => Some(TtftTarget::PerToken {
                base_ms: ms(b[1], 10.0),
                per_token_ms: f64::from(b[2]) / 100.0,
            }),
        },
        tpot_ms: (b[0] & 4 != 0).then(|| ms(b[2], 0.5)),
        itl_ms: (b[0] & 8 != 0).then(|| ms(b[3], 1.0)),
        e2e_ms: (b[0] & 16 != 0).then(|| ms(b[4], 100.0)),
        queue_ms: (b[0] & 32 != 0).then(|| ms(b[4], 5.0)),
    };
    let mut spec = Spec::single(targets);
    spec.bucket_edges = match b[6] % 3 {
        0 => vec![],
        1 => vec![u64::from(b[7]) * 100 + 1],
        _ => vec![u64::from(b[7]) * 10 + 1, u64::from(b[7]) * 100 + 11],
    };
    spec.classes[0].targets = vec![targets; spec.n_buckets()];
    if b[0] & 64 != 0 {
        // A class read from a label column, before the default class.
        spec.classes.insert(
            0,
            ClassSpec {
                name: "batch".into(),
                description: String::new(),
                rule: ClassRule::Equals {
                    column: "class".into(),
                    value: "batch".into(),
                },
                targets: vec![targets.scaled(2.0); spec.n_buckets()],
            },
        );
    }
    if b[0] & 128 != 0 {
        // No default class: some requests may be claimed by none.
        spec.classes.retain(|c| c.rule != ClassRule::Default);
        if spec.classes.is_empty() {
            spec.classes = Spec::single(targets).classes;
            spec.classes[0].targets = vec![targets; spec.n_buckets()];
        }
    }
    spec.method = Method::ALL[usize::from(b[5]) % Method::ALL.len()];
    spec.percentiles = vec![0.0, 50.0, 90.0, 99.0, 99.9, 100.0];
    spec.objective = (f64::from(b[8]) + 1.0) / 258.0;
    spec.itl_statistic = match b[9] % 3 {
        0 => ItlStatistic::Max,
        _ => ItlStatistic::Percentile {
            q: f64::from(b[9] % 101),
        },
    };
    spec.stall = match b[10] % 3 {
        0 => None,
        1 => Some(StallRule::AbsoluteMs { ms: ms(b[3], 20.0) }),
        _ => Some(StallRule::TimesTpot {
            k: f64::from(b[3] % 20) + 1.0,
        }),
    };
    spec.cancellations = match b[10] / 3 % 3 {
        0 => CancelPolicy::ExcludeUnlessWaitedPastTtft,
        1 => CancelPolicy::Exclude,
        _ => CancelPolicy::CountAsBad,
    };
    spec.min_requests = u64::from(b[11] % 8);
    spec
}

fuzz_target!(|data: &[u8]| {
    let Some((head, log)) = data.split_first_chunk::<SPEC_BYTES>() else {
        return;
    };
    let spec = spec_of(head);
    assert!(spec.validate().is_empty(), "{:?}", spec.validate());
    let options = IngestOptions {
        format: Some(Format::Csv),
        ..IngestOptions::default()
    };
    let loaded = ingest::parse("fuzz.csv", log, &options);
    slo_fuzz::check_loaded("fuzz.csv", &loaded);
    let duration = match head[11] >> 3 {
        0 => Duration::unknown("fuzz"),
        d => Duration::known(f64::from(d), "fuzz"),
    };
    let report = evaluate::report(&loaded.table, &spec, &duration);
    for g in std::iter::once(&report.overall)
        .chain(&report.classes)
        .chain(&report.cells)
    {
        assert!(g.good <= g.attempted, "{g:?}");
        if let Some(a) = g.attainment {
            assert!((0.0..=1.0).contains(&a), "attainment {a}");
        }
        if let Some((lo, hi)) = g.attainment_ci95 {
            assert!(lo <= hi && lo >= 0.0 && hi <= 1.0, "interval {lo}..{hi}");
        }
    }
});
