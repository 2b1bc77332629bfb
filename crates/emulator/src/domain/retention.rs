//! Retention (spec 8): raw check results are kept 30 days; hourly roll-ups
//! are kept indefinitely, and the report reads them for older ranges.
//! Within the 30 days, a check's results beyond its newest
//! `compact::RAW_PER_CHECK` are kept compacted (`compact.rs`: per location
//! and minute, what objectives and reports read); the sweep compacts them
//! and rolls compacted runs past 30 days into the roll-ups too.
//!
//! [`sweep`] rolls every result older than [`RETENTION_MS`] into the
//! `rollups` table (per account, check, location and hour) and deletes it.
//! It runs at start-up and, at most once per [`SWEEP_EVERY_MS`], when
//! sessions are settled ([`maybe_sweep`], called by `settle_due`, which
//! every result listing, report and scheduler tick goes through).
//!
//! Choices where the specification is silent:
//! - A roll-up holds, for FINAL not-cancelled results (what reports count):
//!   the number of results, failures (`hasFailures` or `hasErrors`),
//!   degraded ones, the sum, minimum and maximum response time, and a
//!   histogram of response times in buckets 5 % wide, from which the
//!   report's p95 / p99 are estimated (within about 2.5 %, clamped to the
//!   hour's minimum and maximum). ATTEMPT and cancelled results are dropped
//!   without a trace.
//! - The report adds the roll-ups whose hour overlaps its window (a
//!   roll-up counts whole: results are no longer known to the minute) to
//!   the raw results still there; a result is in one or the other, never
//!   both. Without roll-ups in the window the figures are exact, as before.
//! - Analytics (`/v1/analytics/...`) read a roll-up as the results it
//!   stands for ([`Rollup::as_results`]), at the start of its hour:
//!   `availability` and counts are exact, response times within about 2.5 %,
//!   and the other metrics (timing phases, web vitals) have no samples there.
//! - The sweep's clock is the caller's (`now` in UNIX ms), so tests can
//!   sweep "in the future" or insert old results and sweep now.

use std::collections::{BTreeMap, HashMap};

use monform_model::RunStatus;
use rusqlite::{Connection, OptionalExtension, params};
use serde_json::{Value, json};

use crate::clock::iso;
use crate::domain::compact;
use crate::domain::sessions::results::CHECK_RESULTS;
use crate::domain::stats::{Sample, report_aggregate, round};

const HOUR_MS: i64 = 3_600_000;
/// How long raw results are kept (spec 8).
pub const RETENTION_MS: i64 = 30 * 24 * HOUR_MS;
/// How often [`maybe_sweep`] sweeps.
pub const SWEEP_EVERY_MS: i64 = HOUR_MS;
/// The `meta` key holding when the last sweep ran.
const SWEPT_AT: &str = "retentionSweptAtMs";
/// Response-time histogram buckets grow by this factor.
const GROWTH: f64 = 1.05;

/// What one hour of one check in one location looked like.
#[derive(Debug, Clone, PartialEq)]
pub struct Rollup {
    pub location: String,
    /// Start of the hour, UNIX ms.
    pub hour_ms: i64,
    pub count: u64,
    pub failures: u64,
    pub degraded: u64,
    /// Results with a response time (the average's denominator).
    pub timed: u64,
    pub sum_ms: f64,
    pub min_ms: f64,
    pub max_ms: f64,
    /// Bucket index ([`bucket`]) to count.
    pub histogram: BTreeMap<u32, u64>,
}

impl Rollup {
    fn new(location: &str, hour_ms: i64) -> Rollup {
        Rollup {
            location: location.to_owned(),
            hour_ms,
            count: 0,
            failures: 0,
            degraded: 0,
            timed: 0,
            sum_ms: 0.0,
            min_ms: f64::INFINITY,
            max_ms: f64::NEG_INFINITY,
            histogram: BTreeMap::new(),
        }
    }

    /// Counts one stored check result.
    pub fn add(&mut self, result: &Value) {
        self.count += 1;
        if result["hasFailures"] == true || result["hasErrors"] == true {
            self.failures += 1;
        }
        if result["isDegraded"] == true || result["runResult"]["status"] == RunStatus::Degraded.as_str() {
            self.degraded += 1;
        }
        if let Some(ms) = result["responseTime"].as_f64() {
            self.add_time(ms, 1);
        }
    }

    /// Counts one FINAL result as the report reads it.
    fn add_sample(&mut self, sample: Sample) {
        self.count += 1;
        if sample.failed {
            self.failures += 1;
        }
        if let Some(ms) = sample.response_ms {
            self.add_time(ms, 1);
        }
    }

    fn add_time(&mut self, ms: f64, times: u64) {
        self.timed += times;
        self.sum_ms += ms * times as f64;
        self.min_ms = self.min_ms.min(ms);
        self.max_ms = self.max_ms.max(ms);
        *self.histogram.entry(bucket(ms)).or_default() += times;
    }

