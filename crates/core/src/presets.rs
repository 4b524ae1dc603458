//! Starting points for a spec: one preset per kind of traffic the guide discusses.
//!
//! Each preset is a complete, valid [`Spec`] that the Targets view (cards) and the CLI can load
//! and then edit. The numbers are the guide's defensible starting points, not truths about any
//! deployment: check them against a load sweep on your own hardware.
//!
//! Class assignment: the preset's main traffic is its default class, so a log without a `class`
//! column is evaluated as that traffic; other traffic is kept apart by a rule on the `class`
//! column (`class = batch`, `class = chat` ...). A class cannot be both a rule and the default, so
//! requests labelled with the main class's own name also reach it through the default.

use crate::quantile::Method;
use crate::spec::{
    CancelPolicy, ClassRule, ClassSpec, ItlStatistic, MeasurementPoints, Spec, Targets, TtftTarget,
    Window, SPEC_VERSION,
};

/// A named starting point for a spec.
#[derive(Clone, Debug, PartialEq)]
pub struct Preset {
    /// Stable identifier (`chat`, `code`, `agents`, `long`), for URLs and `--preset`.
    pub id: &'static str,
    pub title: &'static str,
    /// One or two sentences: what the preset is for and where its numbers come from.
    pub summary: &'static str,
    pub spec: Spec,
}

/// The error-budget policy every preset starts with (edit it to your organisation's).
pub const BUDGET_POLICY: &str = "While a class has error budget left in the window, releases and experiments proceed as planned.\n\nWhen a class has spent more than half of its budget, changes to its serving path (model, engine version, batch and parallelism settings, hardware) need a load sweep showing the objective still holds at peak traffic before they ship.\n\nWhen a class's budget is exhausted (its joint attainment over the window is below the objective), releases that touch its serving path stop, except fixes that restore attainment, until attainment over the window is back above the objective. The on-call engineer opens an incident when a fast-burn alert pages, and any single incident that spends more than 20 % of a window's budget gets a written postmortem with at least one action item.\n\nBudget spent by failures outside the service's control (a client bug, a dependency's outage) still counts; the postmortem says so, and the policy can be waived for it only by the service owner, in writing.";

/// Input-length bucket edges the guide suggests: <2k, 2k–16k, >=16k tokens.
const LENGTH_EDGES: [u64; 2] = [2000, 16000];

fn fixed(ms: f64) -> Option<TtftTarget> {
    Some(TtftTarget::Fixed { ms })
}

/// Chat targets per length bucket: TTFT grows with the prompt (prefill), TPOT stays at 50 ms.
fn chat_targets() -> Vec<Targets> {
    [500.0, 2500.0, 10000.0]
        .into_iter()
        .map(|ttft| Targets {
            ttft: fixed(ttft),
            tpot_ms: Some(50.0),
            ..Targets::default()
        })
        .collect()
}

fn equals(value: &str) -> ClassRule {
    ClassRule::Equals {
        column: "class".to_string(),
        value: value.to_string(),
    }
}

fn base(service: &str, classes: Vec<ClassSpec>, bucket_edges: Vec<u64>) -> Spec {
    Spec {
        version: SPEC_VERSION,
        service: service.to_string(),
        classes,
        bucket_edges,
        method: Method::Linear,
        percentiles: vec![50.0, 90.0, 99.0],
        objective: 0.99,
        window: Window::Rolling { days: 28 },
        measurement: MeasurementPoints::default(),
        itl_statistic: ItlStatistic::Max,
        stall: None,
        cancellations: CancelPolicy::ExcludeUnlessWaitedPastTtft,
        min_requests: 1000,
        expected_requests_per_window: None,
        budget_policy: BUDGET_POLICY.to_string(),
    }
}

fn chat() -> Preset {
    let classes = vec![
        ClassSpec {
            name: "chat".to_string(),
            description: "Interactive chat: a person reads the answer as it streams. Requests with class = chat, and every request no other class claims.".to_string(),
            rule: ClassRule::Default,
            targets: chat_targets(),
        },
        ClassSpec {
            name: "batch".to_string(),
            description: "Offline jobs labelled class = batch, kept apart so that their long prompts cannot spend the chat budget. Nobody watches the stream: only end-to-end latency matters.".to_string(),
            rule: equals("batch"),
            targets: vec![
                Targets {
                    e2e_ms: Some(600_000.0),
                    ..Targets::default()
                };
                3
            ],
        },
    ];
    Preset {
        id: "chat",
        title: "Interactive chat",
        summary: "TPOT 50 ms (20 tokens/s, ahead of a 4–7 tokens/s reader); TTFT 500 ms for prompts under 2k tokens, 2.5 s up to 16k and 10 s beyond, since prefill grows with the prompt. Batch traffic has its own class.",
        spec: base("Chat assistant", classes, LENGTH_EDGES.to_vec()),
    }
}

fn code() -> Preset {
    let classes = vec![
        ClassSpec {
            name: "completion".to_string(),
            description: "Inline code completions: short outputs that are useless once the user has typed past them. Requests with class = completion, and every request no other class claims.".to_string(),
            rule: ClassRule::Default,
            targets: vec![Targets {
                e2e_ms: Some(800.0),
                ..Targets::default()
            }],
        },
        ClassSpec {
            name: "chat".to_string(),
            description: "The assistant's chat panel, labelled class = chat: streamed answers a person reads.".to_string(),
            rule: equals("chat"),
            targets: vec![Targets {
                ttft: fixed(1000.0),
                tpot_ms: Some(50.0),
                ..Targets::default()
            }],
        },
    ];
    Preset {
        id: "code",
        title: "Code completion",
        summary: "A tight end-to-end target (800 ms) for short completions and no TPOT target, because the whole suggestion must arrive before the user types on; the chat panel keeps chat-style targets.",
        spec: base("Code assistant", classes, Vec::new()),
    }
}

