//! The report (spec 2.19, `GET /v1/reporting`): every check's aggregate
//! over a window, read for the whole account at once.

use std::collections::HashMap;

use monform_model::Kind;
use monform_model::group_rules::apply_group;
use rusqlite::{Connection, params};
use serde_json::{Value, json};

use crate::app::AppState;
use crate::domain::checks::has_tags;
use crate::domain::sessions::lifecycle::settle_due;
use crate::domain::sessions::results::CHECK_RESULTS;
use crate::domain::{compact, retention, stats};
use crate::error::{ApiError, ApiResult};
use crate::ids::id_text;
use crate::store::Objects;

/// The report: `{name, checkId, checkType, deactivated, tags, aggregate}`
/// of every check carrying all of `tags` (and deactivated or not, when
/// `deactivated` says) over the window.
///
/// It reads the account's results, compacted runs and roll-ups in the
/// window once each (three queries), not per check: at 10,000 checks the
/// per-check reads (the check again, its results as full records, its
/// roll-ups) cost 0.8 s with no results and 2.7 s with half a million runs.
/// The figures are those of [`final_results`](super::final_results) and [`retention::rollups`]
/// per check, summed in the same order (a test holds the two equal).
pub fn report(
    app: &AppState,
    account: &str,
    window: (i64, i64),
    tags: &[String],
    deactivated: Option<bool>,
) -> ApiResult<Vec<Value>> {
    app.store.transaction(|tx| {
        settle_due(tx, account)?;
        report_in(tx, account, window, tags, deactivated).map_err(ApiError::from)
    })
}

fn report_in(
    db: &Connection,
    account: &str,
    window: (i64, i64),
    tags: &[String],
    deactivated: Option<bool>,
) -> rusqlite::Result<Vec<Value>> {
    let groups: HashMap<String, Value> = db
        .all(account, Kind::Group.section())?
        .into_iter()
        .map(|row| (row.id, row.body))
        .collect();
    let mut stored = final_samples_by_check(db, account, window)?;
    let mut compacted = compact::runs_by_check(db, account, window)?;
    let mut rollups = retention::rollups_by_check(db, account, window)?;
    let mut report = Vec::new();
    for row in db.all(account, Kind::Check.section())? {
        // `effective_check` but for the snippets' scripts, which the report
        // does not show; groups read once.
        let check = match groups.get(&id_text(&row.body["groupId"])) {
            Some(group) if !row.body["groupId"].is_null() => apply_group(row.body, group),
            _ => row.body,
        };
        let is_deactivated = check["activated"] == false;
        if !has_tags(&check, tags) || deactivated.is_some_and(|d| d != is_deactivated) {
            continue;
        }
        let samples = merged_samples(
            stored.remove(&row.id).unwrap_or_default(),
            compacted.remove(&row.id).unwrap_or_default(),
        );
        let rollups = rollups.remove(&row.id).unwrap_or_default();
        report.push(entry(
            &check,
            &row.id,
            is_deactivated,
            retention::report_of(&samples, &rollups),
        ));
    }
    Ok(report)
}

/// A check's entry of the report.
fn entry(check: &Value, id: &str, is_deactivated: bool, aggregate: Value) -> Value {
    json!({
        "name": check["name"],
        "checkId": id,
        "checkType": check["checkType"],
        "deactivated": is_deactivated,
        "tags": check.get("tags").cloned().unwrap_or(json!([])),
        "aggregate": aggregate,
    })
}

/// The fields of a stored result the report reads (the rest of the body is
/// skipped, not built).
#[derive(serde::Deserialize)]
struct Brief {
    #[serde(default, rename = "resultType")]
    result_type: Value,
    #[serde(default, rename = "isCancelled")]
    is_cancelled: Value,
    #[serde(default, rename = "hasFailures")]
    has_failures: Value,
    #[serde(default, rename = "hasErrors")]
    has_errors: Value,
    #[serde(default, rename = "responseTime")]
    response_time: Value,
}

