//! Accounts and their API keys, kept as SHA-256 digests (`crate::digest`)
//! as private location keys are: a copy of the database, a backup or a
//! `sqlite3 .dump` gives nobody a key. A request's key is hashed and looked
//! up. Databases made before kept keys in clear (`api_keys.key`); opening
//! one replaces each key by its digest, in the transaction that opens it.

use rusqlite::{Connection, OptionalExtension, params};

use super::Store;
use crate::clock;
use crate::digest::sha256_hex;

/// Replaces the clear keys of a database made before digests by their
/// digests, keeping their order; returns the first one (what the server
/// used as its development key), or `None` when there was nothing to do.
pub(super) fn digest_clear_keys(db: &Connection) -> rusqlite::Result<Option<String>> {
    let clear: bool = db.query_row(
        "SELECT EXISTS (SELECT 1 FROM pragma_table_info('api_keys') WHERE name = 'key')",
        [],
        |r| r.get(0),
    )?;
    if !clear {
        return Ok(None);
    }
    let rows: Vec<(String, String, String)> = db
        .prepare("SELECT key, account_id, created_at FROM api_keys ORDER BY rowid")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<rusqlite::Result<_>>()?;
    // Zeroed, not merely unlinked: the freed pages would keep the keys in the file.
    db.pragma_update(None, "secure_delete", "ON")?;
    db.execute_batch(
        "DROP TABLE api_keys;
         CREATE TABLE api_keys (key_sha256 TEXT PRIMARY KEY, account_id TEXT NOT NULL REFERENCES accounts(id), created_at TEXT NOT NULL);",
    )?;
    db.pragma_update(None, "secure_delete", "OFF")?;
    for (key, account, created) in &rows {
        db.execute(
            "INSERT INTO api_keys (key_sha256, account_id, created_at) VALUES (?1, ?2, ?3) ON CONFLICT DO NOTHING",
            params![sha256_hex(key), account, created],
        )?;
    }
    Ok(rows.into_iter().next().map(|(key, _, _)| key))
}

impl Store {
    /// Makes sure the account exists and accepts `key` (stored as its digest).
    pub fn ensure_key(&self, account_id: &str, key: &str) -> rusqlite::Result<()> {
        self.transaction(|tx| {
            let now = clock::now_text();
            tx.execute(
                "INSERT INTO accounts (id, created_at) VALUES (?1, ?2) ON CONFLICT DO NOTHING",
                params![account_id, now],
            )?;
            tx.execute(
                "INSERT INTO api_keys (key_sha256, account_id, created_at) VALUES (?1, ?2, ?3)
                 ON CONFLICT (key_sha256) DO UPDATE SET account_id = excluded.account_id",
                params![sha256_hex(key), account_id, now],
            )?;
            Ok::<_, rusqlite::Error>(())
        })
    }

    /// The account a key belongs to.
    pub fn account_of(&self, key: &str) -> rusqlite::Result<Option<String>> {
        // Cached: every request asks (preparing it again cost as much as running it).
        self.lock()
            .prepare_cached("SELECT account_id FROM api_keys WHERE key_sha256 = ?1")?
            .query_row(params![sha256_hex(key)], |r| r.get(0))
            .optional()
    }

    /// The account of the first key ever made (the development account).
    pub fn first_account(&self) -> rusqlite::Result<Option<String>> {
        self.lock()
            .query_row("SELECT account_id FROM api_keys ORDER BY rowid LIMIT 1", [], |r| {
                r.get(0)
            })
            .optional()
    }

    /// Whether any key exists.
    pub fn has_keys(&self) -> rusqlite::Result<bool> {
        self.lock()
            .query_row("SELECT EXISTS (SELECT 1 FROM api_keys)", [], |r| r.get(0))
    }

    /// The first key of a database that kept keys in clear, once: the
    /// server keeps it as its development key (`crate::accounts`).
    pub fn take_legacy_first_key(&self) -> Option<String> {
        self.legacy_first_key
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every byte of the database file and its write-ahead log.
    fn file_bytes(path: &std::path::Path) -> Vec<u8> {
        let mut bytes = std::fs::read(path).unwrap();
        if let Ok(wal) = std::fs::read(path.with_extension("sqlite-wal")) {
            bytes.extend(wal);
        }
        bytes
    }

    fn contains(haystack: &[u8], needle: &str) -> bool {
        haystack.windows(needle.len()).any(|w| w == needle.as_bytes())
    }

    #[test]
    fn keys_are_stored_as_digests_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db.sqlite");
        let store = Store::open(&path).unwrap();
        store.ensure_key("acc", "mf_raw_key_1234567890").unwrap();
        assert_eq!(
            store.account_of("mf_raw_key_1234567890").unwrap().as_deref(),
            Some("acc")
        );
        assert_eq!(store.account_of("mf_raw_key_123456789").unwrap(), None);
        assert_eq!(store.first_account().unwrap().as_deref(), Some("acc"));
        drop(store);
        let bytes = file_bytes(&path);
        assert!(!contains(&bytes, "mf_raw_key_1234567890"), "the raw key is in the file");
        assert!(contains(&bytes, &sha256_hex("mf_raw_key_1234567890")));
    }

    #[test]
    fn a_database_with_keys_in_clear_is_migrated_on_opening() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db.sqlite");
        {
            // The schema before digests.
            let db = Connection::open(&path).unwrap();
            db.execute_batch(
                "CREATE TABLE accounts (id TEXT PRIMARY KEY, created_at TEXT NOT NULL);
                 CREATE TABLE api_keys (key TEXT PRIMARY KEY, account_id TEXT NOT NULL REFERENCES accounts(id), created_at TEXT NOT NULL);
                 INSERT INTO accounts VALUES ('dev', 't'), ('other', 't');
                 INSERT INTO api_keys VALUES ('mf_dev_first_key_000', 'dev', 't'), ('second-key-000', 'other', 't');",
            )
            .unwrap();
            // Enough keys for several pages, which dropping frees.
            for i in 0..300 {
                db.execute(
                    "INSERT INTO api_keys VALUES (?1, 'other', 't')",
                    [format!("bulk-key-{i:04}-xxxxxxxxxxxxxxxxxxxx")],
                )
                .unwrap();
            }
        }
        assert!(
            contains(&file_bytes(&path), "bulk-key-0"),
            "the test sees keys in clear"
        );
        let store = Store::open(&path).unwrap();
        assert_eq!(
            store.account_of("mf_dev_first_key_000").unwrap().as_deref(),
            Some("dev")
        );
        assert_eq!(store.account_of("second-key-000").unwrap().as_deref(), Some("other"));
        assert_eq!(store.first_account().unwrap().as_deref(), Some("dev"));
        assert_eq!(store.take_legacy_first_key().as_deref(), Some("mf_dev_first_key_000"));
        assert_eq!(store.take_legacy_first_key(), None, "handed over once");
        // Checkpoint the log into the file, then look for the keys in it.
        store.lock().execute_batch("PRAGMA wal_checkpoint(TRUNCATE);").unwrap();
        drop(store);
        let bytes = file_bytes(&path);
        for key in ["mf_dev_first_key_000", "second-key-000", "bulk-key-0"] {
            assert!(!contains(&bytes, key), "{key} is still in the file");
        }
        // Opening again changes nothing.
        let store = Store::open(&path).unwrap();
        assert_eq!(store.take_legacy_first_key(), None);
        assert_eq!(store.account_of("second-key-000").unwrap().as_deref(), Some("other"));
    }
}
