//! What `monform test --local` prints under the table for a run: why it
//! failed (with the script line a browser run failed at, and the files it
//! left), and with `--verbose` an API check's request, response status and
//! assertions, the console output and the notes. Secret variables are
//! masked by the runner already; credential headers and a URL's
//! credential parameters are hidden here.

use monform_engine::ops::TestRun;
use monform_runner::Outcome;
use serde_json::Value;

use super::test::artifact_kind;

/// Header names whose values are credentials, whatever the check says.
fn is_credential(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    [
        "authorization",
        "cookie",
        "token",
        "secret",
        "password",
        "api-key",
        "apikey",
    ]
    .iter()
    .any(|word| name.contains(word))
}

/// `at line 5 of the script: await expect(page).toHaveTitle('Another Shop')`,
/// or `at e2e/shop.spec.js:3: ...` for a suite, when the runner found it.
pub fn failing_line(outcome: &Outcome) -> Option<String> {
    let at = &outcome.details["at"];
    let line = at["line"].as_u64()?;
    let place = match at["file"].as_str() {
        Some("check.js") | None => format!("line {line} of the script"),
        Some(file) => format!("{file}:{line}"),
    };
    Some(match at["source"].as_str() {
        Some(source) => format!("at {place}: {source}"),
        None => format!("at {place}"),
    })
}

/// The request an API or URL check made, the response's status and each
/// assertion's result.
fn exchange(api: &Value) -> String {
    let mut out = String::new();
    let request = &api["request"];
    if let Some(method) = request["method"].as_str() {
        // A token in the query (`?apikey=`) is masked as headers are.
        out.push_str(&format!(
            "  request: {method} {}\n",
            monform_model::sensitive::mask_url(request["url"].as_str().unwrap_or(""))
        ));
        for (name, value) in request["headers"].as_object().into_iter().flatten() {
            let value = if is_credential(name) {
                "(sensitive)".to_owned()
            } else {
                value.as_str().map_or_else(|| value.to_string(), str::to_owned)
            };
            out.push_str(&format!("    {name}: {value}\n"));
        }
        if let Some(body) = request["data"].as_str().filter(|b| !b.is_empty()) {
            out.push_str(&format!("    body: {}\n", body.replace('\n', " ")));
        }
    }
    let response = &api["response"];
    if let Some(status) = response["status"].as_u64() {
        let time = response["timingPhases"]["total"]
            .as_f64()
            .map_or_else(String::new, |ms| format!(" in {} ms", ms.round() as i64));
        out.push_str(&format!(
            "  response: {status} {}{time}\n",
            response["statusText"].as_str().unwrap_or("")
        ));
    } else if let Some(error) = api["requestError"].as_str() {
        out.push_str(&format!("  response: none ({error})\n"));
    }
    let assertions = api["assertions"].as_array().map(Vec::as_slice).unwrap_or_default();
    if !assertions.is_empty() {
        out.push_str("  assertions:\n");
        for a in assertions {
            let text = |k: &str| a[k].as_str().unwrap_or("").to_owned();
            let property = Some(text("property"))
                .filter(|p| !p.is_empty())
                .map_or_else(String::new, |p| format!(" {p}"));
            let actual = match &a["actual"] {
                Value::String(s) => s.clone(),
                Value::Null => "none".to_owned(),
                other => other.to_string(),
            };
            let verdict = if a["passed"].as_bool() == Some(true) {
                "passed"
            } else {
                "FAILED"
            };
            out.push_str(&format!(
                "    {verdict}  {}{property} {} {:?} (actual: {actual})\n",
                text("source"),
                text("comparison"),
                text("target")
            ));
        }
    }
    out
}

/// A Playwright project's tests (`details.tests` with their `project`),
/// one line each: what ran, in which project, and why a failed one failed.
fn suite_tests(tests: &Value) -> String {
    let tests: Vec<&Value> = tests
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| t["project"].is_string())
        .collect();
    if tests.is_empty() {
        return String::new();
    }
    let failed = tests.iter().filter(|t| t["passed"] != true).count();
    let mut out = format!("  tests: {} passed, {failed} failed\n", tests.len() - failed);
    for test in tests {
        let verdict = if test["passed"] == true { "passed" } else { "FAILED" };
        let line = test["line"].as_u64().map_or_else(String::new, |l| format!(":{l}"));
        let ms = test["ms"]
            .as_f64()
            .map_or_else(String::new, |ms| format!(" ({} ms)", ms.round() as i64));
        out.push_str(&format!(
            "    {verdict}  [{}] {}{line} › {}{ms}\n",
            test["project"].as_str().unwrap_or_default(),
            test["file"].as_str().unwrap_or_default(),
            test["name"].as_str().unwrap_or_default(),
        ));
        if let Some(error) = test["error"].as_str() {
            out.push_str(&format!("            {}\n", error.replace('\n', "\n            ")));
        }
    }
    out
}

/// A run's error (failures), the files it left, and with `verbose` what
/// it exchanged, its notes and console output.
pub fn detail(line: &TestRun, outcome: &Outcome, verbose: bool) -> String {
    let mut out = format!("\n{} ({}):\n", line.address, line.location);
    if let Some(error) = &line.error {
        out.push_str(&format!("  error: {}\n", error.replace('\n', "\n    ")));
    }
    for path in &line.artifacts {
        out.push_str(&format!("  {}: {path}\n", artifact_kind(path)));
    }
    out.push_str(&suite_tests(&outcome.details["tests"]));
    if verbose {
        out.push_str(&exchange(&outcome.api_result));
        for note in &outcome.notes {
            out.push_str(&format!("  note: {note}\n"));
        }
        if let Some(console) = outcome.details["output"].as_str().filter(|o| !o.trim().is_empty()) {
            out.push_str("  output:\n");
            for line in console.lines() {
                out.push_str(&format!("    {line}\n"));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_api_exchange_hides_credentials_and_judges_each_assertion() {
        let api = json!({
            "request": { "method": "GET", "url": "http://shop.test/api", "data": "",
                         "headers": { "Authorization": "Bearer abc", "X-Trace": "1" } },
            "response": { "status": 500, "statusText": "Internal Server Error", "timingPhases": { "total": 12.4 } },
            "assertions": [
                { "source": "STATUS_CODE", "property": "", "comparison": "EQUALS", "target": "200", "actual": 500, "passed": false },
                { "source": "JSON_BODY", "property": "$.ok", "comparison": "EQUALS", "target": "true", "actual": true, "passed": true },
            ],
        });
        assert_eq!(
            exchange(&api),
            "  request: GET http://shop.test/api\n    Authorization: (sensitive)\n    X-Trace: 1\n  \
             response: 500 Internal Server Error in 12 ms\n  assertions:\n    \
             FAILED  STATUS_CODE EQUALS \"200\" (actual: 500)\n    passed  JSON_BODY $.ok EQUALS \"true\" (actual: true)\n"
        );
    }
}
