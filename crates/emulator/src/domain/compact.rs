//! Compacted check results: a check's runs kept per location and minute
//! (the `result_minutes` table), a few bytes a run instead of a whole
//! result record, so 30 days of a check running every 10 seconds (259,200
//! runs a location) stay small and a clock jump writes them in seconds.
//!
//! What is kept of a run: when it stopped (to the millisecond), whether it
//! failed (`hasFailures`), errored (`hasErrors`) or was degraded, and its
//! response time: everything an availability or latency objective, the
//! report and the analytics' response times read. The result listings and
//! analytics read compacted runs back as FINAL result records
//! ([`records`]) with those fields and no response details (`apiCheckResult`
//! and the like are null, `error` too); their ids are derived from the
//! check, location and time, so a cursor over them is stable.
//!
//! Where runs come from: runs a clock jump made (`domain::simulate`), and
//! FINAL results beyond the newest [`RAW_PER_CHECK`] of a check
//! ([`compact_beyond`], with the retention sweep, at most hourly). ATTEMPT and
//! cancelled results beyond those are dropped, as roll-ups drop them.
//! Compacted runs older than 30 days are rolled into the hourly roll-ups
//! by `retention::sweep`, like raw results.

use std::collections::{BTreeMap, HashMap};

use monform_model::resources::CheckType;
use rusqlite::{Connection, params};
use serde_json::{Value, json};

use crate::clock::iso;
use crate::domain::sessions::results::CHECK_RESULTS;
use crate::domain::sessions::runs::fnv;

const MINUTE_MS: i64 = 60_000;

/// How many of a check's newest results the sweep keeps whole (a day of a
/// check running every minute from one location; a few hours of one
/// running every 10 seconds from several).
pub const RAW_PER_CHECK: usize = 2_000;

const FAILED: u64 = 1;
const ERRORED: u64 = 2;
const DEGRADED: u64 = 4;

/// One run, compacted.
#[derive(Debug, Clone, PartialEq)]
pub struct CompactRun {
    pub location: String,
    /// When it stopped, UNIX ms.
    pub stopped_ms: i64,
    pub has_failures: bool,
    pub has_errors: bool,
    pub is_degraded: bool,
    pub response_ms: f64,
}

impl CompactRun {
    /// The compacted form of a stored FINAL result record (stamped `ts`).
    pub fn of_record(record: &Value, ts: i64) -> CompactRun {
        CompactRun {
            location: record["runLocation"].as_str().unwrap_or_default().to_owned(),
            stopped_ms: ts,
            has_failures: record["hasFailures"] == true,
            has_errors: record["hasErrors"] == true,
            is_degraded: record["isDegraded"] == true,
            response_ms: record["responseTime"].as_f64().unwrap_or(0.0),
        }
    }

    fn flags(&self) -> u64 {
        u64::from(self.has_failures) * FAILED
            + u64::from(self.has_errors) * ERRORED
            + u64::from(self.is_degraded) * DEGRADED
    }

    /// The result record this run stands for (the API form of a FINAL
    /// result), for `check` (its id, name and type).
    pub fn record(&self, check_id: &str, check: &Value) -> Value {
        let hash = fnv(&format!("{check_id}\u{0}{}\u{0}{}", self.location, self.stopped_ms));
        let id = uuid::Uuid::from_u64_pair(hash, fnv(&format!("{hash}{check_id}"))).to_string();
        let is_api = CheckType::of_check(check) == Ok(CheckType::Api);
        let started = self.stopped_ms - self.response_ms.round() as i64;
        json!({
            "id": id,
            "name": check["name"],
            "checkId": check_id,
            "hasFailures": self.has_failures,
            "hasErrors": self.has_errors,
            "isDegraded": if is_api { json!(self.is_degraded) } else { Value::Null },
            "isCancelled": false,
            "overMaxResponseTime": if is_api { json!(false) } else { Value::Null },
            "runLocation": self.location,
            "startedAt": iso(started),
            "stoppedAt": iso(self.stopped_ms),
            "created_at": iso(self.stopped_ms),
            "responseTime": self.response_ms,
            "apiCheckResult": null,
            "browserCheckResult": null,
            "multiStepCheckResult": null,
            "agenticCheckResult": null,
            "playwrightCheckResult": null,
            "checkRunId": hash % 1_000_000_000,
            "attempts": 0,
            "resultType": "FINAL",
            "sequenceId": id,
            "traceId": null,
            "errorGroupIds": [],
            "error": null,
            "runResult": null,
            // Not part of the API form (stripped by `reads`), as stored results.
            "checkType": check["checkType"],
        })
    }
}

