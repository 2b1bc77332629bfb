//! `monform status` as a CI step and a phone report (issue 27, item 14):
//! failing checks first, a summary line, `--fail-on failing`, the HTML
//! report on standard output without `--out`, readable 390 px wide.

use crate::common;

use std::path::Path;
use std::time::Duration;

use common::*;

/// Three checks (`alpha` passes, `zulu` fails, `mike` has never run),
/// applied, and one check session of `alpha` and `zulu` finished.
fn ran() -> (Emulator, tempfile::TempDir) {
    let base = fail_target();
    let emulator = Emulator::with(monform_emulator::Config {
        rate_limit: None,
        session_duration: Duration::from_millis(300),
        ..Default::default()
    });
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("monform.toml"),
        "[project]\nname = \"phone\"\n\n[defaults]\nlocations = [\"eu-west-1\"]\n",
    )
    .unwrap();
    let check = |id: &str, name: &str, path: &str| {
        format!(
            "  {id}:\n    checkType: API\n    name: {name}\n    request:\n      method: GET\n      url: {base}{path}\n      assertions:\n        - {{ source: STATUS_CODE, comparison: EQUALS, target: \"200\" }}\n"
        )
    };
    std::fs::write(
        dir.path().join("monitors.yaml"),
        format!(
            "checks:\n{}{}{}",
            check("alpha", "Alpha", "/ok"),
            check("mike", "Mike", "/ok"),
            check("zulu", "Zulu", "/fail")
        ),
    )
    .unwrap();
    let applied = emulator
        .monform(dir.path())
        .args(["apply", "--auto-approve"])
        .output()
        .unwrap();
    assert!(applied.status.success(), "{}", stderr(&applied));
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join(".monform/state.json")).unwrap()).unwrap();
    let ids: Vec<&str> = ["checks.alpha", "checks.zulu"]
        .iter()
        .map(|a| state["resources"][a]["remoteId"].as_str().unwrap())
        .collect();
    emulator.call(
        "POST",
        "/v2/check-sessions/trigger",
        Some(serde_json::json!({ "target": { "checkId": ids } })),
    );
    std::thread::sleep(Duration::from_millis(1500));
    (emulator, dir)
}

fn status(emulator: &Emulator, dir: &Path, args: &[&str]) -> std::process::Output {
    emulator.monform(dir).arg("status").args(args).output().unwrap()
}

