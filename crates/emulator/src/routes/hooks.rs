//! What differs between kinds: ids, uniqueness, references that must exist,
//! deletes that must be refused, and fields the service computes.

use axum::http::StatusCode;
use monform_model::resources::CheckType;
use monform_model::wire::referenced_ids;
use monform_model::{Kind, Violation};
use rusqlite::Connection;
use serde_json::{Value, json};

use super::present::AUTO_SUBSCRIBE;
pub use super::present::{Context, present};
use crate::domain::agents;
use crate::domain::objects::noun;
use crate::error::{ApiError, ApiResult};
use crate::ids::{self, id_text};
use crate::resource::without_server_fields;
use crate::store::Objects;

/// Extra results of a create that are shown once (a private location's raw key).
#[derive(Default)]
pub struct Created {
    raw_key: Option<String>,
}

pub fn create_status(kind: Kind) -> StatusCode {
    // The status page service create answers 200 (api-contract.md: "sic").
    if kind == Kind::StatusPageService {
        StatusCode::OK
    } else {
        StatusCode::CREATED
    }
}

/// Fields of a stored object the service manages; an update keeps them.
pub fn server_fields(kind: Kind) -> &'static [&'static str] {
    match kind {
        Kind::PrivateLocation => &["keys"],
        Kind::StatusPageService => &["accountId"],
        // The reference's numeric `id` beside the `dashboardId` that names it.
        Kind::Dashboard => &["id"],
        // Not in the model (monform's files do not write it): kept by an
        // update that leaves it out, set by one that sends it (`wire_only`).
        Kind::AlertChannel => &[AUTO_SUBSCRIBE],
        _ => &[],
    }
}

/// A stored object as an update starts from: without what the service
/// manages (id, timestamps, server fields, a heartbeat's ping token and URL),
/// which a request body does not write.
pub fn editable(kind: Kind, stored: &Value) -> Value {
    let mut managed = server_fields(kind).to_vec();
    managed.push(kind.id_field());
    let mut body = without_server_fields(stored, &managed);
    if kind == Kind::Check
        && let Some(heartbeat) = body.get_mut("heartbeat").and_then(Value::as_object_mut)
    {
        heartbeat.remove("pingToken");
        heartbeat.remove("pingUrl");
    }
    body
}

/// Fields of request bodies the reference accepts and the model does not
/// know, taken out of a body before the model checks it.
#[derive(Debug, Default)]
pub struct WireOnly {
    /// An alert channel's `autoSubscribe`: new checks subscribe to it.
    auto_subscribe: Option<bool>,
}

/// Takes the reference's fields the model does not know out of `body`: an
/// alert channel's `autoSubscribe` (kept, see `keep_wire_only`), and a
/// status page card's `id` and `statusPageId` (`StatusPageV2CardUpdate`;
/// clients echo the cards they read). Card ids are derived from the page
/// and the card's position (`shapes::present_cards`), so those are checked
/// for type and dropped.
pub fn take_wire_only(kind: Kind, body: &mut Value) -> ApiResult<WireOnly> {
    let mut wire = WireOnly::default();
    match kind {
        Kind::AlertChannel => match body.as_object_mut().and_then(|o| o.remove(AUTO_SUBSCRIBE)) {
            None | Some(Value::Null) => {}
            Some(Value::Bool(flag)) => wire.auto_subscribe = Some(flag),
            Some(_) => return Err(ApiError::invalid(AUTO_SUBSCRIBE, "must be a boolean")),
        },
        Kind::StatusPage => {
            let cards = body.get_mut("cards").and_then(Value::as_array_mut);
            for (index, card) in cards.into_iter().flatten().enumerate() {
                let Some(card) = card.as_object_mut() else { continue };
                for field in ["id", "statusPageId"] {
                    match card.remove(field) {
                        None | Some(Value::Null | Value::String(_)) => {}
                        Some(_) => {
                            return Err(ApiError::invalid(
                                &format!("cards[{index}].{field}"),
                                "must be a string",
                            ));
                        }
                    }
                }
            }
        }
        _ => {}
    }
    Ok(wire)
}

