//! Check alerts from state transitions (spec 2.2, 2.15, 6; issue 8).
//!
//! After every finished check session (triggered or scheduled, never a test
//! session) [`after_run`] judges the run as a whole ([`verdict`]), moves the
//! check's alert state (kind [`ALERT_STATES`], one per check) with the pure
//! function [`step`], records the alerts (kind `checkAlerts`, read by
//! `GET /v1/check-alerts`) and has `notify` plan their notifications.
//!
//! Choices where the specification is silent:
//! - **Settings**: a group's `alertSettings` apply to its checks when the
//!   group sets them (unless the group's `useGlobalAlertSettings` is true);
//!   else the check's own when its `useGlobalAlertSettings` is false; else
//!   the account-level defaults, which the API cannot read or change here:
//!   RUN_BASED with `failedRunThreshold` 1, no reminders (amount 0,
//!   interval 5), no parallel-run threshold.
//! - **Run verdict**: a run failed when a location failed or timed out;
//!   with `parallelRunFailureThreshold.enabled`, only when at least
//!   `percentage` % of its locations did (the others then count as passed,
//!   or degraded). Else degraded when a location was degraded, else passed.
//!   Cancelled sessions move nothing.
//! - **Transitions** ([`step`]): ALERT_FAILURE when consecutive failed runs
//!   reach `failedRunThreshold` (TIME_BASED: when the check has been failing
//!   for `minutesFailingThreshold` minutes, measured between runs);
//!   ALERT_DEGRADED_FAILURE instead when a degraded alert was open.
//!   ALERT_DEGRADED on the first degraded run (no threshold), and
//!   ALERT_FAILURE_DEGRADED when a failure alert was open. ALERT_RECOVERY /
//!   ALERT_DEGRADED_RECOVERY on the first passing run after a failure /
//!   degraded alert. While an alert stays open, ALERT_FAILURE_REMAIN /
//!   ALERT_DEGRADED_REMAIN reminders: at most `reminders.amount`, each at
//!   least `reminders.interval` minutes after the previous alert, measured
//!   in run times (the stored state holds the time of the last alert).
//!   NO_ALERT and ALERT_SSL are never raised (no SSL checks here).
//! - **Silence**: a muted check (or group), or a check inside a maintenance
//!   window (`maintenance`), raises nothing: its failure count still moves,
//!   the open alert stays open (no reminders), and a pass closes it without
//!   a recovery. A check still failing when the silence ends alerts on its
//!   next failed run.
//! - An alert names the check, the run's representative result (the first
//!   failed location for failure alerts, else the first) with its
//!   location, response time, error and (API checks) status code;
//!   `created_at` and `startedAt` are date-times.

use monform_model::resources::CheckType;
use monform_model::resources::common::{AlertSettings, EscalationType};
use monform_model::{Kind, RunStatus};
use rusqlite::Connection;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::clock::iso;
use crate::domain::incidents;
use crate::domain::maintenance;
use crate::domain::notify::{self, AlertType};
use crate::ids::{self, id_text};
use crate::store::Objects;
use monform_model::group_rules::apply_group;

/// Record kind: a check's alert state (id: the check id).
pub const ALERT_STATES: &str = "alertStates";
/// Record kind: check alerts (spec 2.15).
pub const CHECK_ALERTS: &str = "checkAlerts";

/// How a whole run (all its locations) turned out, for alerting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Passed,
    Degraded,
    Failed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Escalation {
    /// Consecutive failed runs before the first alert.
    Runs(u32),
    /// Minutes failing before the first alert.
    Minutes(u32),
}

/// The alert settings that apply to a check.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub escalation: Escalation,
    pub reminders: u32,
    pub reminder_interval_ms: i64,
    /// `parallelRunFailureThreshold.percentage` when enabled.
    pub parallel_percentage: Option<u32>,
}

