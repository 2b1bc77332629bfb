//! The emulator's one SQLite file. Every object is a JSON document in
//! `objects`, keyed by account, kind and id, ordered by creation (`seq`).
//! Session, result and alert records live there too, under their own kinds.

use std::path::Path;

use parking_lot::{Mutex, MutexGuard};
use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;

mod keys;
mod paging;

use paging::page_of;

const SCHEMA_VERSION: i64 = 1;

const MIGRATION: &str = "
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS accounts (id TEXT PRIMARY KEY, created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS api_keys (key_sha256 TEXT PRIMARY KEY, account_id TEXT NOT NULL REFERENCES accounts(id), created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS objects (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    id TEXT NOT NULL,
    parent TEXT,
    ts INTEGER NOT NULL DEFAULT 0,
    body TEXT NOT NULL,
    UNIQUE (account_id, kind, id)
);
CREATE INDEX IF NOT EXISTS objects_by_kind ON objects (account_id, kind, seq);
CREATE INDEX IF NOT EXISTS objects_by_parent ON objects (account_id, kind, parent, ts);
CREATE INDEX IF NOT EXISTS objects_by_age ON objects (kind, ts);
CREATE INDEX IF NOT EXISTS objects_auto_subscribe ON objects (account_id, seq)
    WHERE kind = 'alertChannels' AND json_extract(body, '$.autoSubscribe') = 1;
CREATE TABLE IF NOT EXISTS rollups (
    account_id TEXT NOT NULL,
    check_id TEXT NOT NULL,
    location TEXT NOT NULL,
    hour INTEGER NOT NULL,
    count INTEGER NOT NULL,
    failures INTEGER NOT NULL,
    degraded INTEGER NOT NULL,
    timed INTEGER NOT NULL,
    sum_ms REAL NOT NULL,
    min_ms REAL,
    max_ms REAL,
    histogram TEXT NOT NULL,
    PRIMARY KEY (account_id, check_id, location, hour)
);
CREATE TABLE IF NOT EXISTS counters (account_id TEXT NOT NULL, kind TEXT NOT NULL, next INTEGER NOT NULL, PRIMARY KEY (account_id, kind));
CREATE TABLE IF NOT EXISTS result_minutes (
    account_id TEXT NOT NULL,
    check_id TEXT NOT NULL,
    location TEXT NOT NULL,
    minute INTEGER NOT NULL,
    runs TEXT NOT NULL,
    PRIMARY KEY (account_id, check_id, minute, location)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS result_minutes_by_age ON result_minutes (minute);
-- An account's minutes in a window (the report's read, compact::runs_by_check);
-- made when an older database opens, as everything here.
CREATE INDEX IF NOT EXISTS result_minutes_by_window ON result_minutes (account_id, minute, location);
CREATE TABLE IF NOT EXISTS simulated_outages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id TEXT,
    check_ref TEXT NOT NULL,
    starts_ms INTEGER NOT NULL,
    ends_ms INTEGER NOT NULL,
    response_ms INTEGER
);
";

/// How many objects of each kind an account has, kept by triggers so a
/// listing's total is one lookup, not a count over the kind (100,000 index
/// entries per page request at 100,000 checks). Filled from `objects` the
/// first time it is made, so older databases gain it without loss.
const COUNTS: &str = "
CREATE TABLE object_counts (account_id TEXT NOT NULL, kind TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (account_id, kind));
INSERT INTO object_counts (account_id, kind, n) SELECT account_id, kind, COUNT(*) FROM objects GROUP BY account_id, kind;
CREATE TRIGGER object_counts_insert AFTER INSERT ON objects BEGIN
    INSERT INTO object_counts (account_id, kind, n) VALUES (new.account_id, new.kind, 1)
    ON CONFLICT (account_id, kind) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER object_counts_delete AFTER DELETE ON objects BEGIN
    UPDATE object_counts SET n = n - 1 WHERE account_id = old.account_id AND kind = old.kind;
END;
";

/// Every alert channel subscription of a check or group, by channel, kept
/// by triggers: listing alert channels shows each one's subscriptions, and
/// finding them by walking every check's `alertChannelSubscriptions` (one
/// `json_each` over 100,000 bodies per page of channels) was 38% of the
/// emulator's CPU in a no-op plan at 100,000 checks. `owner_id` is the
/// owner's `id` as its body holds it (text for checks, a number for
/// groups); `activated` is 0 only for an explicit `false`. Filled from
/// `objects` the first time it is made, like `object_counts`.
const SUBSCRIPTIONS: &str = "
CREATE TABLE subscriptions (
    account_id TEXT NOT NULL,
    channel_id TEXT NOT NULL,
    owner_seq INTEGER NOT NULL,
    item INTEGER NOT NULL,
    owner_kind TEXT NOT NULL,
    owner_id,
    activated INTEGER NOT NULL,
    PRIMARY KEY (owner_seq, item)
);
CREATE VIEW subscription_rows AS
    SELECT o.account_id, CAST(json_extract(item.value, '$.alertChannelId') AS TEXT) AS channel_id,
           o.seq AS owner_seq, item.key AS item, o.kind AS owner_kind, json_extract(o.body, '$.id') AS owner_id,
           json_type(item.value, '$.activated') IS NOT 'false' AS activated
    FROM objects o, json_each(o.body, '$.alertChannelSubscriptions') item
    WHERE o.kind IN ('checks', 'groups') AND json_extract(item.value, '$.alertChannelId') IS NOT NULL;
INSERT INTO subscriptions SELECT * FROM subscription_rows;
CREATE TRIGGER subscriptions_insert AFTER INSERT ON objects WHEN new.kind IN ('checks', 'groups') BEGIN
    INSERT INTO subscriptions SELECT * FROM subscription_rows WHERE owner_seq = new.seq;
END;
CREATE TRIGGER subscriptions_update AFTER UPDATE OF body ON objects WHEN new.kind IN ('checks', 'groups') BEGIN
    DELETE FROM subscriptions WHERE owner_seq = old.seq;
    INSERT INTO subscriptions SELECT * FROM subscription_rows WHERE owner_seq = new.seq;
END;
CREATE TRIGGER subscriptions_delete AFTER DELETE ON objects WHEN old.kind IN ('checks', 'groups') BEGIN
    DELETE FROM subscriptions WHERE owner_seq = old.seq;
END;
";

/// A channel's subscriptions in the order a listing shows them (checks'
/// before groups', `'checks' < 'groups'`; then creation and list order),
/// every column the listing reads in the index: a page of channels is a
/// range of it per channel, with no sort and no table row read (sorting
/// 27,000 rows a page of 100 channels was most of that page's cost at
/// 100,000 checks). Replaces the index on `(account_id, channel_id)`, its
/// prefix, which older databases had.
const SUBSCRIPTIONS_LISTED: &str = "
CREATE INDEX IF NOT EXISTS subscriptions_listed
    ON subscriptions (account_id, channel_id, owner_kind, owner_seq, item, owner_id, activated);
DROP INDEX IF EXISTS subscriptions_by_channel;
";

/// Where pages start: the `seq` at each offset a listing has served, so the
/// next page of a listing read in order is a range of the index, not a walk
/// over every row before it (reading 1,000 pages of 100,000 checks walked
/// 50 million index entries). Creation only appends (`seq` grows), so an
/// offset moves only when a row of its kind is deleted: the trigger forgets
/// the kind's starts then. Per connection (TEMP): the store has one.
const PAGE_STARTS: &str = "
PRAGMA temp_store = MEMORY;
CREATE TEMP TABLE IF NOT EXISTS page_starts (account_id TEXT NOT NULL, kind TEXT NOT NULL, offset INTEGER NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY (account_id, kind, offset));
CREATE TEMP TRIGGER IF NOT EXISTS page_starts_forget AFTER DELETE ON main.objects BEGIN
    DELETE FROM page_starts WHERE account_id = old.account_id AND kind = old.kind;
END;
";

/// The database, shared by all requests: one connection behind a mutex, so
/// every transaction runs alone (no `SQLITE_BUSY`, no write skew between
/// requests) and the per-connection page starts stay right. Handlers are
/// async but take the mutex synchronously (`lock`): a request that has to
/// wait for it waits on a blocking thread, never on one of the runtime's
/// few workers (see `lock`).
pub struct Store {
    connection: Mutex<Connection>,
    /// The first key of a database that kept keys in clear, read once when
    /// it was migrated to digests (`keys.rs`), for the development key.
    legacy_first_key: std::sync::Mutex<Option<String>>,
}

/// A check's or group's subscription to an alert channel, as the
/// `subscriptions` table holds it (borrowed from the row being read).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Subscription<'r> {
    pub channel_id: &'r str,
    /// `checks` or `groups`.
    pub owner_kind: &'r str,
    /// The owner's `id` as its body holds it.
    pub owner_id: OwnerId<'r>,
    pub activated: bool,
}