/// Every check's stored FINAL, not cancelled results in the window as
/// samples, by check id, each newest first (the order of
/// `Objects::records_timed`): one query over the window.
fn final_samples_by_check(
    db: &Connection,
    account: &str,
    (from, to): (i64, i64),
) -> rusqlite::Result<HashMap<String, Vec<(i64, stats::Sample)>>> {
    let mut statement = db.prepare_cached(
        "SELECT parent, ts, seq, body FROM objects INDEXED BY objects_by_age
         WHERE kind = ?1 AND ts >= ?2 AND ts < ?3 AND account_id = ?4 AND parent IS NOT NULL",
    )?;
    let mut rows = statement.query(params![CHECK_RESULTS, from, to, account])?;
    let mut by_check: HashMap<String, Vec<(i64, i64, stats::Sample)>> = HashMap::new();
    while let Some(row) = rows.next()? {
        let (check, ts, seq): (String, i64, i64) = (row.get(0)?, row.get(1)?, row.get(2)?);
        let body = row.get_ref(3)?.as_str()?;
        let sample = match serde_json::from_str::<Brief>(body) {
            Ok(brief) => (brief.result_type == "FINAL" && brief.is_cancelled != true).then(|| stats::Sample {
                failed: brief.has_failures == true || brief.has_errors == true,
                response_ms: brief.response_time.as_f64(),
            }),
            // Whatever `records_timed` made of it (a body it cannot parse is null).
            Err(_) => {
                let result: Value = serde_json::from_str(body).unwrap_or(Value::Null);
                (result["resultType"] == "FINAL" && result["isCancelled"] != true).then(|| stats::Sample::of(&result))
            }
        };
        if let Some(sample) = sample {
            by_check.entry(check).or_default().push((ts, seq, sample));
        }
    }
    Ok(by_check
        .into_iter()
        .map(|(check, mut samples)| {
            samples.sort_by_key(|(ts, seq, _)| std::cmp::Reverse((*ts, *seq)));
            (check, samples.into_iter().map(|(ts, _, s)| (ts, s)).collect())
        })
        .collect())
}