impl Settings {
    /// The account-level defaults (documented above).
    pub fn global() -> Settings {
        Settings {
            escalation: Escalation::Runs(1),
            reminders: 0,
            reminder_interval_ms: 5 * 60_000,
            parallel_percentage: None,
        }
    }

    pub fn from_model(settings: &AlertSettings) -> Settings {
        let global = Settings::global();
        let escalation = match settings.escalation_type {
            EscalationType::TimeBased => settings
                .time_based_escalation
                .as_ref()
                .map_or(global.escalation, |t| Escalation::Minutes(t.minutes_failing_threshold)),
            EscalationType::RunBased => settings
                .run_based_escalation
                .as_ref()
                .map_or(global.escalation, |r| Escalation::Runs(r.failed_run_threshold.max(1))),
        };
        Settings {
            escalation,
            reminders: settings.reminders.as_ref().map_or(0, |r| r.amount),
            reminder_interval_ms: settings
                .reminders
                .as_ref()
                .map_or(global.reminder_interval_ms, |r| i64::from(r.interval) * 60_000),
            parallel_percentage: settings
                .parallel_run_failure_threshold
                .as_ref()
                .filter(|p| p.enabled)
                .map(|p| p.percentage),
        }
    }

    /// The settings of `check` (stored form, without group settings) in
    /// `group`.
    pub fn resolve(check: &Value, group: Option<&Value>) -> Settings {
        let parse = |v: &Value| serde_json::from_value::<AlertSettings>(v.clone()).ok();
        if let Some(group) = group
            && group["useGlobalAlertSettings"] != true
            && let Some(settings) = group.get("alertSettings").filter(|s| s.is_object()).and_then(parse)
        {
            return Settings::from_model(&settings);
        }
        if check["useGlobalAlertSettings"] == false
            && let Some(settings) = check.get("alertSettings").and_then(parse)
        {
            return Settings::from_model(&settings);
        }
        Settings::global()
    }
}

/// Which alert is open.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Open {
    #[default]
    None,
    Failure,
    Degraded,
}

/// A check's alert state, kept between runs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AlertState {
    /// PASSING, FAILING or DEGRADED after the last run.
    pub status: String,
    pub consecutive_failures: u32,
    pub failing_since_ms: Option<i64>,
    pub open: Open,
    pub reminders_sent: u32,
    pub last_alert_ms: Option<i64>,
}

/// The verdict of a run from the statuses of its locations (PASSED,
/// FAILED, DEGRADED, TIMED_OUT); None for a run with no location.
pub fn verdict(statuses: &[RunStatus], parallel_percentage: Option<u32>) -> Option<Verdict> {
    if statuses.is_empty() {
        return None;
    }
    let failed = statuses.iter().filter(|s| fails_the_check(**s)).count();
    let failing = match parallel_percentage {
        Some(percentage) => failed > 0 && failed * 100 >= percentage as usize * statuses.len(),
        None => failed > 0,
    };
    Some(if failing {
        Verdict::Failed
    } else if statuses.contains(&RunStatus::Degraded) {
        Verdict::Degraded
    } else {
        Verdict::Passed
    })
}

/// Whether a run in one location counts towards failing its check. Not
/// [`RunStatus::is_failure`]: a cancelled run neither fails nor passes it.
fn fails_the_check(status: RunStatus) -> bool {
    match status {
        RunStatus::Failed | RunStatus::TimedOut => true,
        RunStatus::Passed | RunStatus::Degraded | RunStatus::Cancelled | RunStatus::Running => false,
    }
}