    pub fn merge(&mut self, other: &Rollup) {
        self.count += other.count;
        self.failures += other.failures;
        self.degraded += other.degraded;
        self.timed += other.timed;
        self.sum_ms += other.sum_ms;
        self.min_ms = self.min_ms.min(other.min_ms);
        self.max_ms = self.max_ms.max(other.max_ms);
        for (bucket, n) in &other.histogram {
            *self.histogram.entry(*bucket).or_default() += n;
        }
    }

    /// The results this roll-up stands for, as far as it knows them: for
    /// analytics over ranges past the raw retention. Each is stamped at the
    /// start of the hour; response times are the histogram's (within about
    /// 2.5 %) but for the exact minimum and maximum, given out in order, so
    /// which of them failed is not known.
    pub fn as_results(&self) -> Vec<Value> {
        let mut times: Vec<f64> = self
            .histogram
            .iter()
            .flat_map(|(bucket, n)| {
                std::iter::repeat_n(bucket_value(*bucket).clamp(self.min_ms, self.max_ms), *n as usize)
            })
            .collect();
        if let Some(first) = times.first_mut() {
            *first = self.min_ms;
        }
        if let Some(last) = times.last_mut() {
            *last = self.max_ms;
        }
        let mut times = times.into_iter();
        (0..self.count)
            .map(|i| {
                json!({
                    "stoppedAt": iso(self.hour_ms),
                    "runLocation": self.location,
                    "hasFailures": i < self.failures,
                    "hasErrors": false,
                    "responseTime": times.next(),
                })
            })
            .collect()
    }

