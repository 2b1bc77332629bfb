//! The reconciler's log on standard error: `text` (a line a person reads)
//! or `json` (one object a line, for log shippers: `--log-format json`).
//! Each line is one [`Message`]: its `kind` and typed fields are what a
//! program reads; the words are for people and may change.

use monform_engine::Action;
use serde_json::Value;

use crate::policy::{Origin, Verdict};

/// One line of `--log-format json` (published: `monform schema --output
/// reconcile`): when, how bad, what in words, and the message's `kind`
/// with that kind's fields.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
#[schemars(rename = "ReconcileLogLine")]
pub struct LogLine {
    /// RFC 3339, UTC.
    pub time: String,
    pub level: Level,
    /// What happened, in words (the text format's line); match on `kind`, not on these.
    pub message: String,
    #[serde(flatten)]
    pub about: Message,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Info,
    Warn,
    Error,
}

/// What a log line is about, by `kind`, with that kind's own fields: a
/// closed list, so a program can match on it.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[schemars(rename = "ReconcileLogMessage")]
pub enum Message {
    /// Serving `/metrics`, `/healthz` and `/readyz` (`--listen`).
    Serving {
        /// The address bound.
        listen: String,
    },
    /// This process leads the project's reconciliation.
    Leading { project: String },
    /// Another reconciler of the project leads: this one waits (with
    /// `--once`, an error: it exits 1).
    NotLeading { project: String },
    /// The leadership was lost; waiting to lead again.
    LeadershipLost,
    /// Stopped by SIGTERM or SIGINT, the changes in flight finished.
    Stopped,
    /// Something failed (`message` says what: the files, the service, a
    /// refusal, a report not delivered...); the interval changed nothing
    /// unless `message` says otherwise.
    Failed { error: String },
    /// One change the interval's plan found, and what the drift policy
    /// does with it.
    Change {
        address: String,
        action: Action,
        origin: Origin,
        /// The drift policy that decided (`lifecycle.drift` or `[reconcile] drift`).
        policy: String,
        verdict: Verdict,
    },
    /// Changed outside monform and reverted to the files (a `revert` policy).
    Reverted { addresses: Vec<String> },
    /// New drift, reported to the `[reconcile] notify` channels.
    Drift { addresses: Vec<String> },
    /// Drift reported before and no longer found.
    InSync { addresses: Vec<String> },
    /// Drift of policy `codify` committed to a new git branch.
    Codified { branch: String, addresses: Vec<String> },
    /// Drift of policy `codify` that needs a hand edit: reported only.
    CodifyHandEdit { addresses: Vec<String> },
    /// Drift of policy `codify` not written (git or the files refused): reported only.
    CodifyFailed { error: String },
    /// The SLO verdicts' cache `monform gate` reads was not written (a
    /// gate reads the results itself then).
    SloCacheFailed {
        /// The cache, relative to the project's folder.
        file: String,
        error: String,
    },
    /// A burn-rate alert pair of an SLO started (`firing`, a warning) or ended (`resolved`).
    SloAlert {
        /// `slos.NAME`.
        address: String,
        /// The pair, e.g. `page` (1h/5m at 14.4).
        pair: String,
        /// `firing` or `resolved`.
        state: String,
    },
    /// Another apply holds the project's lock: tried again next interval.
    Locked {
        /// Who holds it, in words.
        lock: String,
    },
    /// A change applied (and verified).
    Applied { address: String, action: Action },
    /// A change that failed.
    ApplyFailed { address: String, error: String },
    /// A finding of the project's Rego policies on the interval's apply
    /// (level `error`: it blocks the apply). Past a few of one rule, one
    /// line counts the rest (`more`); the `policy` event lists each.
    Policy {
        /// The rule's code.
        rule: String,
        /// `FILE:LINE:COLUMN` of the field found; absent on a count.
        #[serde(skip_serializing_if = "Option::is_none")]
        at: Option<String>,
        /// How many more of this rule this line stands for; absent on a finding.
        #[serde(skip_serializing_if = "Option::is_none")]
        more: Option<usize>,
    },
    /// A rolling refresh's sweep spread over intervals finished: every
    /// object read.
    Sweep {
        /// How long the sweep took.
        seconds: f64,
        /// Requests it sent.
        requests: u64,
        /// The share of the key's rate limit used, e.g. `24.8%`.
        share: String,
        /// The key's rate limit, e.g. `600/60s`.
        rate_limit: String,
        /// Times the reads yielded to the key's other clients.
        yields: u64,
    },
}

impl Message {
    /// The fields the text format shows after the words, in order: those
    /// the words do not already say.
    fn text_fields(&self) -> Vec<(String, String)> {
        if matches!(self, Message::Change { .. } | Message::SloAlert { .. }) {
            return Vec::new();
        }
        let Ok(Value::Object(fields)) = serde_json::to_value(self) else {
            return Vec::new();
        };
        fields
            .into_iter()
            .filter(|(name, _)| name != "kind")
            .map(|(name, value)| (name, plain(&value)))
            .collect()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogFormat {
    #[default]
    Text,
    Json,
}

#[derive(Debug, Clone, Copy)]
pub struct Log {
    pub format: LogFormat,
}

impl Log {
    pub fn info(&self, message: &str, about: Message) {
        self.line(Level::Info, message, about);
    }

    pub fn warn(&self, message: &str, about: Message) {
        self.line(Level::Warn, message, about);
    }

    pub fn error(&self, message: &str, about: Message) {
        self.line(Level::Error, message, about);
    }

    fn line(&self, level: Level, message: &str, about: Message) {
        match self.format {
            LogFormat::Json => {
                let line = LogLine {
                    time: crate::report::now(),
                    level,
                    message: message.to_owned(),
                    about,
                };
                eprintln!("{}", serde_json::to_string(&line).unwrap_or_default());
            }
            LogFormat::Text => {
                let fields = about.text_fields();
                let extra = match fields.is_empty() {
                    true => String::new(),
                    false => {
                        let parts: Vec<String> = fields.iter().map(|(k, v)| format!("{k}={v}")).collect();
                        format!(" ({})", parts.join(", "))
                    }
                };
                let prefix = match level {
                    Level::Info => "",
                    Level::Warn => "warn: ",
                    Level::Error => "error: ",
                };
                eprintln!("{prefix}{message}{extra}");
            }
        }
    }
}

/// A field's value as the text format shows it: a list as `a, b`.
fn plain(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Array(items) => items.iter().map(plain).collect::<Vec<_>>().join(", "),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_format_shows_the_fields_the_words_do_not_say() {
        let drift = Message::Drift {
            addresses: vec!["checks.a".into(), "checks.b".into()],
        };
        assert_eq!(
            drift.text_fields(),
            [("addresses".to_owned(), "checks.a, checks.b".to_owned())]
        );
        let alert = Message::SloAlert {
            address: "slos.up".into(),
            pair: "page".into(),
            state: "firing".into(),
        };
        assert!(alert.text_fields().is_empty());
        assert!(Message::Stopped.text_fields().is_empty());
    }

    #[test]
    fn a_json_line_carries_the_kind_and_its_fields() {
        let line = LogLine {
            time: "t".into(),
            level: Level::Info,
            message: "applied".into(),
            about: Message::Applied {
                address: "checks.a".into(),
                action: Action::Update,
            },
        };
        assert_eq!(
            serde_json::to_value(&line).unwrap(),
            serde_json::json!({"time": "t", "level": "info", "message": "applied",
                "kind": "applied", "address": "checks.a", "action": "update"})
        );
    }
}
