//! The maths against hand-computed tables: each expected number is
//! written out with its arithmetic.

use std::time::Duration;

use crate::*;

const SECOND: i64 = 1_000;
const MINUTE: i64 = 60 * SECOND;
const HOUR: i64 = 60 * MINUTE;
const DAY: i64 = 24 * HOUR;
/// 2026-11-01T00:00:00Z (`date -u -d 2026-11-01 +%s` = 1793491200).
const NOV_1: i64 = 1_793_491_200_000;
/// 2026-12-01T00:00:00Z (NOV_1 + 30 days).
const DEC_1: i64 = NOV_1 + 30 * DAY;

fn run(at_ms: i64, success: bool, response_ms: u32) -> Run {
    Run {
        at_ms,
        success,
        response_ms,
        location: "eu-west-1".to_owned(),
    }
}

#[track_caller]
fn approx(actual: Option<f64>, expected: f64) {
    let actual = actual.expect("a value, not missing data");
    assert!((actual - expected).abs() < 1e-9, "expected {expected}, got {actual}");
}

fn timeslices(target_percent: f64, window: Window, slice: Duration) -> Objective {
    Objective {
        budgeting: Budgeting::Timeslices,
        timeslice: Some(slice),
        ..Objective::availability(target_percent, window)
    }
}

#[test]
fn occurrences_availability() {
    // 1000 runs, one a minute before `now`; run i fails when i % 300 == 7:
    // i = 7, 307, 607, 907, four failures.
    let now = DEC_1;
    let runs: Vec<Run> = (0..1000)
        .map(|i| run(now - (i + 1) * MINUTE, i % 300 != 7, 100))
        .collect();
    let objective = Objective::availability(99.5, Window::parse("28d").unwrap());
    objective.validate().unwrap();
    let status = evaluate(&objective, &runs, &[], now);
    assert_eq!(
        status.tally,
        Tally {
            good: 996,
            total: 1000,
            missing_slices: 0
        }
    );
    approx(status.sli, 0.996); // 996 / 1000
    approx(Some(status.error_budget), 0.005); // 1 - 0.995
    approx(status.burn_rate, 0.8); // (1 - 0.996) / 0.005 = 0.004 / 0.005
    approx(status.budget_left, 0.2); // 1 - 0.8
}

#[test]
fn latency_counts_fast_successes_only() {
    let now = NOV_1 + DAY;
    let runs = [
        run(now - 4 * MINUTE, true, 500), // good
        run(now - 3 * MINUTE, true, 800), // good: at the threshold
        run(now - 2 * MINUTE, true, 801), // bad: slow
        run(now - MINUTE, false, 100),    // bad: a fast error
    ];
    let objective = Objective {
        indicator: Indicator::Latency,
        threshold_ms: Some(800),
        ..Objective::availability(90.0, Window::parse("7d").unwrap())
    };
    objective.validate().unwrap();
    let status = evaluate(&objective, &runs, &[], now);
    approx(status.sli, 0.5); // 2 / 4
    approx(status.burn_rate, 5.0); // (1 - 0.5) / (1 - 0.9) = 0.5 / 0.1
    approx(status.budget_left, -4.0); // 1 - 5: overspent four times over
}

