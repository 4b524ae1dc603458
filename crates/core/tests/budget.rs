//! Error budget and burn-rate alerts over a synthetic 28-day log with a known incident, and the
//! queue-vs-TTFT diagnosis on synthetic incidents.
//!
//! The 28-day log (hand-checked): one request every 30 s from an aligned epoch T0 (80 640
//! requests, 2 a minute), TTFT target 500 ms, objective 99 % (budget 806.4 bad requests).
//! - Incident: day 10, 12:00 to 14:00, every request slow (240 bad): burn rate 100.
//! - From day 15, every 1000th request is an error: i = 44 000, 45 000 ... 80 000, 37 errors.
//! - In the last hour, every 10th request is slow: 12 of 120, burn rate 10 (the "current" burn).
//! - 10 cancellations after 100 ms (excluded: they did not wait past the TTFT target).
//!
//! Alerts, evaluated at the end of every minute m after the incident start S / end E:
//! - page 1 h / 5 m, > 14.4: the 1 h window has m of 60 minutes bad, burn 100·m/60 > 14.4 from
//!   m = 9; after E, the 5 m window has 5 - m bad minutes, burn > 14.4 until m = 4: [S+9m, E+5m).
//! - page 6 h / 30 m, > 6: 100·m/360 > 6 from m = 22; after E, 100·(30-m)/30 > 6 until m = 28:
//!   [S+22m, E+29m).
//! - ticket 3 d / 6 h, > 1: 100·m/4320 > 1 from m = 44; after E the 6 h window keeps
//!   min(120, 360-m) bad minutes, 100·that/360 > 1 until m = 356: [S+44m, E+357m).

use slo_core::budget::{
    budget, diagnose, error_budget, events, BudgetConfig, BudgetError, DiagnosisConfig, Event,
    PrefillCause, Severity, SliceVerdict, VolumeSource,
};
use slo_core::spec::{Spec, Targets, TtftTarget};
use slo_core::table::{RequestTable, Row, Status};

const T0: f64 = 1_699_920_000.0; // 2023-11-14 00:00 UTC, a whole day
const DAY: f64 = 86_400.0;
const MIN: f64 = 60.0;
const N: u32 = 80_640;

fn close(got: f64, want: f64) -> bool {
    (got - want).abs() <= 1e-9 * want.abs().max(1.0)
}

fn incident_start() -> f64 {
    T0 + 10.0 * DAY + 12.0 * 3600.0
}

fn incident_end() -> f64 {
    incident_start() + 7200.0
}

fn month_log() -> RequestTable {
    let mut t = RequestTable::default();
    for i in 0..N {
        let start = T0 + 30.0 * f64::from(i);
        let error = i % 1000 == 0 && start >= T0 + 15.0 * DAY;
        let slow =
            (start >= incident_start() && start < incident_end()) || (i >= N - 120 && i % 10 == 0);
        let row = Row {
            start_s: Some(start),
            status: if error { Status::Error } else { Status::Ok },
            ttft_ms: (!error).then_some(if slow { 2000.0 } else { 200.0 }),
            e2e_ms: (!error).then_some(3000.0),
            output_tokens: Some(50.0),
            ..Row::default()
        };
        t.push(row, 0, i + 2, "month.csv");
    }
    for k in 0..10 {
        let row = Row {
            start_s: Some(T0 + 20.0 * DAY + 7.0 * f64::from(k)),
            status: Status::Cancelled,
            e2e_ms: Some(100.0),
            ..Row::default()
        };
        t.push(row, 0, N + 2 + k, "month.csv");
    }
    t
}

fn chat_spec() -> Spec {
    Spec::single(Targets {
        ttft: Some(TtftTarget::Fixed { ms: 500.0 }),
        ..Targets::default()
    })
}

