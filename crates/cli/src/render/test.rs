//! `monform test` output: one line per check and location (the engine's
//! `ops::TestRun`, the service's or `--local`'s), a summary, and JUnit XML.

use std::collections::HashMap;

use monform_api::RunStatus;
use monform_engine::ops::TestRun;
use monform_model::Kind;

use super::findings::Locator;
use super::repo_paths::RepoPaths;

/// Where each check of the files is defined, by address: its file from the
/// repository's root and its line. JUnit's `file` and `line` attributes,
/// which CI reporters (GitLab, GitHub actions reading JUnit) link or
/// annotate.
pub type Places = HashMap<String, (String, usize)>;

/// The [`Places`] of `loaded`'s checks.
pub fn places(loaded: &monform_config::Loaded, paths: &RepoPaths) -> Places {
    let mut locator = Locator::default();
    loaded
        .desired
        .resources
        .values()
        .filter(|d| d.address.kind == Kind::Check)
        .map(|d| {
            let (file, line, _) = locator.locate(&loaded.sources, d.span);
            (d.address.to_string(), (paths.path(&file), line))
        })
        .collect()
}

/// Counts by outcome.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Summary {
    pub passed: usize,
    pub degraded: usize,
    pub failed: usize,
}

impl Summary {
    pub fn of(lines: &[TestRun]) -> Summary {
        let mut summary = Summary::default();
        for line in lines {
            match line.status {
                RunStatus::Passed => summary.passed += 1,
                RunStatus::Degraded => summary.degraded += 1,
                _ => summary.failed += 1,
            }
        }
        summary
    }

    /// Whether `monform test` exits 1.
    pub fn any_failed(&self) -> bool {
        self.failed > 0
    }
}

fn paint(status: RunStatus, color: bool) -> String {
    let text = status.as_str();
    if !color {
        return text.to_owned();
    }
    let code = match status {
        RunStatus::Passed => "32",
        RunStatus::Degraded => "33",
        _ => "31",
    };
    format!("\x1b[{code}m{text}\x1b[0m")
}

fn timing(ms: Option<f64>) -> String {
    ms.map_or_else(|| "-".to_owned(), |ms| format!("{} ms", ms.round() as i64))
}

/// The lines, aligned, then the summary line.
pub fn human(lines: &[TestRun], elapsed_ms: Option<f64>, color: bool) -> String {
    let width = |f: &dyn Fn(&TestRun) -> usize| lines.iter().map(f).max().unwrap_or(0);
    let status_w = width(&|l| l.status.as_str().len());
    let address_w = width(&|l| l.address.len());
    let location_w = width(&|l| l.location.len());
    let timing_w = width(&|l| timing(l.response_time).len());
    let mut out = String::new();
    for line in lines {
        let pad = status_w - line.status.as_str().len();
        out.push_str(&format!(
            "{}{:pad$}  {:address_w$}  {:location_w$}  {:>timing_w$}  {}\n",
            paint(line.status, color),
            "",
            line.address,
            line.location,
            timing(line.response_time),
            line.name,
        ));
    }
    out.push_str(&summary_line(lines, elapsed_ms));
    out.push('\n');
    out
}

pub fn summary_line(lines: &[TestRun], elapsed_ms: Option<f64>) -> String {
    let summary = Summary::of(lines);
    let mut text = format!(
        "{} passed, {} degraded, {} failed ({} runs)",
        summary.passed,
        summary.degraded,
        summary.failed,
        lines.len()
    );
    if let Some(ms) = elapsed_ms {
        text.push_str(&format!(" in {:.1} s", ms / 1000.0));
    }
    text
}

fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // Characters XML 1.0 cannot hold at all.
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// JUnit XML: one testsuite, one testcase per check and location (at its
/// file and line, from `places`), a `<failure>` for every run that did not
/// pass.
pub fn junit(suite: &str, lines: &[TestRun], elapsed_ms: Option<f64>, places: &Places) -> String {
    let summary = Summary::of(lines);
    let seconds = |ms: Option<f64>| format!("{:.3}", ms.unwrap_or(0.0) / 1000.0);
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    out.push_str(&format!(
        "<testsuites name=\"monform\" tests=\"{}\" failures=\"{}\" time=\"{}\">\n",
        lines.len(),
        summary.failed,
        seconds(elapsed_ms)
    ));
    out.push_str(&format!(
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"0\" time=\"{}\">\n",
        escape(suite),
        lines.len(),
        summary.failed,
        seconds(elapsed_ms)
    ));
    for line in lines {
        let place = places
            .get(&line.address)
            .map(|(file, at)| format!(" file=\"{}\" line=\"{at}\"", escape(file)))
            .unwrap_or_default();
        let open = format!(
            "    <testcase classname=\"{}\" name=\"{} ({})\"{place} time=\"{}\"",
            escape(&line.address),
            escape(&line.name),
            escape(&line.location),
            seconds(line.response_time)
        );
        if line.status.is_failure() {
            let message = match &line.error {
                Some(error) => format!("{} in {}: {error}", line.status.as_str(), line.location),
                None => format!("{} in {}", line.status.as_str(), line.location),
            };
            let kept: String = line.artifacts.iter().map(|path| format!("\n{path}")).collect();
            out.push_str(&format!(
                "{open}>\n      <failure message=\"{}\" type=\"{}\">{} {} ({}) {}{}</failure>\n",
                escape(&message),
                line.status.as_str(),
                escape(&line.address),
                escape(&line.name),
                escape(&line.location),
                escape(&message),
                escape(&kept),
            ));
            // The attachment convention of Jenkins' and GitLab's JUnit readers.
            if !line.artifacts.is_empty() {
                let attachments: String = line
                    .artifacts
                    .iter()
                    .map(|path| format!("[[ATTACHMENT|{}]]\n", escape(path)))
                    .collect();
                out.push_str(&format!("      <system-out>{attachments}</system-out>\n"));
            }
            out.push_str("    </testcase>\n");
        } else if line.status == RunStatus::Degraded {
            out.push_str(&format!(
                "{open}>\n      <system-out>DEGRADED in {}</system-out>\n    </testcase>\n",
                escape(&line.location)
            ));
        } else {
            out.push_str(&format!("{open}/>\n"));
        }
    }
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}

/// A Markdown table for a pull-request comment, the summary, then each
/// failure with its error.
pub fn markdown(lines: &[TestRun], elapsed_ms: Option<f64>) -> String {
    let cell = |text: &str| text.replace('|', "\\|").replace('\n', " ");
    let mut out = String::from("| Status | Check | Location | Time | Name |\n|---|---|---|---:|---|\n");
    for line in lines {
        let mark = match line.status {
            RunStatus::Passed => "✅",
            RunStatus::Degraded => "⚠️",
            _ => "❌",
        };
        out.push_str(&format!(
            "| {mark} {} | `{}` | {} | {} | {} |\n",
            line.status.as_str(),
            line.address,
            cell(&line.location),
            timing(line.response_time),
            cell(&line.name)
        ));
    }
    out.push_str(&format!("\n**{}**\n", summary_line(lines, elapsed_ms)));
    let failures: Vec<&TestRun> = lines.iter().filter(|l| l.status.is_failure()).collect();
    if !failures.is_empty() {
        out.push_str("\n### Failures\n");
        for line in failures {
            out.push_str(&format!(
                "\n- `{}` ({}): {}\n",
                line.address,
                cell(&line.location),
                line.status.as_str()
            ));
            if let Some(error) = &line.error {
                out.push_str(&format!("  ```\n  {}\n  ```\n", error.replace('\n', "\n  ")));
            }
            for path in &line.artifacts {
                out.push_str(&format!("  - {}: `{path}`\n", artifact_kind(path)));
            }
        }
    }
    out
}

/// What a kept file is, by its name.
pub fn artifact_kind(path: &str) -> &'static str {
    if path.ends_with(".png") {
        "screenshot"
    } else if path.ends_with(".zip") {
        "trace (`npx playwright show-trace FILE`)"
    } else {
        "file"
    }
}

/// `test [--local] --format json`: every run, and how many passed.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[schemars(rename = "TestReport")]
pub struct Report {
    pub runs: Vec<RunJson>,
    pub summary: SummaryJson,
    /// The service's test sessions (without `--local`): the checks chosen
    /// that sessions do not run (heartbeats, deactivated checks); absent when none.
    #[serde(default, rename = "notRun", skip_serializing_if = "Vec::is_empty")]
    pub not_run: Vec<String>,
}

/// One check's run in one location.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunJson {
    /// The check's address (its remote id when the state does not know it).
    pub address: String,
    pub name: String,
    pub location: String,
    /// `PASSED`, `DEGRADED`, `FAILED`, `TIMED_OUT`...
    pub status: &'static str,
    /// Milliseconds.
    pub response_time: Option<f64>,
    /// Why a failed run failed.
    pub error: Option<String>,
    /// Files a failed browser run left (`--artifacts DIR`): screenshot, Playwright trace.
    pub artifacts: Vec<String>,
    /// A Playwright project's run: each of its tests.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tests: Option<Vec<SuiteTest>>,
}

/// One test of a Playwright project's run.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SuiteTest {
    /// Its `describe` titles and its own, joined by ` › `.
    pub name: Option<String>,
    /// The Playwright project it ran in.
    pub project: Option<String>,
    pub status: SuiteStatus,
    pub duration_ms: Option<serde_json::Number>,
    /// The spec file, relative to the Playwright project.
    pub file: Option<String>,
    pub line: Option<u64>,
    /// A failed test's error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// `file:line` where a failed test failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed_at: Option<String>,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SuiteStatus {
    Passed,
    Failed,
}