#[test]
fn time_slices_and_missing_data() {
    // A 1h window of 1m slices, [NOV_1, NOV_1 + 1h):
    //   minute 0: 2 runs, both ok          → good
    //   minute 1: 2 runs, 1 ok, 1 failed   → bad (50%)
    //   minute 2: no run                   → missing, not counted
    //   minute 3: 4 runs, 3 ok, 1 failed   → bad at 100%, good at 75%
    //   minutes 4..=59: 1 ok run each      → 56 good
    let now = NOV_1 + HOUR;
    let mut runs = vec![
        run(NOV_1, true, 10),
        run(NOV_1 + 59 * SECOND, true, 10),
        run(NOV_1 + MINUTE, true, 10),
        run(NOV_1 + MINUTE + 30 * SECOND, false, 10),
    ];
    for (second, ok) in [(0, true), (10, true), (20, false), (59, true)] {
        runs.push(run(NOV_1 + 3 * MINUTE + second * SECOND, ok, 10));
    }
    runs.extend((4..60).map(|minute| run(NOV_1 + minute * MINUTE + 5 * SECOND, true, 10)));
    let objective = timeslices(99.0, Window::parse("1h").unwrap(), Duration::from_secs(60));
    objective.validate().unwrap();

    let status = evaluate(&objective, &runs, &[], now);
    // Slices with data: 0, 1, 3 and 4..=59 = 3 + 56 = 59; missing: 60 - 59 = 1.
    // Good: 0 and 4..=59 = 57.
    assert_eq!(
        status.tally,
        Tally {
            good: 57,
            total: 59,
            missing_slices: 1
        }
    );
    approx(status.sli, 57.0 / 59.0); // 0.966101...
    approx(status.burn_rate, (2.0 / 59.0) / 0.01); // 3.389830...

    let lenient = Objective {
        slice_good_percent: 75.0,
        ..objective.clone()
    };
    // Minute 3 is now good (3 / 4 = 75% >= 75%); minute 1 still bad (50%).
    assert_eq!(
        measure(&lenient, &runs, status.interval),
        Tally {
            good: 58,
            total: 59,
            missing_slices: 1
        }
    );

    // The same runs by occurrences: 2 + 2 + 4 + 56 = 64 runs, 2 + 1 + 3 + 56 = 62 good.
    let by_runs = Objective::availability(99.0, Window::parse("1h").unwrap());
    approx(evaluate(&by_runs, &runs, &[], now).sli, 62.0 / 64.0); // 0.96875

    // A slice only partly inside a window counts its inside runs only:
    // [NOV_1 + 30s, NOV_1 + 91s) holds the second run of minute 0 (ok) and
    // both of minute 1 (at 60s ok, at 90s failed) → minute 0 good, minute 1 bad.
    let partial = Interval {
        start: NOV_1 + 30 * SECOND,
        end: NOV_1 + 91 * SECOND,
    };
    assert_eq!(
        measure(&objective, &runs, partial),
        Tally {
            good: 1,
            total: 2,
            missing_slices: 0
        }
    );
    // Ending at 90s leaves the failure out (half-open): both slices good.
    let partial = Interval {
        end: NOV_1 + 90 * SECOND,
        ..partial
    };
    assert_eq!(
        measure(&objective, &runs, partial),
        Tally {
            good: 2,
            total: 2,
            missing_slices: 0
        }
    );
    // Missing slices of a partial window: [NOV_1 + 30s, NOV_1 + 3m) overlaps
    // minutes 0, 1 and 2; minute 2 has no run.
    let partial = Interval {
        start: NOV_1 + 30 * SECOND,
        end: NOV_1 + 3 * MINUTE,
    };
    assert_eq!(
        measure(&objective, &runs, partial),
        Tally {
            good: 1,
            total: 2,
            missing_slices: 1
        }
    );
}

#[test]
fn no_data_is_no_sli_and_no_alert() {
    let now = NOV_1 + HOUR;
    let objective = timeslices(99.9, Window::parse("1h").unwrap(), Duration::from_secs(60));
    // A run outside the window only: 2h before `now`.
    let runs = [run(now - 2 * HOUR, false, 10)];
    let status = evaluate(&objective, &runs, &default_burn_rates(), now);
    assert_eq!(
        status.tally,
        Tally {
            good: 0,
            total: 0,
            missing_slices: 60
        }
    ); // 60 empty minutes
    assert_eq!((status.sli, status.budget_left, status.burn_rate), (None, None, None));
    // The 3d and 6h windows do see the failure (6h: 1 slice, bad): burn 1 / 0.001 = 1000x,
    // but the slow pair's short window is 6h and the fast ones see nothing: only `ticket` fires.
    let burns: Vec<(String, Option<f64>)> = status
        .burn_rates
        .iter()
        .map(|b| (format_duration(b.window), b.burn_rate))
        .collect();
    assert_eq!(burns[0], ("5m".to_owned(), None));
    assert_eq!(burns[2], ("1h".to_owned(), None));
    approx(burns[3].1, 1000.0);
    assert_eq!(
        status.firing.iter().map(|p| p.severity).collect::<Vec<_>>(),
        [Severity::Ticket]
    );
    // Nothing at all: nothing fires.
    assert!(evaluate(&objective, &[], &default_burn_rates(), now).firing.is_empty());
}