#[test]
fn failing_checks_first_a_summary_and_fail_on_for_ci() {
    let (emulator, dir) = ran();
    let output = status(&emulator, dir.path(), &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let table = regex::Regex::new(r"\d+\.\d\d%|\d+ ms")
        .unwrap()
        .replace_all(&stdout(&output), "[n]")
        .into_owned();
    // Columns are as wide as the figures, which vary: one space between.
    let spaces = regex::Regex::new(r" {2,}").unwrap();
    let table: String = table
        .lines()
        .map(|l| format!("{}\n", spaces.replace_all(l, " ")))
        .collect();
    insta::assert_snapshot!("status_failing_first", table);

    let output = status(&emulator, dir.path(), &["--fail-on", "failing"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(stdout(&output).starts_with("ADDRESS"), "the report is still printed");
    insta::assert_snapshot!("fail_on_failing", stderr(&output));
}

#[test]
fn the_html_report_goes_to_standard_output_and_fits_a_phone() {
    let (emulator, dir) = ran();
    let output = status(&emulator, dir.path(), &["--format", "html"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let html = stdout(&output);
    assert!(html.starts_with("<!DOCTYPE html>"), "{html}");
    // The head: the viewport and the narrow-screen rules (`@media`).
    let head = &html[..html.find("</head>").unwrap_or_else(|| panic!("no </head>: {html}"))];
    insta::assert_snapshot!("html_head", head);
    assert!(html.contains("3 checks: 1 failing, 0 degraded, 1 passing"), "{html}");
    assert!(html.find("checks.zulu") < html.find("checks.alpha"), "failing first");
    let report = dir.path().join("report.html");
    std::fs::write(&report, &html).unwrap();
    if let Some(width) = page_width_at_390(&report) {
        assert!(width <= 390, "the page is {width} px wide at a 390 px viewport");
    }
}

/// How wide the page and its tables are in Chromium at a 390 px wide viewport (through
/// playwright-core), or `None` (skipped) without Node, playwright-core or
/// Chromium unless `MONFORM_REQUIRE_BROWSER=1`.
fn page_width_at_390(page: &Path) -> Option<u64> {
    let modules = repo_root().join("node/node_modules");
    let chromium = std::env::var_os("MONFORM_CHROMIUM")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| "/usr/bin/chromium".into());
    let ready = chromium.is_file() && modules.join("playwright-core").is_dir();
    if !ready {
        assert_ne!(
            std::env::var("MONFORM_REQUIRE_BROWSER").as_deref(),
            Ok("1"),
            "no browser"
        );
        monform_testkit::skipped(
            "no Chromium or playwright-core: the page's width at 390 px is not measured (MONFORM_REQUIRE_BROWSER=1 fails instead)",
        );
        return None;
    }
    let script = format!(
        r#"const {{ chromium }} = require({modules:?});
(async () => {{
  const browser = await chromium.launch({{ executablePath: {chromium:?}, args: ['--no-sandbox'] }});
  const page = await browser.newPage({{ viewport: {{ width: 390, height: 844 }} }});
  await page.goto('file://' + {page:?});
  // A table in a scrolling section keeps the page 390 wide: its right edge tells.
  console.log(await page.evaluate(() => Math.ceil(Math.max(document.documentElement.scrollWidth,
    ...[...document.querySelectorAll('table')].map(t => t.getBoundingClientRect().right)))));
  await browser.close();
}})().catch(e => {{ console.error(e); process.exit(1); }});"#,
        modules = modules.join("playwright-core").display().to_string(),
        chromium = chromium.display().to_string(),
        page = page.display().to_string(),
    );
    let output = std::process::Command::new("node")
        .arg("-e")
        .arg(script)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    Some(String::from_utf8_lossy(&output.stdout).trim().parse().unwrap())
}

/// Issue 46, item 5: a check applied but never run has no figures. The
/// service answers zeros for it; `status` says "no data" (JSON `null`),
/// not 0.00% success and 0 ms, in the table, the JSON and the HTML report.
#[test]
fn a_check_that_never_ran_has_no_data_not_zeros() {
    let emulator = Emulator::start();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("monform.toml"),
        "[project]\nname = \"fresh\"\n\n[defaults]\nlocations = [\"eu-west-1\"]\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("monitors.yaml"),
        "checks:\n  homepage:\n    checkType: URL\n    name: Homepage\n    request:\n      url: https://shop.example.com/\n",
    )
    .unwrap();
    emulator.applied(dir.path());
    assert_run!("never_ran", emulator.monform(dir.path()).arg("status"));

    let json = status(&emulator, dir.path(), &["--format", "json"]);
    assert_eq!(json.status.code(), Some(0), "{}", stderr(&json));
    insta::assert_snapshot!("never_ran_json", stdout(&json));
    let json: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let rows = &json["checks"];
    for figure in ["successRatio", "p95", "p99", "avg"] {
        assert!(rows[0][figure].is_null(), "{figure}: {rows}");
    }

    let html = stdout(&status(&emulator, dir.path(), &["--format", "html"]));
    let row = &html[html.find("checks.homepage").unwrap_or_else(|| panic!("{html}"))..];
    let row = &row[..row.find("</tr>").unwrap()];
    assert_eq!(row.matches(">no data</span>").count(), 2, "success and p95: {row}");
    assert!(!row.contains("0.0%") && !row.contains(" ms"), "{row}");
}