/// Adds `runs` of a check to its minute buckets (any order; runs already
/// there stay).
pub fn add(db: &Connection, account: &str, check_id: &str, runs: &[CompactRun]) -> rusqlite::Result<()> {
    let mut buckets: BTreeMap<(i64, &str), Vec<&CompactRun>> = BTreeMap::new();
    for run in runs {
        buckets
            .entry((run.stopped_ms.div_euclid(MINUTE_MS), run.location.as_str()))
            .or_default()
            .push(run);
    }
    let mut read = db.prepare_cached(
        "SELECT runs FROM result_minutes WHERE account_id = ?1 AND check_id = ?2 AND minute = ?3 AND location = ?4",
    )?;
    let mut write = db.prepare_cached(
        "INSERT INTO result_minutes (account_id, check_id, location, minute, runs) VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (account_id, check_id, minute, location) DO UPDATE SET runs = excluded.runs",
    )?;
    for ((minute, location), runs) in buckets {
        let mut entries: Vec<Value> =
            match read.query_row(params![account, check_id, minute, location], |r| r.get::<_, String>(0)) {
                Ok(text) => serde_json::from_str(&text).unwrap_or_default(),
                Err(rusqlite::Error::QueryReturnedNoRows) => Vec::new(),
                Err(e) => return Err(e),
            };
        for run in runs {
            // [ms into the minute, flags, response time in ms]
            entries.push(json!([
                run.stopped_ms - minute * MINUTE_MS,
                run.flags(),
                run.response_ms
            ]));
        }
        entries.sort_by_key(|e| e[0].as_i64().unwrap_or(0));
        write.execute(params![
            account,
            check_id,
            location,
            minute,
            Value::Array(entries).to_string()
        ])?;
    }
    Ok(())
}

fn unpack(location: String, minute: i64, runs: &str) -> Vec<CompactRun> {
    // The form `add` writes, read typed (a report reads 100,000s of them);
    // anything else as before, field by field.
    if let Ok(entries) = serde_json::from_str::<Vec<(i64, u64, f64)>>(runs) {
        return entries
            .into_iter()
            .map(|(offset, flags, response_ms)| CompactRun {
                location: location.clone(),
                stopped_ms: minute * MINUTE_MS + offset,
                has_failures: flags & FAILED != 0,
                has_errors: flags & ERRORED != 0,
                is_degraded: flags & DEGRADED != 0,
                response_ms,
            })
            .collect();
    }
    let entries: Vec<Value> = serde_json::from_str(runs).unwrap_or_default();
    entries
        .iter()
        .map(|e| {
            let flags = e[1].as_u64().unwrap_or(0);
            CompactRun {
                location: location.clone(),
                stopped_ms: minute * MINUTE_MS + e[0].as_i64().unwrap_or(0),
                has_failures: flags & FAILED != 0,
                has_errors: flags & ERRORED != 0,
                is_degraded: flags & DEGRADED != 0,
                response_ms: e[2].as_f64().unwrap_or(0.0),
            }
        })
        .collect()
}

/// A check's compacted runs that stopped in `from..to`, oldest first.
pub fn runs(
    db: &Connection,
    account: &str,
    check_id: &str,
    (from, to): (i64, i64),
) -> rusqlite::Result<Vec<CompactRun>> {
    let mut statement = db.prepare_cached(
        "SELECT location, minute, runs FROM result_minutes
         WHERE account_id = ?1 AND check_id = ?2 AND minute >= ?3 AND minute <= ?4 ORDER BY minute, location",
    )?;
    let rows = statement.query_map(
        params![account, check_id, from.div_euclid(MINUTE_MS), to.div_euclid(MINUTE_MS)],
        |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?, r.get::<_, String>(2)?)),
    )?;
    let mut out = Vec::new();
    for row in rows {
        let (location, minute, text) = row?;
        out.extend(
            unpack(location, minute, &text)
                .into_iter()
                .filter(|run| run.stopped_ms >= from && run.stopped_ms < to),
        );
    }
    out.sort_by_key(|run| run.stopped_ms);
    Ok(out)
}

