//! Fields responses carry that are not stored as sent (issue 28): a status
//! page's cards with their ids, timestamps and services in full (spec
//! 2.11), and an alert channel's `subscriptions` (the reference's
//! `AlertChannelRead`). Clients print them; a card's service with only an
//! `id` crashed one that read its name.

use std::collections::HashMap;
use std::fmt::Write as _;

use monform_model::Kind;
use rusqlite::Connection;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::ids::id_text;
use crate::store::{Objects, OwnerId, Subscription};

/// Status page services by id, for the `cards` of status pages.
pub fn services_of<'v>(
    db: &Connection,
    account: &str,
    cards: impl IntoIterator<Item = &'v Value>,
) -> rusqlite::Result<HashMap<String, Value>> {
    let mut services = HashMap::new();
    for card in cards.into_iter().filter_map(Value::as_array).flatten() {
        for service in card["services"].as_array().into_iter().flatten() {
            let id = id_text(&service["id"]);
            if !services.contains_key(&id)
                && let Some(found) = db.get(account, Kind::StatusPageService.section(), &id)?
            {
                services.insert(id, found);
            }
        }
    }
    Ok(services)
}

/// A status page's cards as spec 2.11 shows them: each with an id (stable
/// for its page and position, so reads and updates agree without storing
/// it: a stored card stays what the update body names), the page's
/// timestamps, and its services in full (`name`, `id`, `accountId`,
/// `created_at`, `updated_at`). A service deleted since is left out.
pub fn present_cards(page: &mut Value, services: &HashMap<String, Value>) {
    let page_id = id_text(&page["id"]);
    let (created, updated) = (page["created_at"].clone(), page["updated_at"].clone());
    let Some(cards) = page.get_mut("cards").and_then(Value::as_array_mut) else {
        return;
    };
    for (index, card) in cards.iter_mut().enumerate() {
        let shown: Vec<Value> = card["services"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| services.get(&id_text(&s["id"])))
            .map(|s| {
                json!({
                    "name": s["name"], "id": s["id"], "accountId": s["accountId"],
                    "created_at": s["created_at"], "updated_at": s["updated_at"],
                })
            })
            .collect();
        card["id"] = Value::String(card_id(&page_id, index));
        card["created_at"] = created.clone();
        card["updated_at"] = updated.clone();
        card["services"] = Value::Array(shown);
    }
}

/// A uuid-shaped id from the page's id and the card's position.
fn card_id(page_id: &str, index: usize) -> String {
    let digest = Sha256::digest(format!("{page_id}/card/{index}").as_bytes());
    let hex: String = digest.iter().take(16).map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// The subscriptions of each alert channel of `ids`, by channel id, as
/// JSON text: every check, then every group, subscribed to it (activated
/// or not), in creation order, as `{checkId, groupId, activated}`, from
/// the store's `subscriptions` table (no check's body is read). Written as
/// text straight from the rows read: a page of 100 channels can hold
/// 100,000 subscriptions.
pub fn subscriptions_of<'v>(
    db: &Connection,
    account: &str,
    ids: impl IntoIterator<Item = &'v Value>,
) -> rusqlite::Result<HashMap<String, String>> {
    let mut all: HashMap<String, String> = ids.into_iter().map(|id| (id_text(id), String::from("["))).collect();
    if all.is_empty() {
        return Ok(HashMap::new());
    }
    let wanted: Vec<String> = all.keys().cloned().collect();
    // Rows come by channel: its list is looked up once per channel.
    let mut current: Option<(String, String)> = None;
    db.subscriptions(account, &wanted, &mut |subscription| {
        if current.as_ref().is_none_or(|(id, _)| id != subscription.channel_id) {
            if let Some((id, list)) = current.take() {
                all.insert(id, list);
            }
            current = all.remove_entry(subscription.channel_id);
        }
        if let Some((_, list)) = current.as_mut() {
            push_subscription(list, subscription);
        }
    })?;
    if let Some((id, list)) = current {
        all.insert(id, list);
    }
    for list in all.values_mut() {
        list.push(']');
    }
    Ok(all)
}

/// Appends `{"checkId":..,"groupId":..,"activated":..}` for `subscription`
/// to a list's text, after a comma unless it is the list's first: what
/// `json!` of those fields would write, without building it.
fn push_subscription(list: &mut String, subscription: Subscription<'_>) {
    if list.len() > 1 {
        list.push(',');
    }
    let checks = subscription.owner_kind == Kind::Check.section();
    list.push_str(r#"{"checkId":"#);
    if checks {
        push_id(list, subscription.owner_id);
    } else {
        list.push_str("null");
    }
    list.push_str(r#","groupId":"#);
    if checks {
        list.push_str("null");
    } else {
        push_id(list, subscription.owner_id);
    }
    list.push_str(if subscription.activated {
        r#","activated":true}"#
    } else {
        r#","activated":false}"#
    });
}

/// An owner's id as JSON.
fn push_id(out: &mut String, id: OwnerId<'_>) {
    match id {
        OwnerId::Text(text) => push_json_string(out, text),
        // Writing into a `String` cannot fail.
        OwnerId::Number(n) => {
            let _ = write!(out, "{n}");
        }
        OwnerId::None => out.push_str("null"),
    }
}

/// `text` as a JSON string, as serde_json writes it: quoted as it is when
/// nothing in it needs an escape (ids do not), else through serde_json.
fn push_json_string(out: &mut String, text: &str) {
    if text.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        out.push('"');
        out.push_str(text);
        out.push('"');
    } else {
        out.push_str(&Value::from(text).to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn card_ids_are_uuid_shaped_and_stable_per_page_and_position() {
        let id = card_id("page", 0);
        assert_eq!(id.len(), 36);
        assert_eq!(id.matches('-').count(), 4);
        assert_eq!(id, card_id("page", 0));
        assert_ne!(id, card_id("page", 1));
        assert_ne!(id, card_id("other", 0));
    }

    #[test]
    fn a_subscription_is_the_text_json_gives() {
        let cases = [
            ("checks", OwnerId::Text("c-1"), true),
            ("checks", OwnerId::Text("quote \" back \\ tab \t é \u{1}"), false),
            ("groups", OwnerId::Number(-7), true),
            ("groups", OwnerId::None, false),
        ];
        let mut list = String::from("[");
        let mut values = Vec::new();
        for (owner_kind, owner_id, activated) in cases {
            push_subscription(
                &mut list,
                Subscription {
                    channel_id: "1",
                    owner_kind,
                    owner_id,
                    activated,
                },
            );
            let id = match owner_id {
                OwnerId::Text(text) => json!(text),
                OwnerId::Number(n) => json!(n),
                OwnerId::None => Value::Null,
            };
            let (check, group) = if owner_kind == "checks" {
                (id, Value::Null)
            } else {
                (Value::Null, id)
            };
            values.push(json!({ "checkId": check, "groupId": group, "activated": activated }));
        }
        list.push(']');
        assert_eq!(list, Value::Array(values).to_string());
    }
}