/// A check's stored samples (newest first) and compacted runs (oldest
/// first) in the order [`final_results`](super::final_results) gives them: newest first.
fn merged_samples(stored: Vec<(i64, stats::Sample)>, compacted: Vec<compact::CompactRun>) -> Vec<stats::Sample> {
    if compacted.is_empty() {
        return stored.into_iter().map(|(_, s)| s).collect();
    }
    // As `stored_and_compacted`: oldest first, stable, then reversed.
    let mut all: Vec<(i64, stats::Sample)> = stored
        .into_iter()
        .rev()
        .chain(compacted.iter().map(|run| {
            (
                run.stopped_ms,
                stats::Sample {
                    failed: run.has_failures || run.has_errors,
                    response_ms: Some(run.response_ms),
                },
            )
        }))
        .collect();
    all.sort_by_key(|(ts, _)| *ts);
    all.into_iter().rev().map(|(_, s)| s).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::analytics::final_results;
    use crate::domain::checks::effective_check;
    use crate::store::Store;

    /// The report as it was read before it was batched: check by check.
    fn report_per_check(
        db: &Connection,
        account: &str,
        window: (i64, i64),
        tags: &[String],
        deactivated: Option<bool>,
    ) -> Vec<Value> {
        let mut report = Vec::new();
        for row in db.all(account, Kind::Check.section()).unwrap() {
            let check = effective_check(db, account, row.body).unwrap();
            let is_deactivated = check["activated"] == false;
            if !has_tags(&check, tags) || deactivated.is_some_and(|d| d != is_deactivated) {
                continue;
            }
            let results = final_results(db, account, &row.id, window).unwrap();
            let rollups = retention::rollups(db, account, &row.id, window).unwrap();
            report.push(entry(
                &check,
                &row.id,
                is_deactivated,
                retention::report(&results, &rollups),
            ));
        }
        report
    }

    #[test]
    fn the_batched_report_is_the_per_check_one() {
        const HOUR: i64 = 3_600_000;
        let store = Store::in_memory().unwrap();
        let db = store.lock();
        let now = 100 * 24 * HOUR;
        let old = now - retention::RETENTION_MS - 5 * HOUR;
        db.insert(
            "acc",
            Kind::Group.section(),
            "7",
            None,
            0,
            &json!({"id": 7, "tags": ["shop"], "activated": false}),
        )
        .unwrap();
        let checks = [
            (
                "c1",
                json!({"name": "One", "checkType": "API", "activated": true, "tags": ["a"]}),
            ),
            (
                "c2",
                json!({"name": "Two", "checkType": "BROWSER", "activated": true, "groupId": 7}),
            ),
            ("c3", json!({"name": "Three", "checkType": "API", "activated": false})),
            (
                "c4",
                json!({"name": "Quiet", "checkType": "TCP", "activated": true, "tags": ["a", "b"]}),
            ),
            ("c5", json!({"name": "Old", "checkType": "API", "activated": true})),
        ];
        for (id, check) in &checks {
            db.insert("acc", Kind::Check.section(), id, None, 0, check).unwrap();
        }
        // Another account's results are not this one's.
        db.insert("other", Kind::Check.section(), "c1", None, 0, &checks[0].1)
            .unwrap();
        let result = |kind: &str, failed: bool, ms: Value| {
            json!({"resultType": kind, "isCancelled": false, "hasFailures": failed, "hasErrors": false,
                "responseTime": ms, "runLocation": "eu-west-1"})
        };
        let mut n = 0;
        let mut put = |account: &str, check: &str, ts: i64, body: &Value| {
            n += 1;
            db.insert(account, CHECK_RESULTS, &format!("r{n}"), Some(check), ts, body)
                .unwrap();
        };
        for i in 0..40_i64 {
            let ts = now - 30 * HOUR + i * 1_700_000;
            put(
                "acc",
                "c1",
                ts,
                &result("FINAL", i % 7 == 0, json!(100.0 + (i * 37 % 101) as f64 / 3.0)),
            );
            put("acc", "c2", ts, &result("FINAL", false, json!(200 + i)));
            if i % 5 == 0 {
                // The same millisecond twice, an attempt, a cancelled one, one without a time.
                put("acc", "c1", ts, &result("FINAL", true, json!(90.5)));
                put("acc", "c1", ts + 1, &result("ATTEMPT", true, json!(1.0)));
                let mut cancelled = result("FINAL", false, json!(5.0));
                cancelled["isCancelled"] = json!(true);
                put("acc", "c2", ts + 2, &cancelled);
                put("acc", "c3", ts, &result("FINAL", false, Value::Null));
            }
            put("other", "c1", ts, &result("FINAL", true, json!(1.0)));
            // Past the raw retention: rolled up by the sweep, two locations an hour.
            let mut far = result("FINAL", i % 3 == 0, json!(300.0 + i as f64 * 1.1));
            put("acc", "c5", old + i * 600_000, &far);
            far["runLocation"] = json!("us-east-1");
            put("acc", "c1", old + i * 600_000 + 1, &far);
        }
        db.insert(
            "acc",
            CHECK_RESULTS,
            "broken",
            Some("c1"),
            now - HOUR,
            &json!("not a result"),
        )
        .unwrap();
        retention::sweep(&db, now).unwrap();
        // Compacted runs, some in the same milliseconds as stored results.
        let runs: Vec<compact::CompactRun> = (0..60_i64)
            .map(|i| compact::CompactRun {
                location: if i % 2 == 0 { "eu-west-1" } else { "ap-south-1" }.into(),
                stopped_ms: now - 29 * HOUR + i * 1_000_000 - (i % 4) * 300_000,
                has_failures: i % 9 == 0,
                has_errors: i % 11 == 0,
                is_degraded: i % 13 == 0,
                response_ms: 150.0 + (i * 53 % 97) as f64 / 7.0,
            })
            .collect();
        compact::add(&db, "acc", "c1", &runs).unwrap();
        compact::add(&db, "acc", "c4", &runs[10..30]).unwrap();
        let stamp = |at: i64| compact::CompactRun {
            stopped_ms: at,
            ..runs[0].clone()
        };
        compact::add(&db, "acc", "c2", &[stamp(now - 30 * HOUR + 1_700_000)]).unwrap();

        let windows = [
            (now - 24 * HOUR, now),
            (now - 6 * HOUR, now),
            (now - 31 * HOUR, now - 20 * HOUR),
            (old - 2 * HOUR, now),
            (old + HOUR + 1, old + 3 * HOUR),
            (now, now + HOUR),
        ];
        let filters: [(&[String], Option<bool>); 4] = [
            (&[], None),
            (&["a".to_owned()], None),
            (&["shop".to_owned()], Some(true)),
            (&[], Some(false)),
        ];
        for window in windows {
            for (tags, deactivated) in filters {
                let batched = report_in(&db, "acc", window, tags, deactivated).unwrap();
                let per_check = report_per_check(&db, "acc", window, tags, deactivated);
                assert_eq!(
                    serde_json::to_string(&batched).unwrap(),
                    serde_json::to_string(&per_check).unwrap(),
                    "{window:?} {tags:?} {deactivated:?}"
                );
            }
        }
        // The set-up covers what it means to: raw results, runs and roll-ups in one aggregate.
        let all = report_in(&db, "acc", (old - 2 * HOUR, now), &[], None).unwrap();
        assert_eq!(all.len(), 5);
        assert!(
            !retention::rollups(&db, "acc", "c1", (old - 2 * HOUR, now))
                .unwrap()
                .is_empty()
        );
        assert_eq!(all[1]["tags"], json!(["shop"]), "{}", all[1]);
        assert_eq!(all[1]["deactivated"], true);
        assert_ne!(all[0]["aggregate"]["p99"], json!(0), "{}", all[0]);
    }
}
