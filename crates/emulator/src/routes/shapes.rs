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
use crate::store::Objects;

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
/// text: a page of 100 channels can hold 100,000 subscriptions.
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
    for subscription in db.subscriptions(account, &wanted)? {
        let Some(list) = all.get_mut(&subscription.channel_id) else {
            continue;
        };
        let (check, group) = if subscription.owner_kind == Kind::Check.section() {
            (subscription.owner_id, Value::Null)
        } else {
            (Value::Null, subscription.owner_id)
        };
        if list.len() > 1 {
            list.push(',');
        }
        // `json!({ "checkId": .., "groupId": .., "activated": .. })` as
        // text, without building it (a `Value` displays as compact JSON).
        // Writing into a `String` cannot fail.
        let activated = subscription.activated;
        let _ = write!(
            list,
            r#"{{"checkId":{check},"groupId":{group},"activated":{activated}}}"#
        );
    }
    for list in all.values_mut() {
        list.push(']');
    }
    Ok(all)
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
}