/// An owner's `id` as its body holds it: text for checks, a number for
/// groups; anything else reads as no id.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum OwnerId<'r> {
    Text(&'r str),
    Number(i64),
    None,
}

/// A stored object or record.
#[derive(Debug, Clone)]
pub struct Row {
    pub id: String,
    pub body: Value,
}

impl Store {
    pub fn open(path: &Path) -> rusqlite::Result<Store> {
        let connection = Connection::open(path)?;
        Store::init(connection)
    }

    pub fn in_memory() -> rusqlite::Result<Store> {
        Store::init(Connection::open_in_memory()?)
    }

    fn init(connection: Connection) -> rusqlite::Result<Store> {
        // WAL: readers do not block the writer; NORMAL sync is durable across
        // process crashes (not power loss), which suits an emulator.
        connection.pragma_update(None, "journal_mode", "WAL")?;
        connection.pragma_update(None, "synchronous", "NORMAL")?;
        connection.pragma_update(None, "foreign_keys", "ON")?;
        // A page cache and a memory map large enough for 100,000 checks
        // (about 100 MiB): pages are read from memory, not copied in by
        // a read(2) each time SQLite's default 2 MiB cache misses.
        connection.pragma_update(None, "cache_size", -65_536)?;
        connection.pragma_update(None, "mmap_size", 512_i64 << 20)?;
        // Room for every statement the handlers prepare (rusqlite keeps 16).
        connection.set_prepared_statement_cache_capacity(128);
        let tx = connection.unchecked_transaction()?;
        tx.execute_batch(MIGRATION)?;
        // Tables kept by triggers, made (and filled) when a database first
        // opens without them.
        for (table, batch) in [("object_counts", COUNTS), ("subscriptions", SUBSCRIPTIONS)] {
            let made: bool = tx.query_row(
                "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1)",
                [table],
                |r| r.get(0),
            )?;
            if !made {
                tx.execute_batch(batch)?;
            }
        }
        tx.execute_batch(SUBSCRIPTIONS_LISTED)?;
        let legacy_first_key = keys::digest_clear_keys(&tx)?;
        tx.commit()?;
        connection.execute_batch(PAGE_STARTS)?;
        connection.execute(
            "INSERT INTO meta (key, value) VALUES ('schema_version', ?1) ON CONFLICT (key) DO NOTHING",
            params![SCHEMA_VERSION.to_string()],
        )?;
        Ok(Store {
            connection: Mutex::new(connection),
            legacy_first_key: std::sync::Mutex::new(legacy_first_key),
        })
    }

