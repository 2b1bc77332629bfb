//! Private-location agents (issue 17): their keys, their registrations,
//! the queue of runs waiting for them, and their error events.
//!
//! A run of a check in a private location (its slug) is not executed by the
//! service: [`enqueue`] queues it (kind [`AGENT_RUNS`], parent: the slug) and
//! an agent of that location takes it with [`lease`] (in one transaction,
//! so two agents never take the same run), runs it and hands the outcome to
//! [`report`], which stores it as the emulator's own runs do. A run still
//! queued when its session's time is up ends TIMED_OUT, saying no agent is
//! connected ([`unreported`]).
//!
//! A lease lasts while its agent is alive: an agent renews its registration
//! every heartbeat, so one not seen for [`LEASE_LOST_AFTER`] heartbeats
//! (killed, or cut off) has lost its leases, and the next lease of its
//! location (an agent restarted in its place, or another one) takes its
//! runs again, once: a run whose second agent dies too ends as an error at
//! its session's deadline, rather than going round agents that die with it.
//! Either of the two agents may report (the first outcome wins), so an
//! agent that was only slow to renew loses nothing but the second run.
//!
//! Private location keys are in `agents/keys.rs`.

use std::sync::LazyLock;

use monform_model::Kind;
use rusqlite::{Connection, params};
use serde_json::{Value, json};
use tokio::sync::Notify;

mod keys;
pub use keys::{authenticate, create_key, forget_location, keys, new_key, revoke_key};

use crate::clock::{iso, now_ms};
use crate::domain::sessions::{CHECK_SESSIONS, TEST_SESSIONS, internal, is_final};
use crate::error::{ApiError, ApiResult};
use crate::ids::{self, id_text};
use crate::store::Objects;

/// Record kinds.
pub const KEYS: &str = "privateLocationKeys";
pub const AGENTS: &str = "agents";
pub const AGENT_RUNS: &str = "agentRuns";
pub const AGENT_EVENTS: &str = "agentEvents";

/// An agent not seen for this long is no longer connected.
pub const CONNECTED_FOR_MS: i64 = 60_000;
/// How often agents are told to renew their registration, by default
/// (`Config::agent_heartbeat`).
pub const HEARTBEAT_SECONDS: i64 = 10;
/// Heartbeats an agent may miss before its leased runs go to another agent:
/// two missed renewals plus a margin for a slow request, so a passing
/// hiccup does not run a check twice.
pub const LEASE_LOST_AFTER: i64 = 3;
/// The most runs one lease hands out.
pub const MAX_LEASE: i64 = 50;

/// Wakes long-polling leases when runs are queued.
pub static QUEUED: LazyLock<Notify> = LazyLock::new(Notify::new);

/// The agent version this emulator ships with: agents older than the newest
/// connected one (or this) are outdated.
pub const CURRENT_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Who an agent request comes from: the private location its key belongs to.
#[derive(Debug, Clone)]
pub struct AgentCaller {
    pub account: String,
    pub location_id: String,
    pub slug: String,
}

/// What an agent says about itself when it registers.
#[derive(Debug, Clone)]
pub struct Registration {
    pub agent_id: String,
    pub version: String,
    pub platform: String,
    pub runtime_version: String,
}

/// Registers an agent (or renews its registration): it counts as connected
/// for [`CONNECTED_FOR_MS`].
pub fn register(
    db: &Connection,
    caller: &AgentCaller,
    agent: &Registration,
    now: i64,
    heartbeat_seconds: i64,
) -> ApiResult<Value> {
    let existing = db.get(&caller.account, AGENTS, &agent.agent_id)?;
    if let Some(existing) = &existing
        && existing["privateLocationId"] != json!(caller.location_id)
    {
        return Err(ApiError::conflict(format!(
            "agent {} is registered with another private location",
            agent.agent_id
        )));
    }
    let body = json!({
        "id": agent.agent_id, "privateLocationId": caller.location_id, "version": agent.version,
        "platform": agent.platform, "runtimeVersion": agent.runtime_version,
        "registeredAtMs": existing.as_ref().map_or(json!(now), |e| e["registeredAtMs"].clone()),
        "lastSeenAtMs": now,
    });
    if existing.is_some() {
        db.replace(&caller.account, AGENTS, &agent.agent_id, &body)?;
    } else {
        db.insert(
            &caller.account,
            AGENTS,
            &agent.agent_id,
            Some(&caller.location_id),
            now,
            &body,
        )?;
    }
    Ok(json!({
        "agentId": agent.agent_id,
        "privateLocation": { "id": caller.location_id, "slugName": caller.slug },
        "heartbeatSeconds": heartbeat_seconds,
    }))
}