/// How many runs passed, were degraded, failed; and how long it all took.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SummaryJson {
    pub passed: usize,
    pub degraded: usize,
    pub failed: usize,
    pub elapsed_ms: Option<f64>,
}

/// The runs as JSON: `{runs: [...], summary: {...}}`.
pub fn json(lines: &[TestRun], elapsed_ms: Option<f64>) -> Report {
    let summary = Summary::of(lines);
    Report {
        runs: lines
            .iter()
            .map(|l| RunJson {
                address: l.address.clone(),
                name: l.name.clone(),
                location: l.location.clone(),
                status: l.status.as_str(),
                response_time: l.response_time,
                error: l.error.clone(),
                artifacts: l.artifacts.clone(),
                tests: None,
            })
            .collect(),
        summary: SummaryJson {
            passed: summary.passed,
            degraded: summary.degraded,
            failed: summary.failed,
            elapsed_ms,
        },
        not_run: Vec::new(),
    }
}

/// A failed run's address, location and error, as `test --local` prints them.
pub fn failure_detail(line: &TestRun) -> String {
    let mut out = format!("\n{} ({}):\n", line.address, line.location);
    match &line.error {
        Some(error) => out.push_str(&format!("  error: {}\n", error.replace('\n', "\n    "))),
        None => out.push_str("  error: the service gave no reason\n"),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(address: &str, status: RunStatus) -> TestRun {
        TestRun {
            address: address.into(),
            name: format!("{address} <&>"),
            location: "eu-west-1".into(),
            status,
            response_time: Some(123.4),
            error: (status != RunStatus::Passed).then(|| "expected 'a' <b>".into()),
            artifacts: Vec::new(),
        }
    }

    #[test]
    fn a_failed_run_fails_the_summary() {
        let lines = [line("checks.a", RunStatus::Passed), line("checks.b", RunStatus::Failed)];
        let summary = Summary::of(&lines);
        assert_eq!(
            summary,
            Summary {
                passed: 1,
                degraded: 0,
                failed: 1
            }
        );
        assert!(summary.any_failed());
        let text = human(&lines, Some(1500.0), false);
        assert!(text.contains("FAILED  checks.b"), "{text}");
        assert!(
            text.ends_with("1 passed, 0 degraded, 1 failed (2 runs) in 1.5 s\n"),
            "{text}"
        );
    }

    #[test]
    fn a_failed_result_from_the_api_fails() {
        let result = monform_api::TestResult::from_body(&serde_json::json!({
            "checkId": "c", "name": "n", "runLocation": "eu-west-1",
            "hasFailures": true, "hasErrors": false, "isDegraded": false
        }));
        let lines = [TestRun {
            address: "checks.c".into(),
            name: result.name,
            location: result.run_location,
            status: result.status,
            response_time: result.response_time,
            error: None,
            artifacts: Vec::new(),
        }];
        assert!(Summary::of(&lines).any_failed());
    }

    #[test]
    fn degraded_passes() {
        let lines = [line("checks.a", RunStatus::Degraded)];
        assert!(!Summary::of(&lines).any_failed());
    }

    #[test]
    fn junit_escapes_and_marks_failures() {
        let lines = [
            line("checks.a", RunStatus::Passed),
            line("checks.b", RunStatus::TimedOut),
        ];
        let places = Places::from([("checks.b".to_owned(), ("shop/m&s.yaml".to_owned(), 7))]);
        let xml = junit("shop", &lines, Some(300.0), &places);
        assert!(xml.contains(r#" file="shop/m&amp;s.yaml" line="7" time="#), "{xml}");
        assert!(xml.contains("name=\"checks.a &lt;&amp;&gt; (eu-west-1)\""), "{xml}");
        assert_eq!(xml.matches("<testcase ").count(), 2);
        assert_eq!(xml.matches("<failure ").count(), 1);
        assert!(xml.contains("failures=\"1\""));
    }

    #[test]
    fn kept_files_are_attached_in_junit_and_listed_in_markdown() {
        let mut failed = line("checks.b", RunStatus::Failed);
        failed.artifacts = vec![
            "out/checks.b-local/screenshot-1.png".into(),
            "out/checks.b-local/trace-1.zip".into(),
        ];
        let xml = junit("shop", std::slice::from_ref(&failed), None, &Places::new());
        assert!(xml.contains("<system-out>[[ATTACHMENT|out/checks.b-local/screenshot-1.png]]\n[[ATTACHMENT|out/checks.b-local/trace-1.zip]]\n</system-out>"), "{xml}");
        let text = markdown(&[failed], None);
        assert!(
            text.contains("  - screenshot: `out/checks.b-local/screenshot-1.png`\n"),
            "{text}"
        );
        assert!(
            text.contains("  - trace (`npx playwright show-trace FILE`): `out/checks.b-local/trace-1.zip`\n"),
            "{text}"
        );
    }
}