/// Puts what `take_wire_only` took back into the object to store.
pub fn keep_wire_only(stored: &mut Value, wire: WireOnly) {
    if let Some(flag) = wire.auto_subscribe {
        stored[AUTO_SUBSCRIBE] = Value::Bool(flag);
    }
}

/// Variables carry their key in the body; the model knows it as the logical id.
pub fn split_key(kind: Kind, body: &Value) -> ApiResult<(Option<String>, Value)> {
    if kind != Kind::Variable {
        return Ok((None, body.clone()));
    }
    let mut body = body.clone();
    let key = body.as_object_mut().and_then(|o| o.remove("key"));
    match key {
        None => Ok((None, body)),
        Some(Value::String(k)) if !k.trim().is_empty() => Ok((Some(k), body)),
        Some(_) => Err(ApiError::invalid("key", "must be a non-empty string")),
    }
}

/// A variable's create body must name its key.
pub fn missing_key(kind: Kind, key: Option<&str>) -> &'static [&'static str] {
    if kind == Kind::Variable && key.is_none() {
        &["key"]
    } else {
        &[]
    }
}

/// Checks an update body against the stored object where the API forbids changes.
pub fn update_body(kind: Kind, stored: &Value, body: &Value) -> ApiResult<Value> {
    if kind == Kind::Variable
        && let Some(key) = body.get("key")
        && Some(key) != stored.get("key")
    {
        return Err(ApiError::invalid("key", "cannot be changed after creation"));
    }
    // Not in the service's update body: the slug is what checks and groups reference.
    if kind == Kind::PrivateLocation
        && let Some(slug) = body.get("slugName")
        && Some(slug) != stored.get("slugName")
    {
        return Err(ApiError::invalid("slugName", "cannot be changed after creation"));
    }
    let mut body = body.clone();
    if kind == Kind::Variable
        && let Some(object) = body.as_object_mut()
    {
        object.remove("key");
        // "Once set, the value cannot be unlocked" (spec 2.5): a secret
        // variable stays secret. Clients resend the reference's default
        // `secret: false` with every update; as the reference does, that
        // is accepted and changes nothing, rather than refused.
        if stored["secret"] == true {
            object.insert("secret".into(), Value::Bool(true));
        }
    }
    Ok(body)
}

/// Every referenced object must exist in the account.
pub fn check_references(db: &Connection, account: &str, kind: Kind, stored: &Value) -> ApiResult<()> {
    let mut violations = Vec::new();
    for (path, target, id) in referenced_ids(kind, stored) {
        let exists = if target == Kind::PrivateLocation {
            let slug = id.as_str().unwrap_or_default();
            !db.find(account, target.section(), "$.slugName", slug)?.is_empty()
        } else {
            db.get(account, target.section(), &id_text(&id))?.is_some()
        };
        if !exists {
            violations.push(Violation::new(
                path,
                format!("{} {} does not exist", noun(target), id_text(&id)),
            ));
        }
    }
    if violations.is_empty() {
        Ok(())
    } else {
        Err(ApiError::validation(&violations))
    }
}

/// The field the service keeps unique per account (409 on a clash).
pub fn unique_field(kind: Kind) -> Option<&'static str> {
    match kind {
        Kind::Dashboard => Some("customUrl"),
        Kind::StatusPage => Some("url"),
        Kind::PrivateLocation => Some("slugName"),
        _ => None,
    }
}

/// Whether a create can clash with an existing object (409): a unique
/// field, or a variable's key.
pub fn clashes_on_create(kind: Kind) -> bool {
    kind == Kind::Variable || unique_field(kind).is_some()
}

/// The kinds whose delete `before_delete` refuses (409) while others use them.
pub fn refuses_delete_while_used(kind: Kind) -> bool {
    matches!(kind, Kind::Group | Kind::PrivateLocation | Kind::Snippet)
}