/// The agent `agent_id` of the caller's location, seen now; 409 when it
/// never registered.
fn seen(db: &Connection, caller: &AgentCaller, agent_id: &str, now: i64) -> ApiResult<()> {
    let Some(mut agent) = db
        .get(&caller.account, AGENTS, agent_id)?
        .filter(|a| a["privateLocationId"] == json!(caller.location_id))
    else {
        return Err(ApiError::conflict(format!(
            "agent {agent_id} is not registered with this private location; register it first"
        )));
    };
    agent["lastSeenAtMs"] = json!(now);
    db.replace(&caller.account, AGENTS, agent_id, &agent)?;
    Ok(())
}

/// The private location of `account` whose slug is `location`, if any.
pub fn private_location(db: &Connection, account: &str, location: &str) -> rusqlite::Result<Option<Value>> {
    Ok(db
        .all(account, Kind::PrivateLocation.section())?
        .into_iter()
        .map(|r| r.body)
        .find(|l| l["slugName"] == location))
}

/// Queues the run `key` of `session_id` (check in its API form, group
/// settings applied) for the agents of the location `slug`. Queuing a run
/// twice (a restart resuming it) changes nothing.
pub fn enqueue(
    db: &Connection,
    account: &str,
    session_id: &str,
    key: &str,
    slug: &str,
    check: &Value,
) -> rusqlite::Result<()> {
    if db.get(account, AGENT_RUNS, key)?.is_none() {
        let body = json!({ "runId": key, "sessionId": session_id, "location": slug, "check": check, "leasedBy": null });
        db.insert(account, AGENT_RUNS, key, Some(slug), now_ms(), &body)?;
    }
    QUEUED.notify_waiters();
    Ok(())
}

/// The session of a queued run, if it still waits for outcomes.
fn open_session(db: &Connection, account: &str, session_id: &str, now: i64) -> rusqlite::Result<Option<Value>> {
    for kind in [CHECK_SESSIONS, TEST_SESSIONS] {
        if let Some(session) = db.get(account, kind, session_id)? {
            let open = !is_final(kind, &session) && now < internal(&session, "lostAtMs");
            return Ok(open.then_some(session));
        }
    }
    Ok(None)
}

/// Whether the agent `agent_id` of `account` has not been seen for
/// [`LEASE_LOST_AFTER`] heartbeats (or is forgotten): its leases are lost.
fn gone(db: &Connection, account: &str, agent_id: &str, now: i64, heartbeat_ms: i64) -> rusqlite::Result<bool> {
    let last_seen = db
        .get(account, AGENTS, agent_id)?
        .and_then(|a| a["lastSeenAtMs"].as_i64());
    Ok(last_seen.is_none_or(|seen| now - seen > LEASE_LOST_AFTER * heartbeat_ms))
}

