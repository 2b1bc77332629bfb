//! Private location keys: stored as SHA-256 digests (kind [`KEYS`], id:
//! the digest), the location's `keys` list holding only masked forms; a raw
//! key exists only in the response that creates it.

use monform_model::Kind;
use rusqlite::{Connection, OptionalExtension, params};
use serde_json::{Value, json};

use super::{AGENTS, AgentCaller, KEYS};
use crate::digest::sha256_hex as digest;
use crate::error::{ApiError, ApiResult};
use crate::ids::{self, id_text};
use crate::store::Objects;

fn mask(raw: &str) -> String {
    let tail: String = raw.chars().skip(raw.chars().count().saturating_sub(4)).collect();
    format!("{}{tail}", "*".repeat(raw.len().saturating_sub(4)))
}

/// Makes a key for the location `location_id`: stores its digest and
/// returns the raw key and its (masked) entry for the location's `keys`.
pub fn new_key(db: &Connection, account: &str, location_id: &str, now: &Value) -> rusqlite::Result<(String, Value)> {
    let raw = format!("pl_{}", uuid::Uuid::new_v4().simple());
    let entry = json!({ "id": ids::new(), "maskedKey": mask(&raw), "created_at": now, "updated_at": now });
    db.insert(
        account,
        KEYS,
        &digest(&raw),
        Some(location_id),
        0,
        &json!({ "keyId": entry["id"], "locationId": location_id }),
    )?;
    Ok((raw, entry))
}

fn location(db: &Connection, account: &str, id: &str) -> ApiResult<Value> {
    db.get(account, Kind::PrivateLocation.section(), id)?
        .ok_or_else(|| ApiError::not_found("private location", id))
}

/// A new key of a location: its entry with `rawKey` (shown this once).
pub fn create_key(db: &Connection, account: &str, location_id: &str) -> ApiResult<Value> {
    let mut stored = location(db, account, location_id)?;
    let (raw, entry) = new_key(db, account, location_id, &json!(crate::clock::now_text()))?;
    match stored["keys"].as_array_mut() {
        Some(keys) => keys.push(entry.clone()),
        None => stored["keys"] = json!([entry.clone()]),
    }
    db.replace(account, Kind::PrivateLocation.section(), location_id, &stored)?;
    let mut shown = entry;
    shown["rawKey"] = json!(raw);
    Ok(shown)
}

/// The keys of a location, masked.
pub fn keys(db: &Connection, account: &str, location_id: &str) -> ApiResult<Value> {
    Ok(location(db, account, location_id)?["keys"].clone())
}

/// Revokes a key: agents using it are refused from then on.
pub fn revoke_key(db: &Connection, account: &str, location_id: &str, key_id: &str) -> ApiResult<()> {
    let mut stored = location(db, account, location_id)?;
    let keys = stored["keys"].as_array_mut();
    let Some(keys) = keys.filter(|k| k.iter().any(|e| id_text(&e["id"]) == key_id)) else {
        return Err(ApiError::not_found("private location key", key_id));
    };
    keys.retain(|e| id_text(&e["id"]) != key_id);
    db.replace(account, Kind::PrivateLocation.section(), location_id, &stored)?;
    db.execute(
        "DELETE FROM objects WHERE account_id = ?1 AND kind = ?2 AND parent = ?3 AND json_extract(body, '$.keyId') = ?4",
        params![account, KEYS, location_id, key_id],
    )?;
    Ok(())
}

/// Forgets a deleted location's keys and agents.
pub fn forget_location(db: &Connection, account: &str, location_id: &str) -> rusqlite::Result<()> {
    db.execute(
        "DELETE FROM objects WHERE account_id = ?1 AND kind IN (?2, ?3) AND parent = ?4",
        params![account, KEYS, AGENTS, location_id],
    )?;
    Ok(())
}

/// The location a raw key belongs to, if the key exists (not revoked).
pub fn authenticate(db: &Connection, raw: &str) -> ApiResult<Option<AgentCaller>> {
    let found: Option<(String, String)> = db
        .query_row(
            "SELECT account_id, parent FROM objects WHERE kind = ?1 AND id = ?2",
            params![KEYS, digest(raw)],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    let Some((account, location_id)) = found else {
        return Ok(None);
    };
    let Some(stored) = db.get(&account, Kind::PrivateLocation.section(), &location_id)? else {
        return Ok(None);
    };
    Ok(Some(AgentCaller {
        account,
        slug: stored["slugName"].as_str().unwrap_or_default().to_owned(),
        location_id,
    }))
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

    #[test]
    fn keys_are_stored_as_digests_and_revocable() {
        let store = Store::in_memory().unwrap();
        let db = store.lock();
        let (caller, raw) = location(&db);
        assert_eq!(caller.slug, "office");
        let listed = keys(&db, "acc", "loc1").unwrap();
        assert!(!listed.to_string().contains(&raw));
        assert!(
            listed[0]["maskedKey"]
                .as_str()
                .unwrap()
                .ends_with(&raw[raw.len() - 4..])
        );
        let stored: i64 = db
            .query_row(
                "SELECT COUNT(*) FROM objects WHERE body LIKE ?1",
                [format!("%{raw}%")],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(stored, 0, "the raw key is stored nowhere");
        revoke_key(&db, "acc", "loc1", &id_text(&listed[0]["id"])).unwrap();
        assert!(authenticate(&db, &raw).unwrap().is_none());
        assert!(authenticate(&db, "pl_wrong").unwrap().is_none());
    }
}