/// Every check's minutes of an account in a window of minutes: a range of
/// `result_minutes_by_window` (account, minute, location), so a 6-hour
/// window reads its 360 minutes' rows, not the account's 30 days (the
/// primary key leads with the check: by it, `account_id = ?` was all the
/// read could use). In the index's order, minute and location: each
/// check's rows come as its own read (`runs`) has them, and nothing is sorted.
const RUNS_IN_WINDOW: &str = "SELECT check_id, location, minute, runs FROM result_minutes
     WHERE account_id = ?1 AND minute >= ?2 AND minute <= ?3 ORDER BY minute, location";

/// [`runs`] of every check of the account, by check id: one query for the
/// report (10,000 checks made 10,000 queries).
pub fn runs_by_check(
    db: &Connection,
    account: &str,
    (from, to): (i64, i64),
) -> rusqlite::Result<HashMap<String, Vec<CompactRun>>> {
    let mut statement = db.prepare_cached(RUNS_IN_WINDOW)?;
    let mut rows = statement.query(params![account, from.div_euclid(MINUTE_MS), to.div_euclid(MINUTE_MS)])?;
    let mut out: HashMap<String, Vec<CompactRun>> = HashMap::new();
    while let Some(row) = rows.next()? {
        let (check, location, minute): (String, String, i64) = (row.get(0)?, row.get(1)?, row.get(2)?);
        let text: String = row.get(3)?;
        out.entry(check).or_default().extend(
            unpack(location, minute, &text)
                .into_iter()
                .filter(|run| run.stopped_ms >= from && run.stopped_ms < to),
        );
    }
    for runs in out.values_mut() {
        runs.sort_by_key(|run| run.stopped_ms);
    }
    Ok(out)
}

/// `runs` as result records with their time (UNIX ms), for merging with
/// stored results.
pub fn records(
    db: &Connection,
    account: &str,
    check_id: &str,
    check: &Value,
    window: (i64, i64),
) -> rusqlite::Result<Vec<(i64, Value)>> {
    Ok(runs(db, account, check_id, window)?
        .iter()
        .map(|run| (run.stopped_ms, run.record(check_id, check)))
        .collect())
}

/// Compacts the FINAL, not cancelled results of every check beyond its
/// newest `keep` and deletes those beyond `keep` (ATTEMPT and cancelled
/// ones too). Returns how many results it deleted. Run it in a transaction.
pub fn compact_beyond(db: &Connection, keep: usize) -> rusqlite::Result<usize> {
    let crowded: Vec<(String, String)> = {
        let mut statement = db.prepare_cached(
            "SELECT account_id, parent FROM objects WHERE kind = ?1 AND parent IS NOT NULL
             GROUP BY account_id, parent HAVING COUNT(*) > ?2",
        )?;
        statement
            .query_map(params![CHECK_RESULTS, keep as i64], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?
    };
    let mut deleted = 0;
    for (account, check_id) in crowded {
        let old: Vec<(String, i64, String)> = {
            let mut statement = db.prepare_cached(
                "SELECT id, ts, body FROM objects WHERE account_id = ?1 AND kind = ?2 AND parent = ?3
                 ORDER BY ts DESC, seq DESC LIMIT -1 OFFSET ?4",
            )?;
            statement
                .query_map(params![account, CHECK_RESULTS, check_id, keep as i64], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                })?
                .collect::<rusqlite::Result<_>>()?
        };
        let mut runs = Vec::new();
        for (_, ts, body) in &old {
            let Ok(record) = serde_json::from_str::<Value>(body) else {
                continue;
            };
            if record["resultType"] == "FINAL" && record["isCancelled"] != true {
                runs.push(CompactRun::of_record(&record, *ts));
            }
        }
        add(db, &account, &check_id, &runs)?;
        let mut delete = db.prepare_cached("DELETE FROM objects WHERE account_id = ?1 AND kind = ?2 AND id = ?3")?;
        for (id, _, _) in &old {
            deleted += delete.execute(params![account, CHECK_RESULTS, id])?;
        }
    }
    Ok(deleted)
}

