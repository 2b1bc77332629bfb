//! Set-ups the tests of conflicts and complete drift share (issue 45):
//! edits made in the web UI (a check's fields, a secret variable rotated)
//! and a field read out of a plan's JSON.

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};

use super::{Emulator, Monform, check_named, stderr, stdout};

/// A secret variable whose value is read from `${env:API_TOKEN}`.
pub const SECRET_VARIABLE: &str = "variables:\n  API_TOKEN: { value: \"${env:API_TOKEN}\", secret: true }\n";

/// `API_TOKEN`'s value when the project with [`SECRET_VARIABLE`] is applied.
pub const FIRST_TOKEN: &str = "tok-first-4711";

/// The value [`apply_then_rotate`] sets in the web UI.
pub const ROTATED: &str = "rotated-in-the-ui";

/// `monform ARGS` on `dir` with `API_TOKEN` set to `token`.
pub fn with_token(emulator: &Emulator, dir: &Path, token: &str, args: &[&str]) -> Output {
    emulator
        .monform(dir)
        .env("API_TOKEN", token)
        .args(args)
        .output()
        .expect("monform runs")
}

/// The scenario 3: the project in `dir` (which declares
/// [`SECRET_VARIABLE`]) applied with [`FIRST_TOKEN`], then the variable's
/// value set to [`ROTATED`] in the web UI. `run` runs monform with the
/// environment the test's project reads.
pub fn apply_then_rotate(emulator: &Emulator, run: impl Fn(&[&str]) -> Output) {
    let applied = run(&["apply", "--auto-approve"]);
    assert!(applied.status.success(), "{}\n{}", stdout(&applied), stderr(&applied));
    rotate_secret(emulator, ROTATED);
}

/// `API_TOKEN`'s value set in the web UI (`PUT /v1/variables/API_TOKEN`).
pub fn rotate_secret(emulator: &Emulator, value: &str) {
    emulator.call("PUT", "/v1/variables/API_TOKEN", Some(json!({ "value": value })));
}

/// `body` set on the check named `name` in the web UI (a `PUT` of its type).
pub fn ui_edit_check(emulator: &Emulator, name: &str, body: Value) {
    let check = check_named(emulator, name);
    let id = check["id"]
        .as_str()
        .map_or_else(|| check["id"].to_string(), str::to_owned);
    let kind = check["checkType"].as_str().unwrap_or("api").to_ascii_lowercase();
    emulator.call("PUT", &format!("/v1/checks/{kind}/{id}"), Some(body));
}

/// The field at `path` of a plan's JSON (`plan --format json`), in its
/// first change that has one; fails naming the plan when none has.
pub fn planned_field<'p>(plan: &'p Value, path: &str) -> &'p Value {
    plan["changes"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|change| change["fields"].as_array().into_iter().flatten())
        .find(|field| field["path"] == path)
        .unwrap_or_else(|| panic!("no field {path} in the plan: {plan:#}"))
}