#[test]
fn rolling_window_edges_are_half_open() {
    let now = NOV_1 + 10 * DAY;
    let runs = [
        run(now, false, 10),               // at `now`: next evaluation's
        run(now - 1, true, 10),            // inside
        run(now - 7 * DAY, false, 10),     // the first millisecond: inside
        run(now - 7 * DAY - 1, false, 10), // just before: outside
    ];
    let objective = Objective::availability(99.0, Window::parse("7d").unwrap());
    let status = evaluate(&objective, &runs, &[], now);
    assert_eq!(
        status.interval,
        Interval {
            start: now - 7 * DAY,
            end: now
        }
    );
    assert_eq!(
        status.tally,
        Tally {
            good: 1,
            total: 2,
            missing_slices: 0
        }
    ); // 1 ok of 2
}

#[test]
fn calendar_month_so_far() {
    // Ten days into November, one run an hour since 2026-11-01T00:00Z:
    // 10 * 24 = 240 runs, one failed. Twelve failed runs on October 31st
    // belong to October's window.
    let now = NOV_1 + 10 * DAY;
    let mut runs: Vec<Run> = (0..240).map(|hour| run(NOV_1 + hour * HOUR, hour != 100, 10)).collect();
    runs.extend((1..=12).map(|hour| run(NOV_1 - hour * HOUR, false, 10)));
    let objective = Objective::availability(99.9, Window::CalendarMonth);
    let status = evaluate(&objective, &runs, &[], now);
    assert_eq!(status.interval, Interval { start: NOV_1, end: now });
    assert_eq!(
        status.tally,
        Tally {
            good: 239,
            total: 240,
            missing_slices: 0
        }
    );
    approx(status.sli, 239.0 / 240.0); // 0.9958333...
    approx(status.burn_rate, 1000.0 / 240.0); // (1 / 240) / 0.001 = 4.1666...
    approx(status.budget_left, 1.0 - 1000.0 / 240.0); // -3.1666...: overspent
}

#[test]
fn calendar_month_edges() {
    let last_second = DEC_1 - SECOND; // 2026-11-30T23:59:59Z
    let runs = [run(last_second, false, 10), run(DEC_1, true, 10)];
    let objective = Objective::availability(99.0, Window::CalendarMonth);

    // Just after the last run of November: November holds it, 0 / 1.
    let status = evaluate(&objective, &runs, &[], last_second + 1);
    assert_eq!(
        status.interval,
        Interval {
            start: NOV_1,
            end: last_second + 1
        }
    );
    approx(status.sli, 0.0);
    approx(status.budget_left, -99.0); // 1 - (1 - 0) / 0.01

    // At midnight December begins, empty: the November failure is not carried over.
    let status = evaluate(&objective, &runs, &[], DEC_1);
    assert_eq!(
        status.interval,
        Interval {
            start: DEC_1,
            end: DEC_1
        }
    );
    assert_eq!(status.sli, None);

    // One millisecond later December's first run counts: 1 / 1.
    let status = evaluate(&objective, &runs, &[], DEC_1 + 1);
    assert_eq!(
        status.tally,
        Tally {
            good: 1,
            total: 1,
            missing_slices: 0
        }
    );
    approx(status.budget_left, 1.0);
}

