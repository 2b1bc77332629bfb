//! `--events FILE` (issue 30): one JSON object a line, appended, for
//! programs: each line an [`Event`], tagged by `event`, with that event's
//! own fields (published: `monform schema --output reconcile-events`).

use std::path::PathBuf;

use crate::report::{Drifted, now};

/// `--events FILE`: one JSON object a line, appended.
pub struct Events {
    path: Option<PathBuf>,
}

impl Events {
    pub fn new(path: Option<PathBuf>) -> Events {
        Events { path }
    }

    /// Appends `{"time", "event", ...its fields}`; a failure to write is
    /// returned for the log, never fatal.
    pub fn emit(&self, event: Event) -> Result<(), String> {
        use std::io::Write;
        let Some(path) = &self.path else { return Ok(()) };
        let line = EventLine { time: now(), event };
        let mut text = serde_json::to_string(&line).map_err(|e| e.to_string())?;
        text.push('\n');
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        file.write_all(text.as_bytes())
            .map_err(|e| format!("{}: {e}", path.display()))
    }
}

/// One line of the events file (`--events FILE`, JSON lines): when, and
/// what happened by `event`, with that event's fields.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
#[schemars(rename = "ReconcileEvent")]
pub struct EventLine {
    /// RFC 3339, UTC.
    pub time: String,
    #[serde(flatten)]
    pub event: Event,
}

/// What an event line reports, by `event`: a closed list, so a consumer
/// can match on it, each with its own fields. A failure's `message` says
/// what failed in words, `error` why.
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
#[serde(tag = "event", rename_all = "snake_case")]
#[schemars(rename = "ReconcileEventKind")]
pub enum Event {
    /// The files, their policies or the settings do not load: the interval changed nothing.
    LoadFailed { message: String, error: String },
    /// Refused (a safety guard, the policies, a clash): nothing was changed.
    Refused { message: String, error: String },
    /// One change the interval's plan found, and what the drift policy does with it.
    Change {
        address: String,
        action: monform_engine::Action,
        origin: crate::policy::Origin,
        /// The drift policy that decided.
        policy: String,
        verdict: crate::policy::Verdict,
    },
    /// Drift a `revert` policy undid: what the service had, what the files restored.
    Reverted { reverted: Vec<Drifted> },
    /// A report (drift, revert, SLO alert) not delivered or not recorded: told again next interval.
    ReportFailed { message: String, error: String },
    /// New drift, reported (as the WEBHOOK body's `drifted`).
    Drift { drifted: Vec<Drifted> },
    /// Drift reported before and no longer found: the addresses.
    InSync { resolved: Vec<String> },
    /// Drift of policy `codify` committed to a new git branch.
    Codified { branch: String, addresses: Vec<String> },
    /// Drift of policy `codify` not written: reported only.
    CodifyFailed { error: String, addresses: Vec<String> },
    /// The SLOs could not be evaluated.
    SloFailed { message: String, error: String },
    /// A burn-rate alert pair started or ended: the WEBHOOK body sent.
    SloAlert {
        notice: Box<crate::slo_alerts::BurnRateNotice>,
    },
    /// A change applied (and verified).
    Applied {
        address: String,
        action: monform_engine::Action,
    },
    /// A change that failed.
    ApplyFailed {
        address: String,
        action: monform_engine::Action,
        error: String,
    },
    /// The project's Rego policies on the interval's apply: every finding.
    Policy {
        /// A `deny` finding blocks the apply.
        blocks: bool,
        findings: Vec<PolicyFinding>,
    },
    /// The service could not be read: nothing was changed; the next intervals wait longer.
    ApiError { message: String, error: String },
}

/// A finding of the project's policies.
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct PolicyFinding {
    /// The rule's code.
    pub rule: String,
    /// `error` (it blocks) or `warning`.
    pub severity: String,
    /// `FILE:LINE:COLUMN` of the field found; null without a place.
    pub at: Option<String>,
    pub message: String,
}

/// The events of a failure, by what failed (see [`Event`]).
impl Event {
    pub fn load_failed(message: String, error: String) -> Event {
        Event::LoadFailed { message, error }
    }

    pub fn refused(message: String, error: String) -> Event {
        Event::Refused { message, error }
    }

    pub fn report_failed(message: String, error: String) -> Event {
        Event::ReportFailed { message, error }
    }

    pub fn slo_failed(message: String, error: String) -> Event {
        Event::SloFailed { message, error }
    }

    pub fn api_error(message: String, error: String) -> Event {
        Event::ApiError { message, error }
    }
}