/// Takes out every compacted run that stopped before `cutoff`, by account
/// and check, for the retention sweep to roll up.
pub fn take_older(db: &Connection, cutoff: i64) -> rusqlite::Result<Vec<(String, String, CompactRun)>> {
    let minute = cutoff.div_euclid(MINUTE_MS);
    let rows: Vec<(String, String, String, i64, String)> = {
        let mut statement = db.prepare_cached(
            "SELECT account_id, check_id, location, minute, runs FROM result_minutes WHERE minute <= ?1",
        )?;
        statement
            .query_map([minute], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
            })?
            .collect::<rusqlite::Result<_>>()?
    };
    let mut out = Vec::new();
    for (account, check, location, minute, text) in rows {
        let (older, newer): (Vec<CompactRun>, Vec<CompactRun>) = unpack(location.clone(), minute, &text)
            .into_iter()
            .partition(|run| run.stopped_ms < cutoff);
        db.execute(
            "DELETE FROM result_minutes WHERE account_id = ?1 AND check_id = ?2 AND minute = ?3 AND location = ?4",
            params![account, check, minute, location],
        )?;
        add(db, &account, &check, &newer)?;
        out.extend(older.into_iter().map(|run| (account.clone(), check.clone(), run)));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Objects, Store};

    fn run(location: &str, stopped_ms: i64, failed: bool, ms: f64) -> CompactRun {
        CompactRun {
            location: location.into(),
            stopped_ms,
            has_failures: failed,
            has_errors: false,
            is_degraded: false,
            response_ms: ms,
        }
    }

    #[test]
    fn runs_come_back_as_they_went_in() {
        let store = Store::in_memory().unwrap();
        let db = store.lock();
        let runs_in = [
            run("eu-west-1", 120_000, false, 80.5),
            run("eu-west-1", 130_000, true, 2000.0),
            run("us-east-1", 125_000, false, 90.0),
            run("eu-west-1", 61_000, false, 70.0),
        ];
        add(&db, "acc", "c1", &runs_in[..2]).unwrap();
        add(&db, "acc", "c1", &runs_in[2..]).unwrap();
        let back = runs(&db, "acc", "c1", (0, 200_000)).unwrap();
        let stamps: Vec<i64> = back.iter().map(|r| r.stopped_ms).collect();
        assert_eq!(stamps, [61_000, 120_000, 125_000, 130_000]);
        assert_eq!(back[3], runs_in[1]);
        // Half-open windows, to the millisecond.
        assert_eq!(runs(&db, "acc", "c1", (120_000, 130_000)).unwrap().len(), 2);
        let check = json!({"name": "Checkout", "checkType": "API"});
        let record = back[3].record("c1", &check);
        assert_eq!(record["hasFailures"], true);
        assert_eq!(record["stoppedAt"], "1970-01-01T00:02:10.000Z");
        assert_eq!(record["startedAt"], "1970-01-01T00:02:08.000Z");
        assert_eq!(record["isDegraded"], false);
        assert_eq!(record["id"], back[3].record("c1", &check)["id"], "ids are stable");
        assert_ne!(record["id"], back[2].record("c1", &check)["id"]);
    }

    #[test]
    fn results_beyond_the_newest_are_compacted() {
        let store = Store::in_memory().unwrap();
        let db = store.lock();
        for i in 0..5_i64 {
            let record = json!({"resultType": "FINAL", "hasFailures": i == 0, "responseTime": 100 + i,
                "runLocation": "eu-west-1"});
            db.insert("acc", CHECK_RESULTS, &format!("r{i}"), Some("c1"), i * 1000, &record)
                .unwrap();
        }
        let attempt = json!({"resultType": "ATTEMPT", "hasFailures": true, "runLocation": "eu-west-1"});
        db.insert("acc", CHECK_RESULTS, "a", Some("c1"), 500, &attempt).unwrap();
        assert_eq!(compact_beyond(&db, 3).unwrap(), 3);
        assert!(db.get("acc", CHECK_RESULTS, "r4").unwrap().is_some());
        assert!(db.get("acc", CHECK_RESULTS, "r1").unwrap().is_none());
        let compacted = runs(&db, "acc", "c1", (0, 10_000)).unwrap();
        assert_eq!(compacted.len(), 2, "the ATTEMPT result is dropped: {compacted:?}");
        assert!(compacted[0].has_failures);
        assert_eq!(compacted[1].response_ms, 101.0);
        assert_eq!(compact_beyond(&db, 3).unwrap(), 0);
    }

    /// What SQLite will do for `sql`: the details of its query plan.
    fn plan(db: &Connection, sql: &str) -> Vec<String> {
        let mut statement = db.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
        let details = statement
            .query_map(params!["acc", 100, 200], |r| r.get::<_, String>(3))
            .unwrap()
            .collect::<rusqlite::Result<Vec<_>>>();
        details.unwrap()
    }

    /// The report's window read is a range of an index on the account and
    /// the minute: only the window's rows, not every row of the account
    /// (the primary key leads with the check, so `account_id = ?` alone
    /// was all it could use: 30 days of minutes read for a 6-hour window).
    #[test]
    fn the_accounts_window_is_a_search_of_the_index_with_both_bounds() {
        let store = Store::in_memory().unwrap();
        let db = store.lock();
        assert_eq!(
            plan(&db, RUNS_IN_WINDOW),
            ["SEARCH result_minutes USING INDEX result_minutes_by_window (account_id=? AND minute>? AND minute<?)"],
            "no SCAN, no sort"
        );
    }

    /// Every check's runs in a window, as each check's own read gives
    /// them: the edges to the millisecond (the first minute's runs before
    /// `from` and the last one's from `to` on are out), ties between
    /// locations in their order, another account's runs apart.
    #[test]
    fn the_accounts_window_holds_each_checks_runs_to_its_edges() {
        let store = Store::in_memory().unwrap();
        let db = store.lock();
        let (from, to) = (120_500, 300_000);
        add(
            &db,
            "acc",
            "c1",
            &[
                run("eu-west-1", 60_000, false, 1.0),
                run("eu-west-1", 120_499, false, 2.0),
                run("us-east-1", 120_500, true, 3.0),
                run("eu-west-1", 120_500, false, 4.0),
                run("eu-west-1", 299_999, false, 5.0),
                run("eu-west-1", 300_000, false, 6.0),
                run("eu-west-1", 360_000, false, 7.0),
            ],
        )
        .unwrap();
        add(&db, "acc", "c2", &[run("ap-south-1", 200_000, false, 8.0)]).unwrap();
        add(&db, "acc", "c3", &[run("ap-south-1", 400_000, false, 9.0)]).unwrap();
        add(&db, "other", "c1", &[run("eu-west-1", 200_000, false, 10.0)]).unwrap();
        let all = runs_by_check(&db, "acc", (from, to)).unwrap();
        let mut checks: Vec<&String> = all.keys().collect();
        checks.sort();
        assert_eq!(checks, ["c1", "c2"], "c3 ran outside the window");
        for check in ["c1", "c2"] {
            assert_eq!(all[check], runs(&db, "acc", check, (from, to)).unwrap(), "{check}");
        }
        let c1: Vec<(&str, i64, f64)> = all["c1"]
            .iter()
            .map(|r| (r.location.as_str(), r.stopped_ms, r.response_ms))
            .collect();
        assert_eq!(
            c1,
            [
                ("eu-west-1", 120_500, 4.0),
                ("us-east-1", 120_500, 3.0),
                ("eu-west-1", 299_999, 5.0)
            ]
        );
    }

    /// A database made before the window's index gains it on opening
    /// (`monform serve --db old.db`), its runs read back as before.
    #[test]
    fn a_database_from_before_the_windows_index_gains_it_on_opening() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("emulator.db");
        {
            let store = Store::open(&path).unwrap();
            let db = store.lock();
            add(&db, "acc", "c1", &[run("eu-west-1", 150_000, false, 1.0)]).unwrap();
            db.execute_batch("DROP INDEX result_minutes_by_window").unwrap();
            assert_eq!(
                plan(&db, RUNS_IN_WINDOW)[0],
                "SEARCH result_minutes USING PRIMARY KEY (account_id=?)",
                "the read without the index"
            );
        }
        let store = Store::open(&path).unwrap();
        let db = store.lock();
        assert!(plan(&db, RUNS_IN_WINDOW)[0].contains("USING INDEX result_minutes_by_window"));
        let all = runs_by_check(&db, "acc", (0, 600_000)).unwrap();
        assert_eq!(all["c1"], [run("eu-west-1", 150_000, false, 1.0)]);
    }

    #[test]
    fn old_runs_are_taken_out_to_the_millisecond() {
        let store = Store::in_memory().unwrap();
        let db = store.lock();
        add(
            &db,
            "acc",
            "c1",
            &[run("l", 60_000, false, 1.0), run("l", 90_000, true, 1.0)],
        )
        .unwrap();
        let taken = take_older(&db, 90_000).unwrap();
        assert_eq!(taken.len(), 1);
        assert_eq!(taken[0].2.stopped_ms, 60_000);
        assert_eq!(runs(&db, "acc", "c1", (0, 200_000)).unwrap().len(), 1);
    }
}