/// Natural keys the service keeps unique: 409 on a clash.
pub fn check_unique(
    db: &Connection,
    account: &str,
    kind: Kind,
    stored: &Value,
    key: Option<&str>,
    except: Option<&str>,
) -> ApiResult<()> {
    if let Some(key) = key
        && kind == Kind::Variable
        && db.get(account, kind.section(), key)?.is_some()
    {
        return Err(ApiError::conflict(format!("environment variable {key} already exists")));
    }
    crate::domain::pages::check_public_names(db, account, kind, stored, except)?;
    let Some(field) = unique_field(kind) else {
        return Ok(());
    };
    let Some(value) = stored.get(field).filter(|v| !v.is_null()) else {
        return Ok(());
    };
    let id_field = kind.id_field();
    let clash = db
        .find(account, kind.section(), &format!("$.{field}"), &id_text(value))?
        .into_iter()
        .any(|r| {
            &r.body[field] == value
                && except.is_none_or(|e| r.body[id_field] != Value::String(e.to_owned()) && r.id != e)
        });
    if clash {
        return Err(ApiError::conflict(format!(
            "{field} {} is already taken",
            id_text(value)
        )));
    }
    Ok(())
}

/// Subscribes to every existing alert channel, as `autoAssignAlerts=true` does.
fn auto_assign(db: &Connection, account: &str, stored: &mut Value) -> ApiResult<()> {
    let mut subscriptions: Vec<Value> = stored["alertChannelSubscriptions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for channel in db.all(account, Kind::AlertChannel.section())? {
        let id = channel.body["id"].clone();
        if !subscriptions.iter().any(|s| s["alertChannelId"] == id) {
            subscriptions.push(json!({ "alertChannelId": id, "activated": true }));
        }
    }
    stored["alertChannelSubscriptions"] = Value::Array(subscriptions);
    Ok(())
}

/// Subscribes a new check to the channels whose `autoSubscribe` is on
/// (the reference: "automatically subscribe newly created checks"), when
/// `autoAssignAlerts` did not already subscribe it to every channel.
fn subscribe_automatically(db: &Connection, account: &str, stored: &mut Value) -> ApiResult<()> {
    let channels = db.auto_subscribing_channels(account)?;
    if channels.is_empty() {
        return Ok(());
    }
    let mut subscriptions: Vec<Value> = stored["alertChannelSubscriptions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for channel in channels {
        let id = channel.body["id"].clone();
        if !subscriptions.iter().any(|s| s["alertChannelId"] == id) {
            subscriptions.push(json!({ "alertChannelId": id, "activated": true }));
        }
    }
    stored["alertChannelSubscriptions"] = Value::Array(subscriptions);
    Ok(())
}

pub fn on_create(db: &Connection, account: &str, kind: Kind, stored: &mut Value, assign: bool) -> ApiResult<Created> {
    let mut created = Created::default();
    match kind {
        Kind::Check | Kind::Group => {
            if assign {
                auto_assign(db, account, stored)?;
            } else if kind == Kind::Check {
                subscribe_automatically(db, account, stored)?;
            }
            if stored.get("alertChannelSubscriptions").is_none() {
                stored["alertChannelSubscriptions"] = json!([]);
            }
            if CheckType::of_check(stored).is_ok_and(CheckType::is_pinged) {
                let token = ids::new();
                stored["heartbeat"]["pingToken"] = json!(token);
                stored["heartbeat"]["pingUrl"] = json!(format!("/ping/{token}"));
            }
        }
        Kind::PrivateLocation => {
            let (raw, entry) = agents::new_key(db, account, &id_text(&stored["id"]), &stored["created_at"])?;
            stored["keys"] = json!([entry]);
            created.raw_key = Some(raw);
        }
        Kind::StatusPageService => stored["accountId"] = json!(account),
        Kind::Dashboard => stored["id"] = json!(db.next_number(account, "dashboardNumbers")?),
        Kind::MaintenanceWindow => {
            let window = stored["id"].clone();
            let maintenance = json!({
                "id": ids::new(),
                "maintenanceWindowId": window,
                "startsAt": stored["startsAt"], "endsAt": stored["endsAt"],
                "status": "SCHEDULED",
                "created_at": stored["created_at"], "updated_at": stored["created_at"],
                "updates": [],
            });
            let id = maintenance["id"].as_str().unwrap_or_default().to_owned();
            db.insert(account, "maintenances", &id, Some(&id_text(&window)), 0, &maintenance)?;
        }
        _ => {}
    }
    Ok(created)
}

