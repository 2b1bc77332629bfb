//! Writes the service may acknowledge without keeping (a lost write, found
//! by the fault-injection run of issue 45), read back before they count:
//!
//! - a delete, by a GET of its id: gone is done; still there is deleted
//!   again, with a pause that doubles as the client's retries do. Objects
//!   of kinds without tags have nothing but the state saying whose they
//!   are, so a delete believed is an object nobody finds again;
//! - a secret variable, by its version: its value is never returned, so a
//!   lost write looked applied, and the next plan showed the version it
//!   recorded (the lost write's answer) as a rotation in the web UI.
//!
//! What is still not confirmed after [`ATTEMPTS`] is a failed step: the
//! state keeps what the service holds, so the next apply finishes it.

use std::time::Duration;

use monform_api::{Client, Error, Remote};
use monform_model::Kind;
use serde_json::Value;

use crate::identity::uses_tags;
use crate::plan::{Action, Change, Reason};

/// Writes tried before one that does not hold fails its step (pauses of
/// 0.2 + 0.4 + 0.8 + 1.6 s between them).
const ATTEMPTS: u32 = 5;
/// The first pause between two; doubled each time, as the client's backoff.
const FIRST_PAUSE: Duration = Duration::from_millis(200);

/// Why a write is not confirmed (the text of the failed step).
#[derive(Debug)]
pub(super) enum Unconfirmed {
    Api(Error),
    /// Acknowledged every time, never held.
    NotHeld(String),
}

impl From<Error> for Unconfirmed {
    fn from(error: Error) -> Unconfirmed {
        Unconfirmed::Api(error)
    }
}

impl std::fmt::Display for Unconfirmed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unconfirmed::Api(error) => error.fmt(f),
            Unconfirmed::NotHeld(text) => f.write_str(text),
        }
    }
}

/// Whether a delete planned as `change` is read back here. A removed
/// object of a kind with tags is not: its tag still names the project, so
/// a delete that did not hold is found by the apply's verification (one
/// listing per kind, where a GET each would double a large destroy's
/// requests) and deleted by the next plan.
pub(super) fn reads_back(change: &Change) -> bool {
    change.action != Action::Delete || !uses_tags(change.address.kind) || change.reason == Reason::Duplicate
}

/// Deletes `id` until the service no longer holds it.
pub(super) async fn delete(client: &Client, kind: Kind, id: &str) -> Result<(), Unconfirmed> {
    let mut pause = FIRST_PAUSE;
    for attempt in 1..=ATTEMPTS {
        client.delete(kind, id).await?;
        if client.get(kind, id).await?.is_none() {
            return Ok(());
        }
        if attempt < ATTEMPTS {
            tracing::debug!("{} {id} still exists after its delete; deleting again", kind.section());
            wait(client, &mut pause).await;
        }
    }
    Err(Unconfirmed::NotHeld(format!(
        "the service acknowledged {ATTEMPTS} deletes of {} {id} but still holds it",
        kind.section()
    )))
}

/// Whether the files' variable is secret: its value is never returned.
pub(super) fn secret_variable(kind: Kind, body: &Value) -> bool {
    kind == Kind::Variable && body.get("secret") == Some(&Value::Bool(true))
}

/// A secret variable just written (`written`, the service's answer to
/// `body`): returned once the service holds the version it answered,
/// written again (the same body: idempotent) until it does.
pub(super) async fn secret(client: &Client, key: &str, body: &Value, written: Remote) -> Result<Remote, Unconfirmed> {
    let mut written = written;
    let mut pause = FIRST_PAUSE;
    for attempt in 1..=ATTEMPTS {
        let held = client.get(Kind::Variable, key).await?;
        match &held {
            Some(held) if held.version() == written.version() => return Ok(written),
            _ if attempt == ATTEMPTS => break,
            _ => {}
        }
        tracing::debug!("variable {key} does not hold the version written; writing again");
        wait(client, &mut pause).await;
        written = match held {
            Some(_) => client.update(Kind::Variable, key, body).await?,
            None => match client.create(Kind::Variable, body).await {
                // Created after all (the read raced it): set it.
                Err(error) if error.status() == Some(409) => client.update(Kind::Variable, key, body).await?,
                other => other?,
            },
        };
    }
    Err(Unconfirmed::NotHeld(format!(
        "the service acknowledged {ATTEMPTS} writes of the secret variable {key} but does not hold the version it answered"
    )))
}

/// The pause before the next attempt, unless the service stopped answering
/// (the client's circuit breaker: the next request fails at once).
async fn wait(client: &Client, pause: &mut Duration) {
    if !client.unreachable() {
        tokio::time::sleep(*pause).await;
    }
    *pause = (*pause * 2).min(Duration::from_secs(30));
}
