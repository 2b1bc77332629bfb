//! Issue 50 item 3: the HTML status report's SLO sections, against
//! `monform serve` with a simulated clock and a replayed outage: two days
//! of one check a minute, half an hour of them failed, and the report's
//! chart and figures as a hand count gives them.

use crate::common::clock::{Simulated, checkout_each_minute};
use crate::common::*;

#[test]
fn the_status_report_charts_each_slo_from_the_results() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("monform.toml"), "[project]\nname = \"slo-report\"\n").unwrap();
    std::fs::write(
        dir.path().join("monitors.yaml"),
        checkout_each_minute(
            "slos:
  checkout:
    name: Checkout availability
    checks: [checks.checkout]
    target: 98
    window: 2d
",
        ),
    )
    .unwrap();
    let emulator = Simulated::serve(
        &dir.path().join("emulator.db"),
        "2026-10-01T00:00:00Z",
        &["Checkout:2026-10-02T12:00:00Z:30m"],
        &[],
    );
    let now = "2026-10-03T00:00:00Z";
    let run = |args: &[&str]| emulator.run(dir.path(), now, args);
    let applied = run(&["apply", "--auto-approve"]);
    assert!(applied.status.success(), "{}", stderr(&applied));
    // Two days: a run each minute after the clock's start, strictly before
    // the end (2 * 1,440 - 1), those of 12:00 to 12:29 on the 2nd failed.
    let jump = emulator.jump(now);
    assert_eq!(jump["runs"], 2_879, "{jump}");

    let out = dir.path().join("report.html");
    let report = run(&["status", "--format", "html", "--out", out.to_str().unwrap()]);
    assert_eq!(report.status.code(), Some(0), "{}", stderr(&report));
    let html = std::fs::read_to_string(&out).unwrap();
    let section = &html[html
        .find("<section class=\"slo\"")
        .unwrap_or_else(|| panic!("no SLO section: {html}"))..];
    let section = &section[..section.find("</section>").unwrap()];
    // The window [Oct 1, Oct 3) by UTC day: 1,439 good of 1,439, then
    // 1,410 of 1,440 (97.917%, under the 98% target: a poor bar).
    assert!(
        section.contains("<rect class=\"good\"") && section.contains("2026-10-01: 100.000% good (1,439 of 1,439)"),
        "{section}"
    );
    assert!(
        section.contains("<rect class=\"poor\"") && section.contains("2026-10-02: 97.917% good (1,410 of 1,440)"),
        "{section}"
    );
    // SLI 2,849 / 2,879 = 98.958%; budget left 1 - (30 / 2,879) / 0.02 =
    // 47.899%: the figure, the line's last point and the chart's label.
    assert!(section.contains("<dd>98.958%</dd>"), "{section}");
    assert!(section.contains(">47.9%</dd>"), "{section}");
    assert!(
        section.contains("to the end of 2026-10-02: 47.9% of the error budget left"),
        "{section}"
    );
    assert!(
        section.contains("aria-label=\"error budget left over the window, now 47.9%"),
        "{section}"
    );
    assert!(section.contains("<dd>2849 of 2879</dd>"), "{section}");
    // Self-contained: nothing fetched, no script.
    assert!(!html.contains("<script") && !html.contains(" src="), "{html}");
}