    /// The `p`th percentile of the response times, estimated.
    fn percentile(&self, p: f64) -> Option<f64> {
        if self.timed == 0 {
            return None;
        }
        let rank = ((p / 100.0) * self.timed as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (bucket, n) in &self.histogram {
            seen += n;
            if seen >= rank {
                return Some(bucket_value(*bucket).clamp(self.min_ms, self.max_ms));
            }
        }
        Some(self.max_ms)
    }
}

/// The histogram bucket of a response time.
fn bucket(ms: f64) -> u32 {
    ((ms.max(0.0) + 1.0).ln() / GROWTH.ln()).floor() as u32
}

/// The middle of a bucket (geometrically).
fn bucket_value(bucket: u32) -> f64 {
    GROWTH.powf(f64::from(bucket) + 0.5) - 1.0
}

/// Rolls up and deletes every check result older than [`RETENTION_MS`]
/// before `now`. Returns how many results were deleted. Run it inside a
/// transaction.
pub fn sweep(db: &Connection, now: i64) -> rusqlite::Result<usize> {
    let cutoff = now.saturating_sub(RETENTION_MS);
    let mut hours: HashMap<(String, String, String, i64), Rollup> = HashMap::new();
    {
        let mut statement =
            db.prepare_cached("SELECT account_id, parent, ts, body FROM objects WHERE kind = ?1 AND ts < ?2")?;
        let mut rows = statement.query(params![CHECK_RESULTS, cutoff])?;
        while let Some(row) = rows.next()? {
            let body: String = row.get(3)?;
            let Ok(result) = serde_json::from_str::<Value>(&body) else {
                continue;
            };
            if result["resultType"] != "FINAL" || result["isCancelled"] == true {
                continue;
            }
            let (account, check): (String, Option<String>) = (row.get(0)?, row.get(1)?);
            let hour = row.get::<_, i64>(2)?.div_euclid(HOUR_MS) * HOUR_MS;
            let location = result["runLocation"].as_str().unwrap_or_default().to_owned();
            hours
                .entry((account, check.unwrap_or_default(), location.clone(), hour))
                .or_insert_with(|| Rollup::new(&location, hour))
                .add(&result);
        }
    }
    for (account, check, run) in compact::take_older(db, cutoff)? {
        let hour = run.stopped_ms.div_euclid(HOUR_MS) * HOUR_MS;
        hours
            .entry((account, check, run.location.clone(), hour))
            .or_insert_with(|| Rollup::new(&run.location, hour))
            .add(&json!({
                "hasFailures": run.has_failures,
                "hasErrors": run.has_errors,
                "isDegraded": run.is_degraded,
                "responseTime": run.response_ms,
            }));
    }
    for ((account, check, _, _), mut rollup) in hours {
        if let Some(existing) = load(db, &account, &check, &rollup.location, rollup.hour_ms)? {
            rollup.merge(&existing);
        }
        store(db, &account, &check, &rollup)?;
    }
    db.execute(
        "DELETE FROM objects WHERE kind = ?1 AND ts < ?2",
        params![CHECK_RESULTS, cutoff],
    )
}

/// Sweeps when the last sweep is [`SWEEP_EVERY_MS`] old (or never ran).
pub fn maybe_sweep(db: &Connection, now: i64) -> rusqlite::Result<()> {
    let last: Option<String> = db
        .query_row("SELECT value FROM meta WHERE key = ?1", [SWEPT_AT], |r| r.get(0))
        .optional()?;
    if last
        .and_then(|l| l.parse::<i64>().ok())
        .is_some_and(|l| now - l < SWEEP_EVERY_MS && l <= now)
    {
        return Ok(());
    }
    sweep_now(db, now)
}

/// Sweeps, compacts results beyond each check's newest
/// [`compact::RAW_PER_CHECK`], and records when (start-up calls this).
pub fn sweep_now(db: &Connection, now: i64) -> rusqlite::Result<()> {
    sweep(db, now)?;
    compact::compact_beyond(db, compact::RAW_PER_CHECK)?;
    db.execute(
        "INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        params![SWEPT_AT, now.to_string()],
    )?;
    Ok(())
}

fn from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<Rollup> {
    let histogram: String = row.get(10)?;
    Ok(Rollup {
        location: row.get(0)?,
        hour_ms: row.get(1)?,
        count: row.get::<_, i64>(2)? as u64,
        failures: row.get::<_, i64>(3)? as u64,
        degraded: row.get::<_, i64>(4)? as u64,
        timed: row.get::<_, i64>(5)? as u64,
        sum_ms: row.get(6)?,
        min_ms: row.get::<_, Option<f64>>(7)?.unwrap_or(f64::INFINITY),
        max_ms: row.get::<_, Option<f64>>(8)?.unwrap_or(f64::NEG_INFINITY),
        histogram: serde_json::from_str(&histogram).unwrap_or_default(),
    })
}

/// The columns [`from_row`] reads, in its order.
const COLUMNS: &str = "location, hour, count, failures, degraded, timed, sum_ms, min_ms, max_ms, check_id, histogram";

fn load(db: &Connection, account: &str, check: &str, location: &str, hour: i64) -> rusqlite::Result<Option<Rollup>> {
    db.query_row(
        &format!(
            "SELECT {COLUMNS} FROM rollups WHERE account_id = ?1 AND check_id = ?2 AND location = ?3 AND hour = ?4"
        ),
        params![account, check, location, hour],
        from_row,
    )
    .optional()
}

fn store(db: &Connection, account: &str, check: &str, r: &Rollup) -> rusqlite::Result<()> {
    let finite = |v: f64| v.is_finite().then_some(v);
    db.execute(
        "INSERT INTO rollups (account_id, check_id, location, hour, count, failures, degraded, timed, sum_ms, min_ms, max_ms, histogram)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)
         ON CONFLICT (account_id, check_id, location, hour) DO UPDATE SET
           count = excluded.count, failures = excluded.failures, degraded = excluded.degraded, timed = excluded.timed,
           sum_ms = excluded.sum_ms, min_ms = excluded.min_ms, max_ms = excluded.max_ms, histogram = excluded.histogram",
        params![
            account,
            check,
            r.location,
            r.hour_ms,
            r.count as i64,
            r.failures as i64,
            r.degraded as i64,
            r.timed as i64,
            r.sum_ms,
            finite(r.min_ms),
            finite(r.max_ms),
            serde_json::to_string(&r.histogram).unwrap_or_else(|_| "{}".into()),
        ],
    )?;
    Ok(())
}

/// The roll-ups of a check whose hour overlaps `from..to`, oldest first
/// (an hour's locations in name order, so sums add up in one order).
pub fn rollups(db: &Connection, account: &str, check: &str, (from, to): (i64, i64)) -> rusqlite::Result<Vec<Rollup>> {
    let mut statement = db.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM rollups WHERE account_id = ?1 AND check_id = ?2 AND hour >= ?3 AND hour < ?4
         ORDER BY hour, location"
    ))?;
    statement
        .query_map(params![account, check, from.saturating_sub(HOUR_MS - 1), to], from_row)?
        .collect()
}

/// [`rollups`] of every check of the account, by check id: one query for
/// the report (10,000 checks made 10,000 queries).
pub fn rollups_by_check(
    db: &Connection,
    account: &str,
    (from, to): (i64, i64),
) -> rusqlite::Result<HashMap<String, Vec<Rollup>>> {
    let mut statement = db.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM rollups WHERE account_id = ?1 AND hour >= ?2 AND hour < ?3
         ORDER BY check_id, hour, location"
    ))?;
    let mut rows = statement.query(params![account, from.saturating_sub(HOUR_MS - 1), to])?;
    let mut out: HashMap<String, Vec<Rollup>> = HashMap::new();
    while let Some(row) = rows.next()? {
        let check: String = row.get(9)?;
        out.entry(check).or_default().push(from_row(row)?);
    }
    Ok(out)
}