fn agents() -> Preset {
    let classes = vec![
        ClassSpec {
            name: "agent".to_string(),
            description: "Agent steps labelled class = agent: a program, not a person, reads the output, so end-to-end latency is the indicator and TTFT is loose.".to_string(),
            rule: equals("agent"),
            targets: [5000.0, 10000.0, 30000.0]
                .into_iter()
                .map(|ttft| Targets {
                    ttft: fixed(ttft),
                    e2e_ms: Some(60_000.0),
                    ..Targets::default()
                })
                .collect(),
        },
        ClassSpec {
            name: "batch".to_string(),
            description: "Offline jobs labelled class = batch: only end-to-end latency matters.".to_string(),
            rule: equals("batch"),
            targets: vec![
                Targets {
                    e2e_ms: Some(600_000.0),
                    ..Targets::default()
                };
                3
            ],
        },
        ClassSpec {
            name: "interactive".to_string(),
            description: "Everything else is treated as interactive and keeps chat targets, so that agent and batch traffic cannot consume its budget.".to_string(),
            rule: ClassRule::Default,
            targets: chat_targets(),
        },
    ];
    Preset {
        id: "agents",
        title: "Agents and batch",
        summary: "No one watches these streams: end-to-end latency (60 s per agent step, 10 min per batch request) with loose TTFT for agents. Both are separate classes so they cannot consume the interactive budget.",
        spec: base("Agent platform", classes, LENGTH_EDGES.to_vec()),
    }
}

fn long() -> Preset {
    let per_token = TtftTarget::PerToken {
        base_ms: 500.0,
        per_token_ms: 0.2,
    };
    let classes = vec![
        ClassSpec {
            name: "long_context".to_string(),
            description: "Retrieval and document questions with long prompts. TTFT may grow with the prompt: 500 ms of queueing and scheduling plus 0.2 ms per input token (a prefill rate of 5,000 tokens/s). Requests with class = long_context, and every request no other class claims.".to_string(),
            rule: ClassRule::Default,
            targets: [50.0, 50.0, 75.0]
                .into_iter()
                .map(|tpot| Targets {
                    ttft: Some(per_token),
                    tpot_ms: Some(tpot),
                    ..Targets::default()
                })
                .collect(),
        },
        ClassSpec {
            name: "chat".to_string(),
            description: "Chat labelled class = chat, with a fixed TTFT target per input-length bucket instead of a per-token allowance.".to_string(),
            rule: equals("chat"),
            targets: chat_targets(),
        },
    ];
    Preset {
        id: "long",
        title: "Long prompts",
        summary: "Prefill time grows with prompt length, so one TTFT target fails long prompts or is too loose for short ones: TTFT = 500 ms + 0.2 ms per input token, and TPOT relaxed to 75 ms beyond 16k tokens, where decoding attends over a long KV cache. A chat class shows the per-bucket alternative.",
        spec: base("Document assistant", classes, LENGTH_EDGES.to_vec()),
    }
}

/// Every preset, in the order the Targets view shows them.
///
/// # Example
/// ```
/// let presets = slo_core::presets::presets();
/// assert_eq!(presets[0].id, "chat");
/// assert!(presets.iter().all(|p| p.spec.validate().is_empty()));
/// ```
pub fn presets() -> Vec<Preset> {
    vec![chat(), code(), agents(), long()]
}

/// The preset with this id, if any.
pub fn preset(id: &str) -> Option<Preset> {
    presets().into_iter().find(|p| p.id == id.trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_validates() {
        for p in presets() {
            assert_eq!(p.spec.validate(), Vec::new(), "preset {}", p.id);
        }
    }

    #[test]
    fn every_preset_round_trips_through_json() {
        for p in presets() {
            let back = Spec::from_json(&p.spec.to_json()).expect(p.id);
            assert_eq!(back, p.spec, "preset {}", p.id);
        }
    }

    #[test]
    fn ids_are_unique_and_found() {
        let ps = presets();
        for (k, p) in ps.iter().enumerate() {
            assert!(ps[..k].iter().all(|o| o.id != p.id), "{} twice", p.id);
            assert_eq!(preset(p.id).map(|q| q.id), Some(p.id));
        }
        assert_eq!(preset("nope"), None);
    }

    #[test]
    fn presets_follow_the_guide() {
        let chat = preset("chat").expect("chat");
        let c = &chat.spec.classes[0];
        assert!(c.targets.iter().all(|t| t.tpot_ms == Some(50.0)));
        assert_eq!(chat.spec.bucket_edges, vec![2000, 16000]);
        let code = preset("code").expect("code");
        assert_eq!(code.spec.classes[0].targets[0].tpot_ms, None);
        assert!(code.spec.classes[0].targets[0].e2e_ms.is_some());
        let long = preset("long").expect("long");
        assert!(matches!(
            long.spec.classes[0].targets[0].ttft,
            Some(TtftTarget::PerToken { .. })
        ));
        for p in presets() {
            assert!(!p.spec.budget_policy.is_empty());
            assert_eq!(
                p.spec
                    .classes
                    .iter()
                    .filter(|c| c.rule == ClassRule::Default)
                    .count(),
                1,
                "{}: one default class",
                p.id
            );
        }
    }
}