    /// The connection, once no other request holds it. Uncontended, this is
    /// a plain lock. Contended on a worker of a multi-thread runtime, the
    /// wait (and the work done under the guard until the handler's next
    /// `.await`) runs in `block_in_place`: the worker hands its queue to
    /// another thread first, so requests waiting for the store never stall
    /// the runtime (on 2 cores, two waiting requests used to stop every
    /// other request, `/openapi.json` and new connections included, until
    /// a slow transaction ended). A current-thread runtime cannot hand its
    /// only worker over; there, and outside any runtime, the wait blocks.
    /// parking_lot's mutex, not std's: it is eventually fair, so a waiting
    /// request is not starved by a task that locks again at once (the
    /// background settler, one session a transaction: behind it a trivial
    /// request waited 14 s under an OpenAPI fuzzer).
    pub fn lock(&self) -> MutexGuard<'_, Connection> {
        if let Some(guard) = self.connection.try_lock() {
            return guard;
        }
        let wait = || self.connection.lock();
        let multi_thread = tokio::runtime::Handle::try_current()
            .is_ok_and(|runtime| runtime.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread);
        if multi_thread {
            tokio::task::block_in_place(wait)
        } else {
            wait()
        }
    }

    /// Runs `f` in one transaction: all of it is written, or none.
    pub fn transaction<T, E: From<rusqlite::Error>>(
        &self,
        f: impl FnOnce(&rusqlite::Transaction) -> Result<T, E>,
    ) -> Result<T, E> {
        let mut connection = self.lock();
        let tx = connection.transaction()?;
        let value = f(&tx)?;
        if crate::faults::losing_writes() {
            // Answered as if stored (the fault of `Config::lost_write_rate`).
            // The numbers it drew stay drawn, as a PostgreSQL sequence's do
            // on a rollback: handed out again, a lost group's id 1 became
            // the next group's, and the client held one id for two objects.
            let drawn = drawn_numbers(&tx)?;
            tx.rollback()?;
            keep_drawn_numbers(&connection, &drawn)?;
        } else {
            tx.commit()?;
        }
        // Handed to the longest waiter, if any: a caller running one
        // transaction after another never starves the others.
        MutexGuard::unlock_fair(connection);
        Ok(value)
    }

    pub fn meta(&self, key: &str) -> rusqlite::Result<Option<String>> {
        self.lock()
            .query_row("SELECT value FROM meta WHERE key = ?1", params![key], |r| r.get(0))
            .optional()
    }

    pub fn set_meta(&self, key: &str, value: &str) -> rusqlite::Result<()> {
        self.lock().execute(
            "INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            params![key, value],
        )?;
        Ok(())
    }
}

