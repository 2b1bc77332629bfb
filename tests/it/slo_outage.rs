//! Issue 50: objectives tested end to end in seconds against `monform
//! serve` with a simulated clock (`--clock-start`, `POST /-/clock`) and a
//! replayed outage (`--simulate-outage`, `POST /-/outages`).

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::clock::{Simulated, seconds};
use crate::common::receiver::Receiver;
use crate::common::*;

/// Waits until `receiver` holds `n` requests (or a minute passes, which
/// only a missing alert reaches); returns them.
fn received(receiver: &Receiver, n: usize) -> Vec<crate::common::receiver::Received> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let got = receiver.requests.lock().unwrap().clone();
        if got.len() >= n || Instant::now() > deadline {
            return got;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A check every minute over 30 days: a clock jump plays its 43,199 runs,
/// the hour of outage fails exactly its 60, the result listing and the
/// report read them back (compacted) as a hand count says, and the check's
/// own alerts reach a webhook once on failure and once on recovery.
#[test]
fn a_clock_jump_plays_thirty_days_and_the_outage_in_seconds() {
    let dir = tempfile::tempdir().unwrap();
    let receiver = Receiver::start();
    let api = Simulated::serve(
        &dir.path().join("emulator.db"),
        "2026-10-01T00:00:00Z",
        &["Checkout:2026-10-11T10:00:00Z:1h"],
        &[],
    );
    api.ok(
        "POST",
        "/v1/alert-channels",
        Some(json!({"type": "WEBHOOK", "config": {"name": "hook", "url": receiver.url, "method": "POST"}})),
    );
    let check = api.ok(
        "POST",
        "/v1/checks/api",
        Some(json!({"name": "Checkout", "frequency": 1, "locations": ["eu-west-1"],
                    "request": {"method": "GET", "url": "https://shop.example.com/"}})),
    );
    let id = check["id"].as_str().unwrap().to_owned();
    let clock = api.ok("GET", "/-/clock", None);
    assert!(clock["now"].as_str().unwrap().starts_with("2026-10-01T00:0"), "{clock}");

    let started = Instant::now();
    let jump = api.jump("2026-10-31T00:00:00Z");
    let took = started.elapsed();
    // Every minute after the start, strictly before the end: 30 days of
    // 1,440 minutes but the first.
    assert_eq!(jump["runs"], 43_199, "{jump}");
    assert_eq!(jump["now"], "2026-10-31T00:00:00.000Z");
    assert!(took < Duration::from_secs(60), "30 days took {took:?}");
    let clock = api.ok("GET", "/-/clock", None);
    assert!(clock["now"].as_str().unwrap().starts_with("2026-10-31T00:0"), "{clock}");
    // The clock only moves forward.
    let (status, body) = api.call("POST", "/-/clock", Some(json!({"to": "2026-10-02T00:00:00Z"})));
    assert_eq!(status, 400, "{body}");

    // The outage hour, read back through the listing (window of 6 hours).
    let failed = api.ok(
        "GET",
        &format!(
            "/v2/check-results/{id}?from={}&to={}&hasFailures=true&limit=100",
            seconds("2026-10-11T08:00:00Z"),
            seconds("2026-10-11T14:00:00Z")
        ),
        None,
    );
    let entries = failed["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 60, "{failed}");
    assert_eq!(entries[0]["stoppedAt"].as_str().unwrap()[..16], *"2026-10-11T10:59");
    assert_eq!(entries[59]["stoppedAt"].as_str().unwrap()[..16], *"2026-10-11T10:00");
    assert_eq!(entries[0]["resultType"], "FINAL");
    assert_eq!(entries[0]["runLocation"], "eu-west-1");
    let all = api.ok(
        "GET",
        &format!(
            "/v2/check-results/{id}?from={}&to={}&limit=100",
            seconds("2026-10-11T09:00:00Z"),
            seconds("2026-10-11T10:00:00Z")
        ),
        None,
    );
    assert_eq!(all["length"], 60);
    assert!(
        all["entries"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["hasFailures"] == false)
    );
    // A cursor over compacted results.
    let next = all["nextId"].as_str().map(str::to_owned);
    assert!(next.is_none(), "{all}");

    // The report over the 30 days: (43,199 - 60) / 43,199 = 0.99861...
    let report = api.ok(
        "GET",
        &format!(
            "/v1/reporting?from={}&to={}",
            seconds("2026-10-01T00:00:00Z"),
            seconds("2026-10-31T00:00:00Z")
        ),
        None,
    );
    assert_eq!(report[0]["aggregate"]["successRatio"], json!(0.9986), "{report}");

    // The check's own alert: one failure, one recovery, at the outage's edges.
    let hooks = received(&receiver, 2);
    let kinds: Vec<String> = hooks.iter().map(|h| h.body.to_string()).collect();
    assert_eq!(hooks.len(), 2, "{kinds:#?}");
    let alerts = api.ok(
        "GET",
        &format!(
            "/v1/check-alerts?from={}&to={}&limit=100",
            seconds("2026-10-11T08:00:00Z"),
            seconds("2026-10-11T14:00:00Z")
        ),
        None,
    );
    let types: Vec<&str> = alerts
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["alertType"].as_str().unwrap())
        .collect();
    assert_eq!(types.len(), 2, "{alerts}");

    // The admin API's outages: the caller's, beside the start-up one.
    let (status, body) = api.call(
        "POST",
        "/-/outages",
        Some(json!({"check": id, "start": "+1h", "duration": "30m", "responseTime": 2500})),
    );
    assert_eq!(status, 201, "{body}");
    let listed = api.ok("GET", "/-/outages", None);
    assert_eq!(listed.as_array().unwrap().len(), 2, "{listed}");
    assert_eq!(listed[0]["check"], "Checkout");
    assert_eq!(listed[0]["startsAt"], "2026-10-11T10:00:00.000Z");
    let (status, _) = api.call("POST", "/-/outages", Some(json!({"check": "x", "duration": "soon"})));
    assert_eq!(status, 400);
}

/// A loopback target answering 200 to everything.
fn healthy_target() -> String {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut buffer = [0u8; 8192];
                let _ = stream.read(&mut buffer);
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"
                );
            });
        }
    });
    base
}

