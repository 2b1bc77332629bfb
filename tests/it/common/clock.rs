//! `monform serve` with a simulated clock and replayed outages (issue 50's
//! SLO tests): `--clock-start`, `--simulate-outage CHECK:START:DURATION`,
//! the rate limit off; its admin routes (`POST /-/clock` plays the runs a
//! jump skips); and `monform` run against it as at a time of that clock
//! (`MONFORM_SLO_NOW_MS`), so the figures are those of the simulated time.

use std::path::Path;
use std::process::Output;
use std::time::Duration;

use reqwest::blocking::Client;
use serde_json::Value;

use super::{Served, monform, serve};

/// The emulator on a simulated clock, and its development key.
pub struct Simulated {
    pub served: Served,
    pub key: String,
    client: Client,
}

impl Simulated {
    /// `monform serve --db DB` with its clock at `start` (RFC 3339), each
    /// of `outages` replayed (`Checkout:2026-10-07T12:00:00Z:30m`), the
    /// rate limit off, and `extra` flags (`--schedule`).
    pub fn serve(db: &Path, start: &str, outages: &[&str], extra: &[&str]) -> Simulated {
        let mut args = vec!["--rate-limit", "off", "--clock-start", start];
        for outage in outages {
            args.extend(["--simulate-outage", outage]);
        }
        args.extend(extra);
        let (served, _) = serve(db, &args);
        let key = served.key.clone().expect("a development key");
        Simulated {
            served,
            key,
            // A jump over weeks plays tens of thousands of runs.
            client: monform_http::blocking()
                .timeout(Duration::from_secs(120))
                .build()
                .expect("an HTTP client"),
        }
    }

    /// `monform --dir DIR` against it with its key and account, as at
    /// `now` of its clock, reads unpaced (the limit is off).
    pub fn monform(&self, dir: &Path, now: &str) -> assert_cmd::Command {
        let mut command = monform();
        command
            .arg("--dir")
            .arg(dir)
            .args(["--api-url", &self.served.url, "--color", "never"])
            .env("MONFORM_API_KEY", &self.key)
            .env("MONFORM_ACCOUNT_ID", &self.served.account)
            .env("MONFORM_SLO_NOW_MS", millis(now).to_string())
            .env("MONFORM_RATE_LIMIT", "off");
        command
    }

    /// Runs `monform ARGS` as [`Simulated::monform`] sets it up, but with
    /// an API URL that answers nothing: what it decides, it decides from
    /// the project's folder alone (`gate` from the SLO verdicts' cache).
    pub fn run_offline(&self, dir: &Path, now: &str, args: &[&str]) -> Output {
        monform()
            .arg("--dir")
            .arg(dir)
            .args(["--api-url", "http://127.0.0.1:9", "--color", "never"])
            .env("MONFORM_API_KEY", &self.key)
            .env("MONFORM_SLO_NOW_MS", millis(now).to_string())
            .args(args)
            .output()
            .expect("monform runs")
    }

    /// Runs `monform ARGS` as [`Simulated::monform`] sets it up.
    pub fn run(&self, dir: &Path, now: &str, args: &[&str]) -> Output {
        self.monform(dir, now).args(args).output().expect("monform runs")
    }

    /// Moves the clock forward to `to`, playing the runs the jump skips:
    /// the answer (`runs` played, `now`).
    pub fn jump(&self, to: &str) -> Value {
        self.ok("POST", "/-/clock", Some(serde_json::json!({ "to": to })))
    }

    /// One request to the API or the admin routes: its status and body
    /// (`null` when it is not JSON).
    pub fn call(&self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        let mut request = self
            .client
            .request(method.parse().expect("a method"), format!("{}{path}", self.served.url))
            .bearer_auth(&self.key);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().expect("the emulator answers");
        let status = response.status().as_u16();
        (status, response.json().unwrap_or(Value::Null))
    }

    /// As [`Simulated::call`], asserting a 2xx answer: its body.
    pub fn ok(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let (status, body) = self.call(method, path, body);
        assert!((200..300).contains(&status), "{method} {path}: {status} {body}");
        body
    }
}

/// A project's files: `Checkout`, an API check a minute from one location
/// (the name `--simulate-outage Checkout:...` fails), and what follows.
pub fn checkout_each_minute(slos: &str) -> String {
    format!(
        "checks:
  checkout:
    checkType: API
    name: Checkout
    frequency: 1
    locations: [eu-west-1]
    request:
      method: GET
      url: https://shop.example.com/
{slos}"
    )
}

/// UNIX milliseconds of a date-time (RFC 3339).
pub fn millis(text: &str) -> i64 {
    chrono::DateTime::parse_from_rfc3339(text)
        .expect("an RFC 3339 date-time")
        .timestamp_millis()
}

/// UNIX seconds of a date-time, for the API's `from`/`to`.
pub fn seconds(text: &str) -> i64 {
    millis(text).div_euclid(1000)
}