/// The counters (`next_number`) as a transaction left them.
fn drawn_numbers(tx: &rusqlite::Transaction) -> rusqlite::Result<Vec<(String, String, i64)>> {
    tx.prepare_cached("SELECT account_id, kind, next FROM counters")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect()
}

/// Puts back counters a rolled back transaction had advanced.
fn keep_drawn_numbers(connection: &Connection, drawn: &[(String, String, i64)]) -> rusqlite::Result<()> {
    let mut upsert = connection.prepare_cached(
        "INSERT INTO counters (account_id, kind, next) VALUES (?1, ?2, ?3)
         ON CONFLICT (account_id, kind) DO UPDATE SET next = MAX(next, excluded.next)",
    )?;
    for (account, kind, next) in drawn {
        upsert.execute(params![account, kind, next])?;
    }
    Ok(())
}

/// The alert channels `autoSubscribe` puts on new checks: the partial
/// index's own WHERE, word for word (else SQLite cannot use it), and the
/// index named (without statistics SQLite would walk the kind's index and
/// parse every channel).
const AUTO_SUBSCRIBING: &str = "SELECT id, body FROM objects INDEXED BY objects_auto_subscribe WHERE account_id = ?1
     AND kind = 'alertChannels' AND json_extract(body, '$.autoSubscribe') = 1 ORDER BY seq";

/// The subscriptions to some channels (`?2`, a JSON array of ids), in
/// `subscriptions_listed`'s order: no sort (see there).
const SUBSCRIPTIONS_OF: &str = "SELECT channel_id, owner_kind, owner_id, activated FROM subscriptions
     WHERE account_id = ?1 AND channel_id IN (SELECT value FROM json_each(?2))
     ORDER BY channel_id, owner_kind, owner_seq, item";