/// Hands up to `max` runs of the caller's location to `agent_id` (call
/// inside one transaction: a run goes to one agent at a time): queued ones,
/// and, once each, those leased by an agent that is gone. Each comes with
/// the account's variables, which the run may read. Runs whose session is
/// over are dropped from the queue.
pub fn lease(
    db: &Connection,
    caller: &AgentCaller,
    agent_id: &str,
    max: i64,
    now: i64,
    heartbeat_ms: i64,
) -> ApiResult<Vec<Value>> {
    seen(db, caller, agent_id, now)?;
    let queued: Vec<(String, String)> = {
        let mut statement = db.prepare_cached(
            "SELECT id, body FROM objects WHERE account_id = ?1 AND kind = ?2 AND parent = ?3 ORDER BY seq",
        )?;
        statement
            .query_map(params![caller.account, AGENT_RUNS, caller.slug], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })?
            .collect::<rusqlite::Result<_>>()?
    };
    let mut runs = Vec::new();
    let mut variables: Option<Vec<Value>> = None;
    for (id, text) in queued {
        if runs.len() as i64 >= max {
            break;
        }
        let Ok(mut run) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        if let Some(holder) = run["leasedBy"].as_str() {
            // Taken again at most once, and only from an agent that is gone.
            if holder == agent_id
                || !run["firstLeasedBy"].is_null()
                || !gone(db, &caller.account, holder, now, heartbeat_ms)?
            {
                continue;
            }
            tracing::info!(target: "monform::emulator", run = %id, from = %holder, to = %agent_id, "run leased again: its agent is gone");
            run["firstLeasedBy"] = json!(holder);
        }
        let Some(session) = open_session(db, &caller.account, &id_text(&run["sessionId"]), now)? else {
            db.delete(&caller.account, AGENT_RUNS, &id)?;
            continue;
        };
        run["leasedBy"] = json!(agent_id);
        run["leasedAtMs"] = json!(now);
        db.replace(&caller.account, AGENT_RUNS, &id, &run)?;
        let variables = match &variables {
            Some(v) => v.clone(),
            None => {
                let all: Vec<Value> = db
                    .all(&caller.account, Kind::Variable.section())?
                    .into_iter()
                    .map(|r| r.body)
                    .collect();
                variables.insert(all).clone()
            }
        };
        runs.push(json!({
            "runId": id,
            "location": caller.slug,
            "check": run["check"],
            "variables": variables,
            "deadlineAtMs": internal(&session, "lostAtMs"),
        }));
    }
    Ok(runs)
}

/// Takes the outcome of the run `run_id` from the agent that leased it:
/// checks the record (the runner's `retry::to_record` form) and returns
/// the run's session id, the stored record and when it finished, for the
/// caller to store as the run's outcome.
pub fn report(
    db: &Connection,
    caller: &AgentCaller,
    agent_id: &str,
    run_id: &str,
    mut record: Value,
    now: i64,
) -> ApiResult<(String, Value, i64)> {
    seen(db, caller, agent_id, now)?;
    let run = db
        .get(&caller.account, AGENT_RUNS, run_id)?
        .filter(|r| r["location"] == json!(caller.slug))
        .ok_or_else(|| ApiError::not_found("queued run", run_id))?;
    // The first lessee too, when the run was taken again: the first outcome counts.
    if run["leasedBy"] != json!(agent_id) && run["firstLeasedBy"] != json!(agent_id) {
        return Err(ApiError::conflict(format!(
            "run {run_id} is not leased to agent {agent_id}"
        )));
    }
    if monform_runner::from_record(&record["outcome"]).is_none() {
        return Err(ApiError::invalid(
            "outcome",
            "must be the outcome of a run (status, executed, responseTime, ...)",
        ));
    }
    db.delete(&caller.account, AGENT_RUNS, run_id)?;
    let finished = record["finishedAtMs"].as_i64().filter(|f| *f <= now).unwrap_or(now);
    record["agentId"] = json!(agent_id);
    Ok((id_text(&run["sessionId"]), record, finished))
}

/// Why the queued run `key` has no outcome at its session's deadline, as
/// its outcome: TIMED_OUT when no agent took it, an error when one took it
/// and never reported. `None` when the run was not queued for an agent.
pub fn unreported(db: &Connection, account: &str, key: &str) -> rusqlite::Result<Option<monform_runner::Outcome>> {
    let Some(run) = db.get(account, AGENT_RUNS, key)? else {
        return Ok(None);
    };
    db.delete(account, AGENT_RUNS, key)?;
    let slug = run["location"].as_str().unwrap_or_default();
    Ok(Some(match run["leasedBy"].as_str() {
        None => {
            let mut outcome = monform_runner::errored(format!(
                "no agent is connected to private location `{slug}`: no agent picked up the run within its time limit"
            ));
            outcome.status = monform_runner::RunStatus::TimedOut;
            outcome
        }
        Some(agent) => match run["firstLeasedBy"].as_str() {
            None => monform_runner::errored(format!(
                "agent {agent} of private location `{slug}` took the run but did not report its outcome in time"
            )),
            Some(first) => monform_runner::errored(format!(
                "agents {first} and {agent} of private location `{slug}` took the run in turn (the first one stopped answering) but neither reported its outcome in time"
            )),
        },
    }))
}