/// 7500 runs in the hour before `now`, one every 480 ms (run `i` at
/// `now - (i + 1) * 480ms`): the last 5m hold 300000 / 480 = 625 of them,
/// the last 30m 3750. `recent` failures are the newest runs, `old` ones
/// the oldest (more than 30m ago).
fn outage(now: i64, recent: i64, old: i64) -> Vec<Run> {
    (0..7500)
        .map(|i| run(now - (i + 1) * 480, !(i < recent || i >= 7500 - old), 10))
        .collect()
}

fn burn_of(status: &Status, window: &str) -> Option<f64> {
    let window = parse_duration(window).unwrap();
    status
        .burn_rates
        .iter()
        .find(|b| b.window == window)
        .and_then(|b| b.burn_rate)
}

#[test]
fn burn_rate_pair_fires_at_the_threshold() {
    // Target 99.9%: budget 0.001; the fast pair needs an error rate of
    // 14.4 * 0.001 = 0.0144 = 9 / 625 over both 1h and 5m.
    let now = NOV_1 + 10 * DAY;
    let objective = Objective::availability(99.9, Window::parse("30d").unwrap());
    let pairs = default_burn_rates();

    // 9 failures in the last 5m (9 / 625 = 0.0144 → 14.4x) and 99 more at
    // the start of the hour: 108 / 7500 = 0.0144 → 14.4x over 1h.
    let status = evaluate(&objective, &outage(now, 9, 99), &pairs, now);
    approx(burn_of(&status, "5m"), 14.4);
    approx(burn_of(&status, "30m"), 2.4); // 9 / 3750 = 0.0024 → 2.4x: the 6x pair stays quiet
    approx(burn_of(&status, "1h"), 14.4);
    approx(burn_of(&status, "6h"), 14.4); // no run before the hour: the same 108 / 7500
    approx(burn_of(&status, "3d"), 14.4);
    // Exactly 14.4x fires; the 1x pair (3d and 6h at 14.4x) fires too.
    let fired: Vec<(u64, u64)> = status
        .firing
        .iter()
        .map(|p| (p.long.as_secs(), p.short.as_secs()))
        .collect();
    assert_eq!(fired, [(3_600, 300), (259_200, 21_600)]);

    // One failure fewer, in the last 5m: 8 / 625 = 0.0128 → 12.8x and
    // 107 / 7500 = 0.014266… → 14.27x: just under, the fast pair is quiet.
    let status = evaluate(&objective, &outage(now, 8, 99), &pairs, now);
    approx(burn_of(&status, "5m"), 12.8);
    approx(burn_of(&status, "1h"), 107.0 / 7.5); // (107 / 7500) / 0.001
    assert_eq!(
        status.firing.iter().map(|p| p.severity).collect::<Vec<_>>(),
        [Severity::Ticket]
    );

    // The long window alone is not enough: all 108 failures old, 0 in the
    // last 5m → 1h at 14.4x, 5m at 0x.
    let status = evaluate(&objective, &outage(now, 0, 108), &pairs, now);
    approx(burn_of(&status, "1h"), 14.4);
    approx(burn_of(&status, "5m"), 0.0);
    assert!(status.firing.iter().all(|p| p.severity == Severity::Ticket));
}