/// Object operations inside a connection or transaction.
pub trait Objects {
    fn next_number(&self, account: &str, kind: &str) -> rusqlite::Result<i64>;
    fn insert(
        &self,
        account: &str,
        kind: &str,
        id: &str,
        parent: Option<&str>,
        ts: i64,
        body: &Value,
    ) -> rusqlite::Result<()>;
    fn get(&self, account: &str, kind: &str, id: &str) -> rusqlite::Result<Option<Value>>;
    fn replace(&self, account: &str, kind: &str, id: &str, body: &Value) -> rusqlite::Result<bool>;
    fn delete(&self, account: &str, kind: &str, id: &str) -> rusqlite::Result<bool>;
    /// One page in creation order, and the total count.
    fn page(&self, account: &str, kind: &str, offset: usize, limit: usize) -> rusqlite::Result<(Vec<Row>, usize)>;
    /// [`Objects::page`] with each body as its stored text, unparsed.
    fn page_text(
        &self,
        account: &str,
        kind: &str,
        offset: usize,
        limit: usize,
    ) -> rusqlite::Result<(Vec<String>, usize)>;
    /// The objects of `kind` among `ids` (in no particular order; those
    /// missing left out), in one query, each as its id and stored text.
    fn get_many_text(&self, account: &str, kind: &str, ids: &[String]) -> rusqlite::Result<Vec<(String, String)>>;
    fn all(&self, account: &str, kind: &str) -> rusqlite::Result<Vec<Row>>;
    /// Objects of `kind` whose value at the JSON `path` (`$.slugName`), as
    /// text, is `text`: filtered inside SQLite, so no object is parsed but
    /// those returned.
    fn find(&self, account: &str, kind: &str, path: &str, text: &str) -> rusqlite::Result<Vec<Row>>;
    /// The alert channels whose `autoSubscribe` is on, in creation order,
    /// which every check created without `autoAssignAlerts` subscribes to:
    /// read from their own partial index (`objects_auto_subscribe`), not
    /// by parsing every channel's body on every create (500 channels at
    /// 100,000 checks: 50 million parses in a cold apply).
    fn auto_subscribing_channels(&self, account: &str) -> rusqlite::Result<Vec<Row>>;
    /// Objects of `kind` whose list at `path` holds `text`: an item itself,
    /// or the item's `member` (`$.alertChannelId`) when given.
    fn find_in_list(
        &self,
        account: &str,
        kind: &str,
        path: &str,
        member: Option<&str>,
        text: &str,
    ) -> rusqlite::Result<Vec<Row>>;
    /// Records of `kind` under `parent` (or all), with `from <= ts < to`, newest first.
    fn records(
        &self,
        account: &str,
        kind: &str,
        parent: Option<&str>,
        from: i64,
        to: i64,
    ) -> rusqlite::Result<Vec<Row>>;
    /// [`Objects::records`] with each one's `ts` (bodies only), newest first.
    fn records_timed(
        &self,
        account: &str,
        kind: &str,
        parent: Option<&str>,
        from: i64,
        to: i64,
    ) -> rusqlite::Result<Vec<(i64, Value)>>;
    /// Hands each subscription to the alert channels `channel_ids` to
    /// `visit`, from the `subscriptions` table the triggers keep: by
    /// channel id, and each channel's checks' first, then groups', each in
    /// creation order and list order.
    fn subscriptions(
        &self,
        account: &str,
        channel_ids: &[String],
        visit: &mut dyn FnMut(Subscription<'_>),
    ) -> rusqlite::Result<()>;
    /// One page (`offset`, `limit`) of [`Objects::records`] with no parent,
    /// keeping those that pass every filter, and how many pass: filtered,
    /// counted and paged inside SQLite, so a listing over many records
    /// parses only its page (60,000 alert notifications took seconds).
    fn records_page(
        &self,
        account: &str,
        kind: &str,
        window: (i64, i64),
        filters: &[Filter],
        page: (usize, usize),
    ) -> rusqlite::Result<(Vec<Row>, usize)>;
}

/// A condition on a JSON field of a record: its value as text equals (or,
/// `equal: false`, differs from) `text`.
pub struct Filter {
    pub path: &'static str,
    pub text: String,
    pub equal: bool,
}

impl Objects for Connection {
    fn next_number(&self, account: &str, kind: &str) -> rusqlite::Result<i64> {
        self.prepare_cached(
            "INSERT INTO counters (account_id, kind, next) VALUES (?1, ?2, 2)
             ON CONFLICT (account_id, kind) DO UPDATE SET next = next + 1
             RETURNING next - 1",
        )?
        .query_row(params![account, kind], |r| r.get(0))
    }