#[test]
fn month_with_an_incident_budget_consumed_and_burn() {
    let e = events(&month_log(), &chat_spec());
    assert_eq!(e.events.len(), N as usize);
    assert_eq!((e.excluded, e.unassigned, e.no_timestamp), (10, 0, 0));
    let r = budget(&e.events, &BudgetConfig::new(0.99, 28.0)).expect("valid config");
    assert_eq!((r.attempted, r.bad), (80_640, 240 + 37 + 12));
    assert_eq!(r.volume_source, Some(VolumeSource::Log));
    assert_eq!(r.covered_s, 28.0 * DAY);
    assert!(close(r.allowed_bad_requests.unwrap(), 806.4));
    assert!(close(r.consumed.unwrap(), 289.0 / 806.4));
    assert!(close(r.remaining.unwrap(), 1.0 - 289.0 / 806.4));
    assert!(close(r.remaining_requests.unwrap(), 806.4 - 289.0));
    // Peak: the first incident hour, 120 of 120 bad.
    let peak = r.peak.clone().unwrap();
    assert_eq!(
        (peak.start_s, peak.attempted, peak.bad),
        (incident_start(), 120, 120)
    );
    assert!(close(peak.burn_rate, 100.0));
    assert_eq!(r.slices.len(), 28 * 24);
    let burns: Vec<f64> = r.slices.iter().filter_map(|s| s.burn_rate).collect();
    assert_eq!(burns.iter().filter(|b| **b > 99.0).count(), 2);
    // Current burn: the last hour, 12 of 120 bad; the rest of the budget lasts
    // remaining · 28 d / 10 = 517.4 bad requests at 1 per 300 s.
    assert!(close(r.current_burn.unwrap(), 10.0));
    assert!(close(r.time_to_exhaustion_s.unwrap(), 517.4 * 300.0));
    // Burn-down: one point per hourly slice; it ends where the budget stands (1 - 289 / 806.4)
    // and drops by 120 / 806.4 across the first incident hour.
    let down = slo_core::budget::burn_down(&r);
    assert_eq!(down.len(), 28 * 24);
    assert!(close(down.last().unwrap().1, 1.0 - 289.0 / 806.4));
    let k = r
        .slices
        .iter()
        .position(|s| s.start_s == incident_start())
        .unwrap();
    assert!(close(down[k - 1].1 - down[k].1, 120.0 / 806.4));
}

#[test]
fn month_with_an_incident_alerts_fire_when_the_workbook_says() {
    let e = events(&month_log(), &chat_spec());
    let r = budget(&e.events, &BudgetConfig::new(0.99, 28.0)).expect("valid config");
    let (s, end) = (incident_start(), incident_end());
    let want = [
        (Severity::Page, 14.4, s + 9.0 * MIN, end + 5.0 * MIN),
        (Severity::Page, 6.0, s + 22.0 * MIN, end + 29.0 * MIN),
        (Severity::Ticket, 1.0, s + 44.0 * MIN, end + 357.0 * MIN),
    ];
    assert_eq!(r.alerts.len(), 3);
    for (h, (severity, rate, from, to)) in r.alerts.iter().zip(want) {
        assert_eq!((h.alert.severity, h.alert.burn_rate), (severity, rate));
        assert_eq!(h.first_fired_s, Some(from), "{}", h.alert.name);
        assert_eq!(h.intervals.len(), 1, "{}: {:?}", h.alert.name, h.intervals);
        assert_eq!(
            (h.intervals[0].start_s, h.intervals[0].end_s),
            (from, to),
            "{}",
            h.alert.name
        );
        assert!(!h.intervals[0].ongoing);
    }
    // 14.4 over 1 h of a 28-day window is 2.14 % of its budget (the workbook's 2 % is for 30 days).
    assert!(close(
        r.alerts[0].budget_fraction_for_window,
        14.4 / (28.0 * 24.0)
    ));
}