/// `lastSeen`, `agentCount`, `minAgentVersion` and `runningAgents` of a
/// private location (spec 2.12), from its agents (`agents`: every
/// registration of the account).
pub fn agent_fields(location: &mut Value, agents: &[Value], now: i64) {
    let id = id_text(&location["id"]);
    let mine: Vec<&Value> = agents
        .iter()
        .filter(|a| id_text(&a["privateLocationId"]) == id)
        .collect();
    let last_seen = mine.iter().filter_map(|a| a["lastSeenAtMs"].as_i64()).max();
    let connected: Vec<&Value> = mine
        .into_iter()
        .filter(|a| a["lastSeenAtMs"].as_i64().is_some_and(|t| now - t < CONNECTED_FOR_MS))
        .collect();
    let version = |a: &Value| a["version"].as_str().unwrap_or_default().to_owned();
    let mut versions: Vec<String> = connected.iter().map(|a| version(a)).collect();
    versions.sort_by_key(|v| version_key(v));
    versions.dedup();
    let newest = versions
        .last()
        .cloned()
        .filter(|v| version_key(v) > version_key(CURRENT_VERSION))
        .unwrap_or_else(|| CURRENT_VERSION.to_owned());
    let running: Vec<Value> = versions
        .iter()
        .map(|v| {
            let agents: Vec<Value> = connected
                .iter()
                .filter(|a| &version(a) == v)
                .map(|a| json!({ "id": a["id"], "lastSeenAt": iso(a["lastSeenAtMs"].as_i64().unwrap_or(0)) }))
                .collect();
            json!({ "version": v, "isOutdated": version_key(v) < version_key(&newest), "count": agents.len(), "agents": agents })
        })
        .collect();
    location["lastSeen"] = last_seen.map_or(Value::Null, |t| json!(iso(t)));
    location["agentCount"] = json!(connected.len());
    location["minAgentVersion"] = versions.first().map_or(Value::Null, |v| json!(v));
    location["runningAgents"] = Value::Array(running);
}

/// A version's numeric parts, for ordering (`8.10.0` after `8.2.0`).
fn version_key(version: &str) -> Vec<u64> {
    version.split(['.', '-', '+']).map_while(|p| p.parse().ok()).collect()
}

/// Every agent registration of `account`.
pub fn all_agents(db: &Connection, account: &str) -> rusqlite::Result<Vec<Value>> {
    Ok(db.all(account, AGENTS)?.into_iter().map(|r| r.body).collect())
}

/// What an agent reports about an error of its own (spec 6).
#[derive(Debug, Clone)]
pub struct ErrorEvent {
    pub agent_id: String,
    pub message: String,
    pub backtrace: String,
    pub agent_version: String,
    pub platform: String,
    pub runtime_version: String,
}

/// Stores an agent's error event; the account lists them.
pub fn record_event(db: &Connection, caller: &AgentCaller, event: &ErrorEvent, now: i64) -> ApiResult<Value> {
    let id = ids::new();
    let body = json!({
        "id": id, "level": "error", "privateLocationId": caller.location_id,
        "privateLocationSlug": caller.slug, "agentId": event.agent_id, "message": event.message,
        "backtrace": event.backtrace, "agentVersion": event.agent_version, "platform": event.platform,
        "runtimeVersion": event.runtime_version, "created_at": iso(now),
    });
    db.insert(
        &caller.account,
        AGENT_EVENTS,
        &id,
        Some(&caller.location_id),
        now,
        &body,
    )?;
    Ok(body)
}