/// The report's `aggregate` of raw results and roll-ups (exact, as
/// `stats::report_aggregate`, when there are no roll-ups).
pub fn report(results: &[Value], rollups: &[Rollup]) -> Value {
    let samples: Vec<Sample> = results.iter().map(Sample::of).collect();
    report_of(&samples, rollups)
}

/// [`report`] of the samples of results, in the results' order (sums are
/// taken in it).
pub fn report_of(samples: &[Sample], rollups: &[Rollup]) -> Value {
    if rollups.is_empty() {
        return report_aggregate(samples);
    }
    let mut all = Rollup::new("", 0);
    for sample in samples {
        all.add_sample(*sample);
    }
    for rollup in rollups {
        all.merge(rollup);
    }
    let average = if all.timed == 0 {
        0.0
    } else {
        all.sum_ms / all.timed as f64
    };
    serde_json::json!({
        "successRatio": round((all.count - all.failures) as f64 / all.count.max(1) as f64, 4),
        "avg": round(average, 2),
        "p95": round(all.percentile(95.0).unwrap_or(0.0), 2),
        "p99": round(all.percentile(99.0).unwrap_or(0.0), 2),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Objects, Store};
    use serde_json::json;

    fn result(ms: f64, failed: bool) -> Value {
        json!({ "resultType": "FINAL", "isCancelled": false, "hasFailures": failed, "hasErrors": false,
            "responseTime": ms, "runLocation": "eu-west-1" })
    }

    #[test]
    fn buckets_are_close() {
        for ms in [0.0, 1.0, 37.0, 250.0, 1234.5, 299_999.0] {
            let estimate = bucket_value(bucket(ms));
            assert!((estimate - ms).abs() <= 0.03 * ms + 1.0, "{ms} -> {estimate}");
        }
    }

    #[test]
    fn sweeping_rolls_up_and_deletes() {
        let store = Store::in_memory().unwrap();
        let db = store.lock();
        let now = 100 * 24 * HOUR_MS;
        let old = now - RETENTION_MS - 2 * HOUR_MS;
        for (i, (ms, failed)) in [(100.0, false), (200.0, true), (300.0, false)].iter().enumerate() {
            db.insert(
                "acc",
                CHECK_RESULTS,
                &format!("old{i}"),
                Some("c1"),
                old + i as i64,
                &result(*ms, *failed),
            )
            .unwrap();
        }
        let mut attempt = result(999.0, true);
        attempt["resultType"] = json!("ATTEMPT");
        db.insert("acc", CHECK_RESULTS, "attempt", Some("c1"), old, &attempt)
            .unwrap();
        db.insert(
            "acc",
            CHECK_RESULTS,
            "new",
            Some("c1"),
            now - HOUR_MS,
            &result(400.0, false),
        )
        .unwrap();
        assert_eq!(sweep(&db, now).unwrap(), 4);
        assert!(db.get("acc", CHECK_RESULTS, "new").unwrap().is_some());
        assert!(db.get("acc", CHECK_RESULTS, "old0").unwrap().is_none());
        let rollups = rollups(&db, "acc", "c1", (0, now)).unwrap();
        assert_eq!(rollups.len(), 1);
        let r = &rollups[0];
        assert_eq!((r.count, r.failures, r.timed), (3, 1, 3));
        assert_eq!((r.sum_ms, r.min_ms, r.max_ms), (600.0, 100.0, 300.0));
        // Sweeping again adds to the same hour.
        db.insert("acc", CHECK_RESULTS, "late", Some("c1"), old + 10, &result(50.0, false))
            .unwrap();
        sweep(&db, now).unwrap();
        let r = &super::rollups(&db, "acc", "c1", (0, now)).unwrap()[0];
        assert_eq!((r.count, r.min_ms), (4, 50.0));
        let report = report(&[result(400.0, false)], std::slice::from_ref(r));
        assert_eq!(report["successRatio"], json!(0.8));
        assert_eq!(report["avg"], json!(210.0));
        let p99 = report["p99"].as_f64().unwrap();
        assert!((390.0..=400.0).contains(&p99), "{report}");
    }

    #[test]
    fn sweeps_are_throttled() {
        let store = Store::in_memory().unwrap();
        let db = store.lock();
        let now = 100 * 24 * HOUR_MS;
        maybe_sweep(&db, now).unwrap();
        db.insert("acc", CHECK_RESULTS, "old", Some("c"), 0, &result(1.0, false))
            .unwrap();
        maybe_sweep(&db, now + 1000).unwrap();
        assert!(db.get("acc", CHECK_RESULTS, "old").unwrap().is_some());
        maybe_sweep(&db, now + SWEEP_EVERY_MS).unwrap();
        assert!(db.get("acc", CHECK_RESULTS, "old").unwrap().is_none());
    }
}