#[test]
fn typed_volume_and_a_short_log_extrapolate() {
    // Two days of one request a minute, 1 % bad everywhere (burn 1), in a 28-day window.
    let ev: Vec<Event> = (0..2880)
        .map(|i| Event {
            t_s: T0 + f64::from(i) * MIN,
            good: i % 100 != 0,
        })
        .collect();
    let r = budget(&ev, &BudgetConfig::new(0.99, 28.0)).unwrap();
    assert_eq!(
        r.volume_source,
        Some(VolumeSource::Extrapolated {
            covered_s: 2.0 * DAY
        })
    );
    assert!(close(r.volume.unwrap(), 2880.0 * 14.0));
    assert!(close(r.consumed.unwrap(), 29.0 / (2880.0 * 14.0 * 0.01)));
    assert!(r.notes.iter().any(|n| n.contains("extrapolated")));
    let mut config = BudgetConfig::new(0.99, 28.0);
    config.volume = Some(1_000_000.0);
    let typed = budget(&ev, &config).unwrap();
    assert_eq!(typed.volume_source, Some(VolumeSource::Typed));
    assert!(close(typed.allowed_bad_requests.unwrap(), 10_000.0));
    assert!(close(typed.consumed.unwrap(), 29.0 / 10_000.0));
    let b = error_budget(0.999, Some(2e6)).unwrap();
    assert!(close(b.allowed_bad_requests.unwrap(), 2000.0));
}

#[test]
fn empty_logs_and_bad_settings() {
    let r = budget(&[], &BudgetConfig::new(0.99, 28.0)).unwrap();
    assert_eq!(
        (r.attempted, r.consumed, r.peak.clone(), r.current_burn),
        (0, None, None, None)
    );
    assert!(r.alerts.iter().all(|a| a.first_fired_s.is_none()));
    let check = |edit: fn(&mut BudgetConfig), want: &str| {
        let mut c = BudgetConfig::new(0.99, 28.0);
        edit(&mut c);
        let err = budget(&[], &c).expect_err("invalid");
        assert!(err.to_string().contains(want), "{err}");
    };
    check(|c| c.objective = 1.0, "strictly between 0 and 1");
    check(|c| c.window_days = 0.0, "window");
    check(|c| c.volume = Some(-3.0), "positive number of requests");
    check(|c| c.slice_s = 0.0, "at least 1 second");
    check(|c| c.alerts[0].short_s = 7200.0, "short window shorter");
    let ev = [
        Event {
            t_s: 0.0,
            good: true,
        },
        Event {
            t_s: 20.0 * DAY,
            good: false,
        },
    ];
    let mut c = BudgetConfig::new(0.99, 28.0);
    c.slice_s = 1.0;
    assert_eq!(
        budget(&ev, &c).map(|_| ()),
        Err(BudgetError::TooManySlices {
            slices: 1_728_001.0
        })
    );
}

#[test]
fn requests_before_the_window_are_left_out() {
    let ev: Vec<Event> = (0..40)
        .map(|d| Event {
            t_s: T0 + f64::from(d) * DAY,
            good: d >= 5,
        })
        .collect();
    let r = budget(&ev, &BudgetConfig::new(0.99, 28.0)).unwrap();
    // Day 39 ends the window; days 12..=39 are inside, the 5 bad days are not.
    assert_eq!((r.attempted, r.bad, r.before_window), (28, 0, 12));
}

/// One hour of synthetic traffic: `n` requests with queue time, input tokens and prefill ms per token.
fn hour(t: &mut RequestTable, h: u32, n: u32, queue_ms: f64, tokens: f64, ms_per_token: f64) {
    for k in 0..n {
        let jitter = f64::from((k * 37 + h * 11) % 21) - 10.0; // -10..=10, deterministic
        let input = tokens + jitter * 5.0;
        let queue = queue_ms + jitter;
        let row = Row {
            start_s: Some(T0 + f64::from(h) * 3600.0 + f64::from(k) * 3600.0 / f64::from(n)),
            ttft_ms: Some(150.0 + queue + input * ms_per_token),
            queue_ms: Some(queue),
            input_tokens: Some(input),
            ..Row::default()
        };
        let line = t.len() as u32 + 2;
        t.push(row, 0, line, "diag.csv");
    }
}