#[test]
fn objectives_are_validated() {
    let month = Window::CalendarMonth;
    let error = |objective: Objective| objective.validate().unwrap_err().to_string();
    assert_eq!(
        error(Objective::availability(100.0, month)),
        "target 100 is not a percentage strictly between 0 and 100 (100% leaves no error budget)"
    );
    assert!(Objective::availability(f64::NAN, month).validate().is_err());
    assert_eq!(
        error(Objective::availability(99.999_999, month)),
        "target 99.999999 leaves no error budget at a precision of 0.0001%"
    );
    let latency = Objective {
        indicator: Indicator::Latency,
        ..Objective::availability(99.0, month)
    };
    assert_eq!(
        error(latency),
        "a latency objective needs a `threshold` in milliseconds"
    );
    let slices = Objective {
        budgeting: Budgeting::Timeslices,
        ..Objective::availability(99.0, month)
    };
    assert_eq!(
        error(slices),
        "budgeting by time slices needs a `timeslice` length, such as 1m"
    );
    assert_eq!(parse_burn_rates("default").unwrap().len(), 3);
    assert_eq!(
        parse_burn_rates("fast").unwrap_err().to_string(),
        "unknown burn rates `fast`: expected `default`"
    );
    // 99.9 is read exactly: a budget of 1000 parts per million.
    approx(Some(Objective::availability(99.9, month).error_budget()), 0.001);
}

#[test]
fn exactly_at_the_factor_is_exact() {
    // Target 99%: in floating point 1 - 0.99 = 0.010000000000000009, so
    // 1 / 100 would fall just short of 1x; in integers the budget is 10000
    // ppm and 1 failure in 100 runs is exactly 1x: the slow pair fires.
    let now = NOV_1 + 10 * DAY;
    let runs: Vec<Run> = (0..100).map(|i| run(now - (i + 1) * MINUTE, i != 0, 10)).collect();
    let objective = Objective::availability(99.0, Window::parse("30d").unwrap());
    let slow = [default_burn_rates()[2]];
    let status = evaluate(&objective, &runs, &slow, now);
    approx(burn_of(&status, "6h"), 1.0); // (1 / 100) / 0.01
    approx(burn_of(&status, "3d"), 1.0);
    assert_eq!(status.firing, slow);
}

#[test]
fn budget_left_table_over_28_days() {
    // One run a minute from each of two locations for 28 days before
    // `now`: 2 * 28 * 1440 = 80,640 runs. A 99.5% target's budget is
    // 0.5% of them: 403.2 failed runs.
    //   failed runs | SLI                  | burn rate over 28d    | budget left
    //   0           | 1                    | 0                     | 1
    //   100         | 80540/80640          | 100/80640/0.005       | 1 - 0.248015...
    //   403         | 80237/80640          | 403/403.2 = 0.999504  | 0.000496...
    //   806         | 79834/80640          | 806/403.2 = 1.999008  | -0.999008...
    let now = DEC_1;
    let minutes = 28 * 1440;
    let objective = Objective::availability(99.5, Window::parse("28d").unwrap());
    for (failed, left) in [
        (0_i64, 1.0),
        (100, 1.0 - 100.0 / 403.2),
        (403, 1.0 - 403.0 / 403.2),
        (806, 1.0 - 806.0 / 403.2),
    ] {
        let runs: Vec<Run> = (0..minutes)
            .flat_map(|m| {
                let at = now - (m + 1) * MINUTE;
                // The first `failed` runs of eu-west-1, newest first, fail.
                let mut eu = run(at, m >= failed, 100);
                eu.location = "eu-west-1".to_owned();
                let mut us = run(at, true, 100);
                us.location = "us-east-1".to_owned();
                [eu, us]
            })
            .collect();
        let status = evaluate(&objective, &runs, &[], now);
        assert_eq!(status.tally.total, 80_640);
        assert_eq!(status.tally.bad(), failed as u64);
        approx(status.budget_left, left);
    }
}

