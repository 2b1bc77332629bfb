//! The accounts and keys a server accepts, set up at start: the keys given
//! (`Config::api_keys`), or the development key. Keys are stored as digests
//! (`store/keys.rs`), so the database cannot give the development key back:
//! the server keeps it in a file of its own beside the database,
//! `<database>.key`, readable by its owner only, and prints it at every
//! start (how users get it). Keys given with `--api-key` are written
//! nowhere but as digests.

use std::path::{Path, PathBuf};

use crate::app::Config;
use crate::store::Store;

#[derive(Debug, thiserror::Error)]
pub enum ProvisionError {
    #[error(transparent)]
    Database(#[from] rusqlite::Error),
    #[error("cannot keep the development key in {path}: {source}")]
    KeyFile { path: String, source: std::io::Error },
}

/// Where the development key of the database `db` is kept.
pub fn key_file(db: &Path) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push(".key");
    PathBuf::from(name)
}

/// Makes sure the accounts and keys exist; returns the key to use and its
/// account.
pub fn provision(store: &Store, config: &Config) -> Result<(String, String), ProvisionError> {
    let legacy = store.take_legacy_first_key();
    let account = config
        .account_id
        .clone()
        .or(store.first_account()?)
        .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    if !config.api_keys.is_empty() {
        for key in &config.api_keys {
            store.ensure_key(&account, key)?;
        }
        return Ok((config.api_keys[0].clone(), account));
    }
    let key = development_key(config.db.as_deref(), legacy)?;
    store.ensure_key(&account, &key)?;
    Ok((key, account))
}

/// The development key: the one kept beside the database, else the first
/// key of a database that kept keys in clear, else a new one (kept from
/// then on). An in-memory database gets a new one each time.
fn development_key(db: Option<&Path>, legacy: Option<String>) -> Result<String, ProvisionError> {
    let Some(db) = db else {
        return Ok(legacy.unwrap_or_else(new_key));
    };
    let path = key_file(db);
    let error = |source| ProvisionError::KeyFile {
        path: path.display().to_string(),
        source,
    };
    match std::fs::read_to_string(&path) {
        Ok(text) if !text.trim().is_empty() => return Ok(text.trim().to_owned()),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(error(e)),
    }
    let key = legacy.unwrap_or_else(new_key);
    write_private(&path, &key).map_err(error)?;
    Ok(key)
}

fn new_key() -> String {
    format!("mf_dev_{}", uuid::Uuid::new_v4().simple())
}

/// Writes `text` to `path`, readable and writable by the owner only, all at
/// once (a temporary file renamed).
fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(".tmp");
    let temporary = PathBuf::from(temporary);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(&temporary)?;
    file.write_all(format!("{text}\n").as_bytes())?;
    file.sync_all()?;
    std::fs::rename(&temporary, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(db: &Path) -> Config {
        Config {
            db: Some(db.to_owned()),
            ..Config::default()
        }
    }

    #[test]
    fn the_development_key_is_kept_beside_the_database_for_its_owner_only() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("emulator.db");
        let store = Store::open(&db).unwrap();
        let (key, account) = provision(&store, &config(&db)).unwrap();
        assert!(key.starts_with("mf_dev_"));
        assert_eq!(store.account_of(&key).unwrap(), Some(account.clone()));
        let file = dir.path().join("emulator.db.key");
        assert_eq!(std::fs::read_to_string(&file).unwrap().trim(), key);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
        }
        drop(store);
        let store = Store::open(&db).unwrap();
        assert_eq!(provision(&store, &config(&db)).unwrap(), (key, account));
    }

    #[test]
    fn given_keys_are_not_written_to_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("emulator.db");
        let store = Store::open(&db).unwrap();
        let given = Config {
            api_keys: vec!["given-key".into()],
            account_id: Some("acme".into()),
            ..config(&db)
        };
        assert_eq!(
            provision(&store, &given).unwrap(),
            ("given-key".to_owned(), "acme".to_owned())
        );
        assert!(!key_file(&db).exists());
    }
}