pub fn on_update(
    db: &Connection,
    account: &str,
    kind: Kind,
    before: &Value,
    stored: &mut Value,
    assign: bool,
) -> ApiResult<()> {
    if matches!(kind, Kind::Check | Kind::Group) {
        if stored.get("alertChannelSubscriptions").is_none() {
            stored["alertChannelSubscriptions"] = before["alertChannelSubscriptions"].clone();
        }
        if assign {
            auto_assign(db, account, stored)?;
        }
        if let (Some(token), Some(url)) = (before["heartbeat"].get("pingToken"), before["heartbeat"].get("pingUrl"))
            && CheckType::of_check(stored).is_ok_and(CheckType::is_pinged)
        {
            stored["heartbeat"]["pingToken"] = token.clone();
            stored["heartbeat"]["pingUrl"] = url.clone();
        }
    }
    Ok(())
}

/// Refuses deletes that would leave dangling references; cleans up subscriptions.
/// Users are found inside SQLite: a delete reads only the objects that use
/// the one deleted, however many checks the account has.
pub fn before_delete(db: &Connection, account: &str, kind: Kind, id: &str, stored: &Value) -> ApiResult<()> {
    let ids = |rows: Vec<crate::store::Row>| rows.into_iter().map(|r| r.id).collect::<Vec<_>>();
    let refuse = |what: &str, by: Vec<String>| -> ApiResult<()> {
        if by.is_empty() {
            return Ok(());
        }
        Err(ApiError::conflict(format!(
            "{} {id} is still used by {what} {}",
            noun(kind),
            by.join(", ")
        )))
    };
    let (checks, groups) = (Kind::Check.section(), Kind::Group.section());
    match kind {
        Kind::Group => refuse("checks", ids(db.find(account, checks, "$.groupId", id)?)),
        Kind::PrivateLocation => {
            let slug = stored["slugName"].as_str().unwrap_or_default();
            let users = |section| db.find_in_list(account, section, "$.privateLocations", None, slug);
            refuse("checks", ids(users(checks)?))?;
            refuse("groups", ids(users(groups)?))?;
            Ok(agents::forget_location(db, account, id)?)
        }
        Kind::Snippet => {
            let users = |section| -> rusqlite::Result<Vec<String>> {
                let mut found = ids(db.find(account, section, "$.setupSnippetId", id)?);
                for user in ids(db.find(account, section, "$.tearDownSnippetId", id)?) {
                    if !found.contains(&user) {
                        found.push(user);
                    }
                }
                Ok(found)
            };
            refuse("checks", users(checks)?)?;
            refuse("groups", users(groups)?)
        }
        Kind::AlertChannel => {
            for section in [checks, groups] {
                let subscribed = db.find_in_list(
                    account,
                    section,
                    "$.alertChannelSubscriptions",
                    Some("$.alertChannelId"),
                    id,
                )?;
                for mut row in subscribed {
                    if let Some(list) = row.body["alertChannelSubscriptions"].as_array_mut() {
                        list.retain(|s| id_text(&s["alertChannelId"]) != id);
                        db.replace(account, section, &row.id, &row.body)?;
                    }
                }
            }
            Ok(())
        }
        Kind::Check => {
            // A new check with the same id never inherits an open alert.
            db.delete(account, crate::domain::alerts::ALERT_STATES, id)?;
            Ok(())
        }
        Kind::MaintenanceWindow => {
            for row in db.records(account, "maintenances", Some(id), i64::MIN, i64::MAX)? {
                db.delete(account, "maintenances", &row.id)?;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

pub fn present_created(kind: Kind, body: Value, created: Created, context: &Context) -> Value {
    let mut body = present(kind, body, context);
    if let (Some(raw), Some(key)) = (created.raw_key, body.get_mut("keys").and_then(|k| k.get_mut(0))) {
        key["rawKey"] = Value::String(raw);
    }
    body
}
