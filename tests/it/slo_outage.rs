//! Issue 50: objectives tested end to end in seconds against `monform
//! serve` with a simulated clock (`--clock-start`, `POST /-/clock`) and a
//! replayed outage (`--simulate-outage`, `POST /-/outages`).

use std::time::{Duration, Instant};

use reqwest::blocking::Client;
use serde_json::{Value, json};

use crate::common::receiver::Receiver;
use crate::common::*;

/// The emulator's API and admin routes with its development key.
struct Api {
    client: Client,
    url: String,
    key: String,
}

impl Api {
    fn of(served: &Served) -> Api {
        Api {
            client: Client::builder().timeout(Duration::from_secs(120)).build().unwrap(),
            url: served.url.clone(),
            key: served.key.clone().expect("a development key"),
        }
    }

    fn call(&self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        let mut request = self
            .client
            .request(method.parse().unwrap(), format!("{}{path}", self.url))
            .bearer_auth(&self.key);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().unwrap();
        let status = response.status().as_u16();
        (status, response.json().unwrap_or(Value::Null))
    }

    fn ok(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let (status, body) = self.call(method, path, body);
        assert!((200..300).contains(&status), "{method} {path}: {status} {body}");
        body
    }
}

/// UNIX seconds of a date-time, for `from`/`to`.
fn seconds(text: &str) -> i64 {
    chrono::DateTime::parse_from_rfc3339(text).unwrap().timestamp()
}

/// Waits until `receiver` holds `n` requests (or 20 s pass); returns them.
fn received(receiver: &Receiver, n: usize) -> Vec<crate::common::receiver::Received> {
    let deadline = Instant::now() + Duration::from_secs(20);
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
    let (served, _) = serve(
        &dir.path().join("emulator.db"),
        &[
            "--rate-limit",
            "off",
            "--clock-start",
            "2026-10-01T00:00:00Z",
            "--simulate-outage",
            "Checkout:2026-10-11T10:00:00Z:1h",
        ],
    );
    let api = Api::of(&served);
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
    let jump = api.ok("POST", "/-/clock", Some(json!({"to": "2026-10-31T00:00:00Z"})));
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