/// Results of check `id` in `from..to` (date-times, at most 6 hours apart)
/// that a run made rather than a clock jump (they have response details).
fn executed_runs(api: &Simulated, id: &str, from: &str, to: &str) -> (u64, u64) {
    let (mut runs, mut failed) = (0, 0);
    let mut next: Option<String> = None;
    loop {
        let cursor = next.as_deref().map(|n| format!("&nextId={n}")).unwrap_or_default();
        let page = api.ok(
            "GET",
            &format!(
                "/v2/check-results/{id}?from={}&to={}&limit=100{cursor}",
                seconds(from),
                seconds(to)
            ),
            None,
        );
        for result in page["entries"].as_array().unwrap() {
            if !result["apiCheckResult"].is_null() || !result["runResult"].is_null() {
                runs += 1;
                failed += u64::from(result["hasFailures"] == true || result["hasErrors"] == true);
            }
        }
        match page["nextId"].as_str() {
            Some(n) => next = Some(n.to_owned()),
            None => return (runs, failed),
        }
    }
}

/// The example project of issue 50 (examples/slo: availability by
/// occurrences, by time slices, latency) against `monform serve --schedule`
/// with a simulated clock: an outage of Checkout burns the budgets; during
/// it `slo status` gives the hand-computed figures, the fast burn alert of
/// each alerting SLO reaches the webhook once (a second reconcile sends
/// nothing) and `gate` exits 1; 1h10m after it the alerts resolve, once,
/// and `gate` exits 0.
#[test]
fn an_outage_burns_the_examples_budgets_alerts_once_and_gates_deploys() {
    let target = healthy_target();
    let receiver = Receiver::start();
    let project = copy_example("slo");
    let dir = project.path();
    // The example's checks run every 10 and 20 seconds from three
    // locations; every minute from one keeps the test's reads small (a week
    // of results is 10,000 runs a check) and the arithmetic by hand short.
    let checks = std::fs::read_to_string(dir.join("monitors/checks.yaml"))
        .unwrap()
        .replace("frequency: 0", "frequency: 1")
        .replace("    frequencyOffset: 10\n", "")
        .replace("    frequencyOffset: 20\n", "")
        .replace("[eu-west-1, us-east-1, eu-central-1]", "[eu-west-1]")
        .replace("runParallel: true", "runParallel: false")
        .replace("https://shop.example.com", &target)
        .replace("https://hooks.example.com/oncall", &receiver.url);
    // An EMAIL channel beside the webhook for shop-minutes: its alerts go
    // through the emulator's mail delivery.
    let checks = format!("{checks}  mail:\n    type: EMAIL\n    config:\n      address: shop-oncall@example.com\n");
    std::fs::write(dir.join("monitors/checks.yaml"), checks).unwrap();
    let slos = std::fs::read_to_string(dir.join("monitors/slos.yaml")).unwrap();
    assert!(slos.contains("    alerting: { channels: [oncall] }\n"), "{slos}");
    let slos = slos.replace(
        "    alerting: { channels: [oncall] }\n",
        "    alerting: { channels: [oncall, mail] }\n",
    );
    std::fs::write(dir.join("monitors/slos.yaml"), slos).unwrap();

    let start = "2026-10-01T00:00:00Z";
    let api = Simulated::serve(
        &dir.join("emulator.db"),
        start,
        &["Checkout:2026-10-07T12:00:00Z:30m"],
        &["--schedule"],
    );
    let run = |args: &[&str], now: &str| api.run(dir, now, args);
    let applied = run(&["apply", "--auto-approve"], start);
    assert!(applied.status.success(), "{}", stderr(&applied));
    let state: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(".monform/state.json")).unwrap()).unwrap();
    let id = |address: &str| state["resources"][address]["remoteId"].as_str().unwrap().to_owned();
    let (checkout, orders) = (id("checks.checkout"), id("checks.api[orders]"));

    // Into the outage: 20 of its 30 minutes.
    let during = "2026-10-07T12:20:00Z";
    let jump = api.jump(during);
    // The same minutes were played for each of the three checks.
    let played = jump["runs"].as_u64().unwrap();
    assert_eq!(played % 3, 0, "{jump}");
    let minutes = played / 3;
    assert!(minutes > 9_300, "{jump}");
    // Runs the scheduler made before the jump (passing: before the outage).
    let before: Vec<(u64, u64)> = [&checkout, &orders]
        .iter()
        .map(|id| executed_runs(&api, id, start, "2026-10-01T06:00:00Z"))
        .collect();
    assert!(before.iter().all(|(_, failed)| *failed == 0), "{before:?}");
    let executed: u64 = before.iter().map(|(runs, _)| runs).sum();

    let status = run(&["slo", "status", "--format", "json"], during);
    assert_eq!(status.status.code(), Some(0), "{}", stderr(&status));
    let figures: Value = serde_json::from_str(&stdout(&status)).unwrap();
    // The settled six-hour blocks of the three checks were kept: read
    // from them and the last hours, the figures are the same.
    let kept = std::fs::read_dir(dir.join(".monform/slo-runs")).unwrap().count();
    assert_eq!(kept, 3);
    let again = run(&["slo", "status", "--format", "json"], during);
    assert_eq!(stdout(&again), stdout(&status));
    let slo = |figures: &Value, address: &str| {
        figures["slos"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["address"] == address)
            .cloned()
            .unwrap_or_else(|| panic!("{address} in {figures}"))
    };
    let window = |slo: &Value, window: &str| {
        slo["burnRates"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| w["window"] == window)
            .cloned()
            .unwrap_or_else(|| panic!("{window} in {slo}"))
    };
    let close = |value: &Value, expected: f64| {
        let got = value.as_f64().unwrap_or(f64::NAN);
        assert!((got - expected).abs() < 1e-9, "{got} != {expected}");
    };
    // checkout-availability (occurrences, 99.5%, 28d): Checkout and
    // API orders, a run each a minute; Checkout failed the last 20 minutes.
    let availability = slo(&figures, "slos.checkout-availability");
    let total = 2 * minutes + executed;
    assert_eq!(availability["total"], total, "{availability}");
    assert_eq!(availability["good"], total - 20, "{availability}");
    close(&availability["budgetLeft"], 1.0 - (20.0 / total as f64) / 0.005);
    // 5m: 5 of 10 runs failed: (5 / 10) / 0.005 = 100x; 1h: 20 of 120:
    // 33.3x; both at least 14.4x: the fast burn. 6h: 20 of 720, 5.6x < 6.
    let five = window(&availability, "5m");
    assert_eq!(
        (five["good"].as_u64(), five["total"].as_u64()),
        (Some(5), Some(10)),
        "{five}"
    );
    close(&five["burnRate"], 100.0);
    let hour = window(&availability, "1h");
    assert_eq!(
        (hour["good"].as_u64(), hour["total"].as_u64()),
        (Some(100), Some(120)),
        "{hour}"
    );
    close(&hour["burnRate"], (20.0 / 120.0) / 0.005);
    assert_eq!(availability["firing"].as_array().unwrap().len(), 1, "{availability}");
    assert_eq!(availability["firing"][0]["factor"], 14.4);
    // shop-minutes (1m slices, 99%, this month): a minute is good when
    // all three checks passed in it; the last 20 were not.
    let minutes_slo = slo(&figures, "slos.shop-minutes");
    let slices = minutes_slo["total"].as_u64().unwrap();
    assert!(slices == minutes || slices == minutes + 1, "{minutes_slo}");
    assert_eq!(minutes_slo["good"], slices - 20, "{minutes_slo}");
    close(&window(&minutes_slo, "1h")["burnRate"], (20.0 / 60.0) / 0.01);
    assert_eq!(minutes_slo["burningFast"], true);
    // checkout-latency (800 ms, 95%, 7d): Checkout alone; the failed runs
    // are not fast answers; the others took 40 to 400 ms.
    let latency = slo(&figures, "slos.checkout-latency");
    let checkout_total = minutes + before[0].0;
    assert_eq!(latency["total"], checkout_total, "{latency}");
    assert_eq!(latency["good"], checkout_total - 20, "{latency}");

    let gate = run(
        &["gate", "--slo", "slos.checkout-availability", "--max-age", "0"],
        during,
    );
    assert_eq!(gate.status.code(), Some(1), "{}{}", stdout(&gate), stderr(&gate));
    assert!(stdout(&gate).contains("burning fast"), "{}", stdout(&gate));

    let slo_alerts = || -> Vec<Value> {
        receiver
            .requests
            .lock()
            .unwrap()
            .iter()
            .filter(|r| r.body["type"] == "slo-burn-rate")
            .map(|r| r.body.clone())
            .collect()
    };
    let reconciled = run(&["reconcile", "--once"], during);
    assert!(reconciled.status.code() != Some(1), "{}", stderr(&reconciled));
    let again = run(&["reconcile", "--once"], during);
    assert!(again.status.code() != Some(1), "{}", stderr(&again));
    // The reconciler cached every SLO's verdict: a gate reads the file,
    // not the service (its URL here answers nothing), and says so.
    let cached_gate = api.run_offline(
        dir,
        during,
        &["gate", "--slo", "slos.checkout-availability", "slos.checkout-latency"],
    );
    assert_eq!(cached_gate.status.code(), Some(1), "{}", stderr(&cached_gate));
    assert_eq!(
        stdout(&cached_gate),
        "slos.checkout-availability: burning fast: 14.4x the budget's rate over 1h and 5m\n"
    );
    assert!(
        stderr(&cached_gate).contains("gate: figures `reconcile` cached 0s ago"),
        "{}",
        stderr(&cached_gate)
    );
    let fired = slo_alerts();
    let said: Vec<(String, String, String)> = fired
        .iter()
        .map(|b| {
            let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
            (text(&b["slo"]), text(&b["state"]), text(&b["alert"]["name"]))
        })
        .collect();
    assert_eq!(
        said,
        [
            (
                "slos.checkout-availability".into(),
                "firing".into(),
                "14.4x 1h/5m".into()
            ),
            ("slos.shop-minutes".into(), "firing".into(), "14.4x 1h/5m".into()),
        ],
        "once per episode: {fired:#?}"
    );
    close(&fired[0]["burnRates"]["short"], 100.0);
    // The EMAIL channel's message, once, in the emulator's mailbox.
    let mail = || -> Vec<(String, String)> {
        api.ok("GET", "/-/mailbox", None)
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["source"] == "api")
            .map(|m| {
                assert_eq!(m["to"], "shop-oncall@example.com", "{m}");
                let text = m["text"].as_str().unwrap();
                assert!(text.contains("\"type\": \"slo-burn-rate\""), "{text}");
                (
                    m["subject"].as_str().unwrap().to_owned(),
                    text.lines().next().unwrap().to_owned(),
                )
            })
            .collect()
    };
    let fired_mail = mail();
    assert_eq!(fired_mail.len(), 1, "once per episode: {fired_mail:#?}");
    assert_eq!(
        fired_mail[0].0,
        "[firing] slos.shop-minutes (Shop minutes): burn-rate alert 14.4x 1h/5m"
    );
    assert!(
        fired_mail[0].1.contains("is burning its error budget"),
        "{fired_mail:?}"
    );

    // 1h10m after the outage: the 5m windows are clean again.
    let after = "2026-10-07T13:40:00Z";
    api.jump(after);
    let reconciled = run(&["reconcile", "--once"], after);
    assert!(reconciled.status.code() != Some(1), "{}", stderr(&reconciled));
    let again = run(&["reconcile", "--once"], after);
    assert!(again.status.code() != Some(1), "{}", stderr(&again));
    let states: Vec<(String, String)> = slo_alerts()
        .iter()
        .map(|b| {
            (
                b["slo"].as_str().unwrap().to_owned(),
                b["state"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(states.len(), 4, "{states:?}");
    assert_eq!(
        states[2..],
        [
            ("slos.checkout-availability".to_owned(), "resolved".to_owned()),
            ("slos.shop-minutes".to_owned(), "resolved".to_owned()),
        ]
    );
    let resolved_mail = mail();
    assert_eq!(resolved_mail.len(), 2, "once per episode: {resolved_mail:#?}");
    assert_eq!(
        resolved_mail[1].0,
        "[resolved] slos.shop-minutes (Shop minutes): burn-rate alert 14.4x 1h/5m"
    );
    let gate = run(
        &[
            "gate",
            "--slo",
            "slos.checkout-availability",
            "slos.shop-minutes",
            "--max-age",
            "0",
        ],
        after,
    );
    assert_eq!(gate.status.code(), Some(0), "{}{}", stdout(&gate), stderr(&gate));
}
