//! Status page incidents opened and resolved by checks with
//! `triggerIncident` (spec 2.1): a failure alert opens one on the check's
//! status page service, the recovery alert resolves it. Stored in the
//! shape of the reference's `StatusPageV2IncidentServices`; each record's
//! parent is the check that opened it, so its open incident is found again.

use rusqlite::Connection;
use serde_json::{Value, json};

use crate::clock::iso;
use crate::domain::notify::AlertType;
use crate::ids::{self, id_text};
use crate::store::Objects;
use monform_model::Kind;

/// The store section of incidents.
pub const INCIDENTS: &str = "incidents";

/// Opens or resolves the incident of `check` after it raised `kind` at `at`.
/// Checks without `triggerIncident`, or whose service is gone, do nothing.
pub fn after_alert(db: &Connection, account: &str, check: &Value, kind: AlertType, at: i64) -> rusqlite::Result<()> {
    let trigger = &check["triggerIncident"];
    if !trigger.is_object() {
        return Ok(());
    }
    let check_id = id_text(&check["id"]);
    match kind {
        AlertType::AlertFailure | AlertType::AlertDegradedFailure => {
            if open_of(db, account, &check_id)?.is_some() {
                return Ok(());
            }
            let service_id = id_text(&trigger["serviceId"]);
            let Some(service) = db.get(account, Kind::StatusPageService.section(), &service_id)? else {
                return Ok(());
            };
            let description = trigger["description"].as_str().unwrap_or_default();
            let incident = json!({
                "id": ids::new(),
                "name": trigger["name"],
                "severity": trigger["severity"],
                "services": [{ "id": service["id"], "name": service["name"] }],
                "incidentUpdates": [update(description, "INVESTIGATING", trigger["notifySubscribers"] == true, at)],
                "lastUpdateStatus": "INVESTIGATING",
                "duration": null,
                "created_at": iso(at),
                "updated_at": iso(at),
            });
            db.insert(
                account,
                INCIDENTS,
                &id_text(&incident["id"]),
                Some(&check_id),
                at,
                &incident,
            )
        }
        AlertType::AlertRecovery => {
            let Some(mut incident) = open_of(db, account, &check_id)? else {
                return Ok(());
            };
            let opened = crate::clock::parse(incident["created_at"].as_str().unwrap_or_default())
                .map(|t| t.timestamp_millis())
                .unwrap_or(at);
            let resolved = update(
                "The check recovered.",
                "RESOLVED",
                trigger["notifySubscribers"] == true,
                at,
            );
            if let Some(updates) = incident["incidentUpdates"].as_array_mut() {
                updates.push(resolved);
            }
            incident["lastUpdateStatus"] = json!("RESOLVED");
            incident["duration"] = json!((at - opened).max(0) / 1000);
            incident["updated_at"] = json!(iso(at));
            db.replace(account, INCIDENTS, &id_text(&incident["id"]), &incident)
                .map(|_| ())
        }
        _ => Ok(()),
    }
}

fn update(description: &str, status: &str, notify: bool, at: i64) -> Value {
    json!({
        "id": ids::new(),
        "description": description,
        "status": status,
        "publicIncidentUpdateDate": iso(at),
        "notifySubscribers": notify,
        "created_at": iso(at),
    })
}

/// The unresolved incident `check_id` opened, if any.
fn open_of(db: &Connection, account: &str, check_id: &str) -> rusqlite::Result<Option<Value>> {
    Ok(db
        .records(account, INCIDENTS, Some(check_id), i64::MIN, i64::MAX)?
        .into_iter()
        .map(|r| r.body)
        .find(|i| i["lastUpdateStatus"] != "RESOLVED"))
}

/// Whether `incident` concerns the status page service `service_id`.
pub fn concerns(incident: &Value, service_id: &str) -> bool {
    incident["services"]
        .as_array()
        .is_some_and(|s| s.iter().any(|s| id_text(&s["id"]) == service_id))
}