/// The account's agent error events, newest first.
pub fn events(db: &Connection, account: &str, limit: usize) -> rusqlite::Result<Vec<Value>> {
    Ok(db
        .records(account, AGENT_EVENTS, None, 0, i64::MAX)?
        .into_iter()
        .take(limit)
        .map(|r| r.body)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;

    fn location(db: &Connection) -> (AgentCaller, String) {
        let body = json!({ "id": "loc1", "name": "Office", "slugName": "office", "keys": [] });
        db.insert("acc", Kind::PrivateLocation.section(), "loc1", None, 0, &body)
            .unwrap();
        let created = create_key(db, "acc", "loc1").unwrap();
        let raw = created["rawKey"].as_str().unwrap().to_owned();
        (authenticate(db, &raw).unwrap().unwrap(), raw)
    }

    /// A heartbeat of 10 s, in ms.
    const HB: i64 = 10_000;

    fn registration(id: &str, version: &str) -> Registration {
        Registration {
            agent_id: id.into(),
            version: version.into(),
            platform: "linux".into(),
            runtime_version: "rustc".into(),
        }
    }

    fn session(db: &Connection, id: &str) {
        let body = json!({ "status": "STARTED", "_internal": { "lostAtMs": i64::MAX } });
        db.insert("acc", CHECK_SESSIONS, id, None, 0, &body).unwrap();
    }

    #[test]
    fn a_run_is_leased_once_and_reported_by_its_agent_only() {
        let store = Store::in_memory().unwrap();
        let db = store.lock();
        let (caller, _) = location(&db);
        session(&db, "s1");
        for agent in ["a1", "a2"] {
            register(&db, &caller, &registration(agent, "0.1.0"), 1, 10).unwrap();
        }
        for run in 0..3 {
            enqueue(
                &db,
                "acc",
                "s1",
                &format!("r{run}"),
                "office",
                &json!({ "checkType": "API" }),
            )
            .unwrap();
        }
        enqueue(&db, "acc", "s1", "r0", "office", &json!({})).unwrap();
        let first = lease(&db, &caller, "a1", 2, 2, HB).unwrap();
        let second = lease(&db, &caller, "a2", 10, 2, HB).unwrap();
        let ids = |runs: &[Value]| runs.iter().map(|r| id_text(&r["runId"])).collect::<Vec<_>>();
        assert_eq!(ids(&first), ["r0", "r1"]);
        assert_eq!(ids(&second), ["r2"]);
        let record = json!({ "outcome": monform_runner::to_record(&monform_runner::errored("x")), "finishedAtMs": 2 });
        let refused = report(&db, &caller, "a2", "r0", record.clone(), 3).unwrap_err();
        assert_eq!(refused.status.as_u16(), 409);
        let bad = report(&db, &caller, "a1", "r0", json!({ "outcome": 1 }), 3).unwrap_err();
        assert_eq!(bad.status.as_u16(), 400);
        let (session_id, stored, _) = report(&db, &caller, "a1", "r0", record, 3).unwrap();
        assert_eq!((session_id.as_str(), &stored["agentId"]), ("s1", &json!("a1")));
        assert_eq!(lease(&db, &caller, "a1", 10, 4, HB).unwrap().len(), 0);
        assert!(
            lease(&db, &caller, "stranger", 10, 4, HB).is_err(),
            "unregistered agents get nothing"
        );
    }

    #[test]
    fn a_gone_agents_run_is_leased_again_once_and_either_agent_may_report() {
        let store = Store::in_memory().unwrap();
        let db = store.lock();
        let (caller, _) = location(&db);
        session(&db, "s1");
        register(&db, &caller, &registration("dead", "0.1.0"), 0, 10).unwrap();
        enqueue(&db, "acc", "s1", "r1", "office", &json!({ "checkType": "API" })).unwrap();
        assert_eq!(lease(&db, &caller, "dead", 1, 0, HB).unwrap().len(), 1);
        // A restarted agent: nothing while the first one may still be alive...
        register(&db, &caller, &registration("restarted", "0.1.0"), 1, 10).unwrap();
        let alive_until = LEASE_LOST_AFTER * HB;
        assert!(lease(&db, &caller, "restarted", 5, alive_until, HB).unwrap().is_empty());
        // ...then the run, once its agent missed its heartbeats.
        let again = lease(&db, &caller, "restarted", 5, alive_until + 1, HB).unwrap();
        assert_eq!(again.len(), 1);
        assert_eq!(again[0]["runId"], "r1");
        // Once: a third agent gets nothing even when the second is gone too.
        register(&db, &caller, &registration("third", "0.1.0"), 10 * HB, 10).unwrap();
        assert!(lease(&db, &caller, "third", 5, 10 * HB, HB).unwrap().is_empty());
        let record = json!({ "outcome": monform_runner::to_record(&monform_runner::errored("x")), "finishedAtMs": 2 });
        assert_eq!(
            report(&db, &caller, "third", "r1", record.clone(), 10 * HB)
                .unwrap_err()
                .status
                .as_u16(),
            409
        );
        // The first agent was only slow: its outcome counts, and the second's is refused.
        let (session_id, stored, _) = report(&db, &caller, "dead", "r1", record.clone(), 10 * HB).unwrap();
        assert_eq!((session_id.as_str(), &stored["agentId"]), ("s1", &json!("dead")));
        assert_eq!(
            report(&db, &caller, "restarted", "r1", record, 10 * HB)
                .unwrap_err()
                .status
                .as_u16(),
            404
        );
    }

    #[test]
    fn a_run_nobody_reports_after_two_agents_ends_naming_both() {
        let store = Store::in_memory().unwrap();
        let db = store.lock();
        let (caller, _) = location(&db);
        session(&db, "s1");
        register(&db, &caller, &registration("a1", "0.1.0"), 0, 10).unwrap();
        register(&db, &caller, &registration("a2", "0.1.0"), 0, 10).unwrap();
        enqueue(&db, "acc", "s1", "r1", "office", &json!({})).unwrap();
        lease(&db, &caller, "a1", 1, 0, HB).unwrap();
        assert_eq!(lease(&db, &caller, "a2", 1, 4 * HB, HB).unwrap().len(), 1);
        let outcome = unreported(&db, "acc", "r1").unwrap().unwrap();
        assert_ne!(outcome.status, monform_runner::RunStatus::Passed);
        let error = outcome.error.unwrap();
        assert!(
            error.contains("agents a1 and a2") && error.contains("neither reported"),
            "{error}"
        );
    }

    #[test]
    fn unpicked_runs_time_out_saying_no_agent_is_connected() {
        let store = Store::in_memory().unwrap();
        let db = store.lock();
        enqueue(&db, "acc", "s1", "r1", "office", &json!({})).unwrap();
        let outcome = unreported(&db, "acc", "r1").unwrap().unwrap();
        assert_eq!(outcome.status, monform_runner::RunStatus::TimedOut);
        assert!(outcome.error.unwrap().contains("no agent is connected"));
        assert!(unreported(&db, "acc", "r1").unwrap().is_none());
    }

    #[test]
    fn the_record_counts_connected_agents_by_version() {
        let now = 100_000;
        let agent = |id: &str, version: &str, seen: i64| json!({ "id": id, "privateLocationId": "loc1", "version": version, "lastSeenAtMs": seen });
        let agents = [
            agent("a", "8.2.0", now - 1000),
            agent("b", "8.10.0", now - 2000),
            agent("c", "8.10.0", now),
            agent("gone", "1.0.0", now - CONNECTED_FOR_MS - 1),
        ];
        let mut location = json!({ "id": "loc1" });
        agent_fields(&mut location, &agents, now);
        assert_eq!(location["agentCount"], 2 + 1);
        assert_eq!(location["minAgentVersion"], "8.2.0");
        assert_eq!(location["lastSeen"], iso(now));
        let running = location["runningAgents"].as_array().unwrap();
        assert_eq!(running[0]["version"], "8.2.0");
        assert_eq!(running[0]["isOutdated"], true);
        assert_eq!(running[1]["count"], 2);
        assert_eq!(running[1]["isOutdated"], false);
        let mut empty = json!({ "id": "other" });
        agent_fields(&mut empty, &agents, now);
        assert_eq!(
            (empty["agentCount"].clone(), empty["lastSeen"].clone()),
            (json!(0), Value::Null)
        );
    }
}