    fn insert(
        &self,
        account: &str,
        kind: &str,
        id: &str,
        parent: Option<&str>,
        ts: i64,
        body: &Value,
    ) -> rusqlite::Result<()> {
        // Cached statements: parsing the SQL again cost as much as running it.
        self.prepare_cached(
            "INSERT INTO objects (account_id, kind, id, parent, ts, body) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?
        .execute(params![account, kind, id, parent, ts, body.to_string()])?;
        Ok(())
    }

    fn get(&self, account: &str, kind: &str, id: &str) -> rusqlite::Result<Option<Value>> {
        let text: Option<String> = self
            .prepare_cached("SELECT body FROM objects WHERE account_id = ?1 AND kind = ?2 AND id = ?3")?
            .query_row(params![account, kind, id], |r| r.get(0))
            .optional()?;
        Ok(text.and_then(|t| serde_json::from_str(&t).ok()))
    }

    fn replace(&self, account: &str, kind: &str, id: &str, body: &Value) -> rusqlite::Result<bool> {
        let changed = self
            .prepare_cached("UPDATE objects SET body = ?4 WHERE account_id = ?1 AND kind = ?2 AND id = ?3")?
            .execute(params![account, kind, id, body.to_string()])?;
        Ok(changed > 0)
    }

    fn delete(&self, account: &str, kind: &str, id: &str) -> rusqlite::Result<bool> {
        let changed = self
            .prepare_cached("DELETE FROM objects WHERE account_id = ?1 AND kind = ?2 AND id = ?3")?
            .execute(params![account, kind, id])?;
        Ok(changed > 0)
    }

    fn page(&self, account: &str, kind: &str, offset: usize, limit: usize) -> rusqlite::Result<(Vec<Row>, usize)> {
        page_of(self, account, kind, (offset, limit), |r| row_at(r, 1))
    }

    fn page_text(
        &self,
        account: &str,
        kind: &str,
        offset: usize,
        limit: usize,
    ) -> rusqlite::Result<(Vec<String>, usize)> {
        page_of(self, account, kind, (offset, limit), |r| r.get(2))
    }

    fn get_many_text(&self, account: &str, kind: &str, ids: &[String]) -> rusqlite::Result<Vec<(String, String)>> {
        let mut statement = self.prepare_cached(
            "SELECT id, body FROM objects WHERE account_id = ?1 AND kind = ?2
             AND id IN (SELECT value FROM json_each(?3))",
        )?;
        let ids = Value::from(ids.to_vec()).to_string();
        statement
            .query_map(params![account, kind, ids], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect()
    }

    fn all(&self, account: &str, kind: &str) -> rusqlite::Result<Vec<Row>> {
        let mut statement =
            self.prepare_cached("SELECT id, body FROM objects WHERE account_id = ?1 AND kind = ?2 ORDER BY seq")?;
        statement.query_map(params![account, kind], row)?.collect()
    }

    fn find(&self, account: &str, kind: &str, path: &str, text: &str) -> rusqlite::Result<Vec<Row>> {
        let mut statement = self.prepare_cached(
            "SELECT id, body FROM objects WHERE account_id = ?1 AND kind = ?2
             AND CAST(json_extract(body, ?3) AS TEXT) = ?4 ORDER BY seq",
        )?;
        statement.query_map(params![account, kind, path, text], row)?.collect()
    }

    fn auto_subscribing_channels(&self, account: &str) -> rusqlite::Result<Vec<Row>> {
        let mut statement = self.prepare_cached(AUTO_SUBSCRIBING)?;
        statement.query_map(params![account], row)?.collect()
    }

    fn find_in_list(
        &self,
        account: &str,
        kind: &str,
        path: &str,
        member: Option<&str>,
        text: &str,
    ) -> rusqlite::Result<Vec<Row>> {
        let mut statement = self.prepare_cached(
            "SELECT id, body FROM objects AS o WHERE account_id = ?1 AND kind = ?2 AND EXISTS (
                 SELECT 1 FROM json_each(o.body, ?3) AS item
                 WHERE CAST(CASE WHEN ?4 IS NULL THEN item.value ELSE json_extract(item.value, ?4) END AS TEXT) = ?5)
             ORDER BY seq",
        )?;
        statement
            .query_map(params![account, kind, path, member, text], row)?
            .collect()
    }

    fn records(
        &self,
        account: &str,
        kind: &str,
        parent: Option<&str>,
        from: i64,
        to: i64,
    ) -> rusqlite::Result<Vec<Row>> {
        let mut statement = self.prepare_cached(
            "SELECT id, body FROM objects WHERE account_id = ?1 AND kind = ?2 AND (?3 IS NULL OR parent = ?3)
             AND ts >= ?4 AND ts < ?5 ORDER BY ts DESC, seq DESC",
        )?;
        statement
            .query_map(params![account, kind, parent, from, to], row)?
            .collect()
    }

    fn records_timed(
        &self,
        account: &str,
        kind: &str,
        parent: Option<&str>,
        from: i64,
        to: i64,
    ) -> rusqlite::Result<Vec<(i64, Value)>> {
        let mut statement = self.prepare_cached(
            "SELECT ts, body FROM objects WHERE account_id = ?1 AND kind = ?2 AND (?3 IS NULL OR parent = ?3)
             AND ts >= ?4 AND ts < ?5 ORDER BY ts DESC, seq DESC",
        )?;
        statement
            .query_map(params![account, kind, parent, from, to], |r| {
                let body: String = r.get(1)?;
                Ok((r.get(0)?, serde_json::from_str(&body).unwrap_or(Value::Null)))
            })?
            .collect()
    }

    fn subscriptions(
        &self,
        account: &str,
        channel_ids: &[String],
        visit: &mut dyn FnMut(Subscription<'_>),
    ) -> rusqlite::Result<()> {
        use rusqlite::types::ValueRef;
        let mut statement = self.prepare_cached(SUBSCRIPTIONS_OF)?;
        let channel_ids = Value::from(channel_ids.to_vec()).to_string();
        let mut rows = statement.query(params![account, channel_ids])?;
        while let Some(r) = rows.next()? {
            let owner_id = match r.get_ref(2)? {
                ValueRef::Integer(n) => OwnerId::Number(n),
                ValueRef::Text(_) => OwnerId::Text(r.get_ref(2)?.as_str()?),
                _ => OwnerId::None,
            };
            visit(Subscription {
                channel_id: r.get_ref(0)?.as_str()?,
                owner_kind: r.get_ref(1)?.as_str()?,
                owner_id,
                activated: r.get(3)?,
            });
        }
        Ok(())
    }

    fn records_page(
        &self,
        account: &str,
        kind: &str,
        (from, to): (i64, i64),
        filters: &[Filter],
        (offset, limit): (usize, usize),
    ) -> rusqlite::Result<(Vec<Row>, usize)> {
        use rusqlite::types::Value as Sql;
        let (clause, extra) = filter_clause(filters);
        let base = "FROM objects WHERE account_id = ?1 AND kind = ?2 AND ts >= ?3 AND ts < ?4";
        let mut values = vec![
            Sql::Text(account.to_owned()),
            Sql::Text(kind.to_owned()),
            Sql::Integer(from),
            Sql::Integer(to),
        ];
        values.extend(extra);
        let total: i64 = self
            .prepare_cached(&format!("SELECT COUNT(*) {base}{clause}"))?
            .query_row(rusqlite::params_from_iter(values.iter()), |r| r.get(0))?;
        let n = values.len();
        values.push(Sql::Integer(i64::try_from(limit).unwrap_or(i64::MAX)));
        values.push(Sql::Integer(i64::try_from(offset).unwrap_or(i64::MAX)));
        let sql = format!(
            "SELECT id, body {base}{clause} ORDER BY ts DESC, seq DESC LIMIT ?{} OFFSET ?{}",
            n + 1,
            n + 2
        );
        let rows = self
            .prepare_cached(&sql)?
            .query_map(rusqlite::params_from_iter(values.iter()), row)?
            .collect::<rusqlite::Result<Vec<Row>>>()?;
        Ok((rows, usize::try_from(total).unwrap_or(0)))
    }
}

/// What `records_page` adds to its WHERE clause for `filters`, and the
/// parameters after the first four.
fn filter_clause(filters: &[Filter]) -> (String, Vec<rusqlite::types::Value>) {
    let mut sql = String::new();
    let mut values = Vec::new();
    for filter in filters {
        let n = 5 + values.len();
        let op = if filter.equal { "=" } else { "IS NOT" };
        sql.push_str(&format!(" AND CAST(json_extract(body, ?{n}) AS TEXT) {op} ?{}", n + 1));
        values.push(rusqlite::types::Value::Text(filter.path.to_owned()));
        values.push(rusqlite::types::Value::Text(filter.text.clone()));
    }
    (sql, values)
}

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Row> {
    row_at(r, 0)
}

/// A row whose id and body are columns `at` and `at + 1`.
fn row_at(r: &rusqlite::Row<'_>, at: usize) -> rusqlite::Result<Row> {
    let text: String = r.get(at + 1)?;
    Ok(Row {
        id: r.get(at)?,
        body: serde_json::from_str(&text).unwrap_or(Value::Null),
    })
}

#[cfg(test)]
mod tests;