/// The next state and the alerts raised by a run judged `verdict` at `now`
/// (ms). `silenced`: muted or in maintenance (see the module doc).
pub fn step(
    state: &AlertState,
    verdict: Verdict,
    settings: &Settings,
    now: i64,
    silenced: bool,
) -> (AlertState, Vec<AlertType>) {
    let mut next = state.clone();
    let reminder_due = |kind| {
        (state.reminders_sent < settings.reminders
            && state
                .last_alert_ms
                .is_none_or(|last| now - last >= settings.reminder_interval_ms))
        .then_some(kind)
    };
    let raised = match verdict {
        Verdict::Failed => {
            next.status = "FAILING".into();
            next.consecutive_failures = state.consecutive_failures.saturating_add(1);
            let since = *next.failing_since_ms.get_or_insert(now);
            let escalated = match settings.escalation {
                Escalation::Runs(n) => next.consecutive_failures >= n,
                Escalation::Minutes(m) => now - since >= i64::from(m) * 60_000,
            };
            match state.open {
                Open::Failure => reminder_due(AlertType::AlertFailureRemain),
                Open::Degraded if escalated => Some(AlertType::AlertDegradedFailure),
                Open::None if escalated => Some(AlertType::AlertFailure),
                _ => None,
            }
        }
        Verdict::Degraded => {
            next.status = "DEGRADED".into();
            next.consecutive_failures = 0;
            next.failing_since_ms = None;
            match state.open {
                Open::Failure => Some(AlertType::AlertFailureDegraded),
                Open::None => Some(AlertType::AlertDegraded),
                Open::Degraded => reminder_due(AlertType::AlertDegradedRemain),
            }
        }
        Verdict::Passed => {
            next.status = "PASSING".into();
            next.consecutive_failures = 0;
            next.failing_since_ms = None;
            next.open = Open::None;
            next.reminders_sent = 0;
            match state.open {
                Open::Failure => Some(AlertType::AlertRecovery),
                Open::Degraded => Some(AlertType::AlertDegradedRecovery),
                Open::None => None,
            }
        }
    };
    if silenced {
        // Nothing is raised; only a pass closes the open alert.
        if verdict != Verdict::Passed {
            next.open = state.open;
        }
        return (next, Vec::new());
    }
    match raised {
        Some(AlertType::AlertFailureRemain | AlertType::AlertDegradedRemain) => {
            next.reminders_sent = state.reminders_sent + 1;
            next.last_alert_ms = Some(now);
        }
        Some(kind) if !kind.is_recovery() => {
            next.open = if kind.is_failure() {
                Open::Failure
            } else {
                Open::Degraded
            };
            next.reminders_sent = 0;
            next.last_alert_ms = Some(now);
        }
        Some(_) => next.last_alert_ms = Some(now),
        None => {}
    }
    (next, raised.into_iter().collect())
}

/// A finished run in one location: its status and stored check result.
pub struct FinishedRun<'a> {
    pub status: RunStatus,
    pub result: &'a Value,
}