#[test]
fn two_locations_share_a_time_slice() {
    // Two locations run at the same second of each minute: by time slices
    // the minute is one slice, bad when either run failed.
    //   minute 0: eu ok, us ok     → good
    //   minute 1: eu ok, us failed → bad
    //   minute 2: eu failed, us ok → bad
    //   minute 3: no run           → missing
    let now = NOV_1 + 4 * MINUTE;
    let mut runs = Vec::new();
    for (minute, eu_ok, us_ok) in [(0, true, true), (1, true, false), (2, false, true)] {
        let mut eu = run(NOV_1 + minute * MINUTE, eu_ok, 10);
        eu.location = "eu-west-1".to_owned();
        let mut us = run(NOV_1 + minute * MINUTE, us_ok, 10);
        us.location = "us-east-1".to_owned();
        runs.extend([eu, us]);
    }
    let objective = timeslices(90.0, Window::parse("4m").unwrap(), Duration::from_secs(60));
    let status = evaluate(&objective, &runs, &[], now);
    assert_eq!(
        status.tally,
        Tally {
            good: 1,
            total: 3,
            missing_slices: 1
        }
    );
    approx(status.sli, 1.0 / 3.0);
    // By occurrences the same runs are 4 good of 6.
    let by_runs = Objective::availability(90.0, Window::parse("4m").unwrap());
    approx(evaluate(&by_runs, &runs, &[], now).sli, 4.0 / 6.0);
}

#[test]
fn history_by_utc_day_with_the_budget_left_so_far() {
    // A 3d rolling window evaluated at NOV_1 + 12h: [Oct 29 12:00, Nov 1
    // 12:00), cut at the UTC midnights: 12h, 24h, 24h, 12h. One run an
    // hour (on the hour, from the window's start): 12, 24, 24, 12 runs.
    // The first 6 runs of the second day (Oct 30) fail; target 90%: budget 0.1.
    //   part    | runs | bad | SLI      | so far bad/runs | budget left
    //   Oct 29  | 12   | 0   | 1        | 0/12            | 1
    //   Oct 30  | 24   | 6   | 18/24    | 6/36            | 1 - (6/36)/0.1 = -0.6667
    //   Oct 31  | 24   | 0   | 1        | 6/60            | 1 - 0.1/0.1 = 0
    //   Nov 1   | 12   | 0   | 1        | 6/72            | 1 - (6/72)/0.1 = 0.1667
    let now = NOV_1 + 12 * HOUR;
    let start = now - 3 * DAY;
    let oct_30 = NOV_1 - 2 * DAY;
    let runs: Vec<Run> = (0..72)
        .map(|h| {
            let at = start + h * HOUR;
            run(at, !(oct_30..oct_30 + 6 * HOUR).contains(&at), 10)
        })
        .collect();
    let objective = Objective::availability(90.0, Window::parse("3d").unwrap());
    let parts = history(&objective, &runs, objective.window.bounds(now));
    let totals: Vec<(u64, u64)> = parts.iter().map(|p| (p.tally.good, p.tally.total)).collect();
    assert_eq!(totals, [(12, 12), (18, 24), (24, 24), (12, 12)]);
    assert_eq!(parts[0].interval.start, start);
    assert_eq!(parts[1].interval.start, oct_30);
    assert_eq!(parts[3].interval.end, now);
    approx(parts[1].sli, 0.75);
    approx(parts[0].budget_left, 1.0);
    approx(parts[1].budget_left, 1.0 - (6.0 / 36.0) / 0.1);
    approx(parts[2].budget_left, 0.0);
    approx(parts[3].budget_left, 1.0 - (6.0 / 72.0) / 0.1);
    // The last point is the status's budget left.
    approx(
        parts[3].budget_left,
        evaluate(&objective, &runs, &[], now).budget_left.unwrap(),
    );
}

#[test]
fn history_of_a_short_window_is_24_equal_parts() {
    // A 1h window: 24 parts of 150 s; no run at all: no SLI, no budget.
    let objective = Objective::availability(99.0, Window::parse("1h").unwrap());
    let interval = objective.window.bounds(NOV_1);
    assert_eq!(part_length_ms(interval), 150 * SECOND);
    let parts = history(&objective, &[], interval);
    assert_eq!(parts.len(), 24);
    assert_eq!(parts[23].interval.end, NOV_1);
    assert!(parts.iter().all(|p| p.sli.is_none() && p.budget_left.is_none()));
}
