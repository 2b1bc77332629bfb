//! The emulator's mail delivery (issue 50): it sends no real mail; an
//! EMAIL message is delivered into the account's mailbox (record kind
//! [`MAILBOX`]), where a test reads it back (`GET /-/mailbox`), as it
//! reads a webhook's request at its receiver. Two senders: a check's alert
//! to an EMAIL channel ([`super::plan`]: the notification is recorded as
//! SUCCESS, the message says which alert) and a client's message for an
//! EMAIL channel (`POST /-/mailbox`: the reconciler's SLO burn-rate alerts).
//!
//! Choices: a recipient must look like an address (`local@domain`, no
//! spaces or angle brackets, at most 254 bytes); the subject is one line of
//! at most 200 characters and the text at most 64 KiB; a message keeps the
//! EMAIL channel's id when the sender names one.

use rusqlite::Connection;
use serde_json::{Value, json};

use crate::clock::iso;
use crate::ids;
use crate::store::Objects;

/// Record kind: delivered mail.
pub const MAILBOX: &str = "mailbox";

const SUBJECT_LIMIT: usize = 200;
const TEXT_LIMIT: usize = 64 * 1024;

/// One message to deliver.
#[derive(Debug, Clone)]
pub struct Mail<'a> {
    pub to: &'a str,
    pub subject: &'a str,
    pub text: &'a str,
    /// Who sent it: `alert` (a check's alert) or `api` (`POST /-/mailbox`).
    pub source: &'a str,
    /// The EMAIL channel it was sent for (its id as the API writes it), or null.
    pub channel_id: Value,
}

/// Why a message cannot be delivered: the field and the problem.
pub fn problem(mail: &Mail<'_>) -> Option<(&'static str, String)> {
    let to = mail.to;
    let valid = to.len() <= 254
        && !to
            .chars()
            .any(|c| c.is_whitespace() || c == '<' || c == '>' || c == ',')
        && to
            .split_once('@')
            .is_some_and(|(local, domain)| !local.is_empty() && domain.contains('.') && !domain.contains('@'));
    if !valid {
        return Some(("to", format!("`{to}` is not an email address")));
    }
    if mail.subject.is_empty() || mail.subject.contains(['\r', '\n']) || mail.subject.chars().count() > SUBJECT_LIMIT {
        return Some((
            "subject",
            format!("must be one line of 1 to {SUBJECT_LIMIT} characters"),
        ));
    }
    if mail.text.len() > TEXT_LIMIT {
        return Some(("text", format!("at most {TEXT_LIMIT} bytes")));
    }
    None
}

/// Delivers `mail` into `account`'s mailbox at `at`; the stored message.
/// The caller has checked it ([`problem`]).
pub fn deliver(db: &Connection, account: &str, mail: &Mail<'_>, at: i64) -> rusqlite::Result<Value> {
    let id = ids::new();
    let message = json!({
        "id": id,
        "to": mail.to,
        "subject": mail.subject,
        "text": mail.text,
        "source": mail.source,
        "alertChannelId": mail.channel_id.clone(),
        "deliveredAt": iso(at),
    });
    db.insert(account, MAILBOX, &id, None, at, &message)?;
    Ok(message)
}

/// The account's delivered messages, oldest first.
pub fn messages(db: &Connection, account: &str) -> rusqlite::Result<Vec<Value>> {
    Ok(db.all(account, MAILBOX)?.into_iter().map(|row| row.body).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mail<'a>(to: &'a str, subject: &'a str) -> Mail<'a> {
        Mail {
            to,
            subject,
            text: "",
            source: "api",
            channel_id: Value::Null,
        }
    }

    #[test]
    fn addresses_and_subjects_are_checked() {
        assert_eq!(problem(&mail("oncall@example.com", "SLO burning")), None);
        assert_eq!(problem(&mail("oncall", "s")).map(|p| p.0), Some("to"));
        assert_eq!(problem(&mail("a b@example.com", "s")).map(|p| p.0), Some("to"));
        assert_eq!(problem(&mail("@example.com", "s")).map(|p| p.0), Some("to"));
        assert_eq!(
            problem(&mail("a@example.com", "two\nlines")).map(|p| p.0),
            Some("subject")
        );
        assert_eq!(problem(&mail("a@example.com", "")).map(|p| p.0), Some("subject"));
    }
}