/// Moves the alert state of `check_id` after a check session's runs
/// (finished at `at`), records the alerts raised and plans their
/// notifications. Call it inside the transaction that settles the session.
pub fn after_run(
    db: &Connection,
    account: &str,
    check_id: &str,
    runs: &[FinishedRun<'_>],
    at: i64,
) -> rusqlite::Result<()> {
    let Some(check) = db.get(account, Kind::Check.section(), check_id)? else {
        return Ok(());
    };
    let group = match check.get("groupId").filter(|g| !g.is_null()) {
        Some(id) => db.get(account, Kind::Group.section(), &id_text(id))?,
        None => None,
    };
    let settings = Settings::resolve(&check, group.as_ref());
    let statuses: Vec<RunStatus> = runs.iter().map(|r| r.status).collect();
    let Some(verdict) = verdict(&statuses, settings.parallel_percentage) else {
        return Ok(());
    };
    let effective = match &group {
        Some(group) => apply_group(check.clone(), group),
        None => check.clone(),
    };
    let silenced = effective["muted"] == true || maintenance::silences(db, account, &effective, at)?;
    let state: AlertState = db
        .get(account, ALERT_STATES, check_id)?
        .and_then(|v| serde_json::from_value(v).ok())
        .unwrap_or_default();
    let (next, raised) = step(&state, verdict, &settings, at, silenced);
    let stored = serde_json::to_value(&next).unwrap_or_else(|_| json!({}));
    if !db.replace(account, ALERT_STATES, check_id, &stored)? {
        db.insert(account, ALERT_STATES, check_id, Some(check_id), at, &stored)?;
    }
    for kind in raised {
        let failed = |r: &&FinishedRun<'_>| fails_the_check(r.status);
        let Some(run) = runs.iter().find(|r| kind.is_failure() && failed(r)).or(runs.first()) else {
            continue;
        };
        let alert = alert_record(&effective, kind, run.result, at);
        db.insert(
            account,
            CHECK_ALERTS,
            &id_text(&alert["id"]),
            Some(check_id),
            at,
            &alert,
        )?;
        notify::plan(db, account, &check, group.as_ref(), &alert, run.result, at)?;
        incidents::after_alert(db, account, &check, kind, at)?;
    }
    Ok(())
}

/// A check alert record (spec 2.15).
fn alert_record(check: &Value, kind: AlertType, result: &Value, at: i64) -> Value {
    let status_code = match &result["apiCheckResult"]["response"]["status"] {
        Value::Number(n) if CheckType::of_check(check) == Ok(CheckType::Api) => json!(n.to_string()),
        _ => Value::Null,
    };
    json!({
        "id": ids::new(),
        "name": check["name"],
        "checkId": check["id"],
        "alertType": kind.as_str(),
        "checkType": check["checkType"],
        "runLocation": result["runLocation"],
        "responseTime": result["responseTime"],
        "error": result["error"],
        "statusCode": status_code,
        "created_at": iso(at),
        "startedAt": result["startedAt"],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use AlertType::*;

    fn runs(threshold: u32) -> Settings {
        Settings {
            escalation: Escalation::Runs(threshold),
            ..Settings::global()
        }
    }

    /// Feeds verdicts one minute apart; returns every alert raised.
    fn play(settings: &Settings, verdicts: &[Verdict], silenced: &[bool]) -> Vec<Vec<AlertType>> {
        let mut state = AlertState::default();
        let mut out = Vec::new();
        for (i, verdict) in verdicts.iter().enumerate() {
            let (next, alerts) = step(
                &state,
                *verdict,
                settings,
                i as i64 * 60_000,
                silenced.get(i).copied().unwrap_or(false),
            );
            state = next;
            out.push(alerts);
        }
        out
    }

    use Verdict::{Degraded as D, Failed as F, Passed as P};

    #[test]
    fn failure_then_recovery() {
        let alerts = play(&Settings::global(), &[P, F, F, P, P], &[]);
        assert_eq!(
            alerts,
            [vec![], vec![AlertFailure], vec![], vec![AlertRecovery], vec![]]
        );
    }

    #[test]
    fn the_threshold_counts_consecutive_failed_runs() {
        let alerts = play(&runs(2), &[F, P, F, F, F, P], &[]);
        assert_eq!(
            alerts,
            [vec![], vec![], vec![], vec![AlertFailure], vec![], vec![AlertRecovery]]
        );
        // No recovery without an alert.
        assert_eq!(play(&runs(3), &[F, F, P], &[]), [vec![], vec![], vec![]]);
    }

    #[test]
    fn reminders_are_limited_in_number_and_spaced() {
        let settings = Settings {
            reminders: 2,
            reminder_interval_ms: 2 * 60_000,
            ..Settings::global()
        };
        let alerts = play(&settings, &[F, F, F, F, F, F, F, P], &[]);
        assert_eq!(
            alerts,
            [
                vec![AlertFailure],
                vec![],
                vec![AlertFailureRemain],
                vec![],
                vec![AlertFailureRemain],
                vec![],
                vec![],
                vec![AlertRecovery],
            ]
        );
    }

    #[test]
    fn degraded_transitions() {
        let alerts = play(&Settings::global(), &[D, D, F, D, P, D, P], &[]);
        assert_eq!(
            alerts,
            [
                vec![AlertDegraded],
                vec![],
                vec![AlertDegradedFailure],
                vec![AlertFailureDegraded],
                vec![AlertDegradedRecovery],
                vec![AlertDegraded],
                vec![AlertDegradedRecovery],
            ]
        );
    }

    #[test]
    fn time_based_escalation_waits_for_the_minutes() {
        let settings = Settings {
            escalation: Escalation::Minutes(2),
            ..Settings::global()
        };
        let alerts = play(&settings, &[F, F, F, F], &[]);
        assert_eq!(alerts, [vec![], vec![], vec![AlertFailure], vec![]]);
    }

    #[test]
    fn silence_raises_nothing_and_alerts_after_it() {
        // Failing while muted: nothing; unmuted and still failing: the alert.
        let alerts = play(&Settings::global(), &[F, F, F, P], &[true, true, false, false]);
        assert_eq!(alerts, [vec![], vec![], vec![AlertFailure], vec![AlertRecovery]]);
        // An alert open when the silence starts is closed by a silent pass.
        let alerts = play(&Settings::global(), &[F, F, P, P], &[false, true, true, false]);
        assert_eq!(alerts, [vec![AlertFailure], vec![], vec![], vec![]]);
        // ... and stays open through silent failures (recovery after).
        let alerts = play(&Settings::global(), &[F, F, P], &[false, true, false]);
        assert_eq!(alerts, [vec![AlertFailure], vec![], vec![AlertRecovery]]);
    }

    #[test]
    fn verdicts_follow_the_parallel_threshold() {
        use RunStatus::{Cancelled, Degraded, Failed, Passed, TimedOut};
        assert_eq!(verdict(&[], None), None);
        assert_eq!(verdict(&[Passed, Failed], None), Some(F));
        assert_eq!(verdict(&[Passed, TimedOut], None), Some(F));
        assert_eq!(verdict(&[Passed, Degraded], None), Some(D));
        assert_eq!(verdict(&[Passed, Cancelled], None), Some(P));
        let three = [Passed, Failed, Passed];
        assert_eq!(verdict(&three, Some(50)), Some(P));
        assert_eq!(verdict(&three, Some(30)), Some(F));
        assert_eq!(verdict(&[Failed, Failed, Degraded], Some(70)), Some(D));
        assert_eq!(verdict(&[Failed, Failed], Some(100)), Some(F));
    }

    #[test]
    fn settings_come_from_the_group_the_check_or_the_account() {
        let own = json!({ "escalationType": "RUN_BASED", "runBasedEscalation": { "failedRunThreshold": 3 },
            "reminders": { "amount": 2, "interval": 10 },
            "parallelRunFailureThreshold": { "enabled": true, "percentage": 50 } });
        let check = json!({ "useGlobalAlertSettings": false, "alertSettings": own });
        let settings = Settings::resolve(&check, None);
        assert_eq!(settings.escalation, Escalation::Runs(3));
        assert_eq!((settings.reminders, settings.reminder_interval_ms), (2, 600_000));
        assert_eq!(settings.parallel_percentage, Some(50));
        // useGlobalAlertSettings (the default) ignores the check's own.
        let global = json!({ "useGlobalAlertSettings": true, "alertSettings": own });
        assert_eq!(Settings::resolve(&global, None), Settings::global());
        let group = json!({ "alertSettings": { "escalationType": "RUN_BASED", "runBasedEscalation": { "failedRunThreshold": 5 } } });
        assert_eq!(Settings::resolve(&check, Some(&group)).escalation, Escalation::Runs(5));
        let group_global = json!({ "useGlobalAlertSettings": true, "alertSettings": group["alertSettings"] });
        assert_eq!(
            Settings::resolve(&check, Some(&group_global)).escalation,
            Escalation::Runs(3)
        );
        let time = json!({ "useGlobalAlertSettings": false, "alertSettings": {
            "escalationType": "TIME_BASED", "timeBasedEscalation": { "minutesFailingThreshold": 10 } } });
        assert_eq!(Settings::resolve(&time, None).escalation, Escalation::Minutes(10));
    }
}