#[test]
fn diagnosis_tells_capacity_from_prefill() {
    let mut t = RequestTable::default();
    for h in 0..48 {
        match h {
            // Short of capacity: requests wait 600 ms more in the queue.
            10..=12 => hour(&mut t, h, 63, 620.0, 1000.0, 0.1),
            // Prefill: prompts four times longer, queue flat.
            30..=31 => hour(&mut t, h, 63, 20.0, 4000.0, 0.1),
            // Prefill: same prompts, five times slower per token (prefix cache misses).
            40..=41 => hour(&mut t, h, 63, 20.0, 1000.0, 0.5),
            _ => hour(&mut t, h, 63, 20.0, 1000.0, 0.1),
        }
    }
    hour(&mut t, 50, 5, 900.0, 1000.0, 0.1); // too few to judge
    let d = diagnose(&t, &DiagnosisConfig::default()).expect("has queue times");
    assert!(
        close(d.baseline_ttft_ms.unwrap(), 270.0),
        "{:?}",
        d.baseline_ttft_ms
    );
    assert!(close(d.baseline_queue_ms.unwrap(), 20.0));
    assert!(close(d.baseline_input_tokens.unwrap(), 1000.0));
    let at = |h: u32| T0 + f64::from(h) * 3600.0;
    let got: Vec<(f64, f64, SliceVerdict)> = d
        .incidents
        .iter()
        .map(|i| (i.start_s, i.end_s, i.verdict))
        .collect();
    assert_eq!(
        got,
        [
            (at(10), at(13), SliceVerdict::ShortOfCapacity),
            (
                at(30),
                at(32),
                SliceVerdict::PrefillSlower(PrefillCause::LongerPrompts)
            ),
            (
                at(40),
                at(42),
                SliceVerdict::PrefillSlower(PrefillCause::PrefixCacheProbablyDropped)
            ),
        ]
    );
    let last = d.slices.last().unwrap();
    assert_eq!(
        (last.start_s, last.n, last.verdict),
        (at(50), 5, SliceVerdict::TooFewRequests)
    );
    assert_eq!(
        d.slices
            .iter()
            .filter(|s| s.verdict == SliceVerdict::Normal)
            .count(),
        41
    );
    let capacity = &d.incidents[0];
    assert!(close(capacity.peak_ttft_ms, 870.0), "{capacity:?}");
}

#[test]
fn diagnosis_needs_queue_times() {
    let mut t = RequestTable::default();
    t.push(
        Row {
            start_s: Some(T0),
            ttft_ms: Some(100.0),
            ..Row::default()
        },
        0,
        2,
        "x",
    );
    assert_eq!(
        diagnose(&t, &DiagnosisConfig::default()),
        Err(BudgetError::NoQueueTimes)
    );
}

#[test]
fn a_burn_exactly_at_a_threshold_does_not_fire() {
    // Three days, a request a minute, every tenth one bad: burn exactly 1 everywhere at
    // objective 0.9 (10 % allowed), which floating point computes as 1.0000000000000002.
    let events: Vec<Event> = (0..3 * 1440)
        .map(|i| Event {
            t_s: T0 + f64::from(i) * MIN,
            good: i % 10 != 9,
        })
        .collect();
    let r = budget(&events, &BudgetConfig::new(0.9, 28.0)).expect("a budget");
    assert_eq!((r.attempted, r.bad), (4320, 432));
    assert!(
        r.alerts.iter().all(|a| a.intervals.is_empty()),
        "{:?}",
        r.alerts
    );
    assert!(r.slices.iter().all(|s| !s.over_budget()));
    // One more bad request in a slice is above the budget's pace.
    let mut more = events.clone();
    more[0].good = false;
    let r = budget(&more, &BudgetConfig::new(0.9, 28.0)).expect("a budget");
    assert!(r.slices.first().is_some_and(|s| s.over_budget()));
}
