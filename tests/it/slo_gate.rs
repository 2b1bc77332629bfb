//! Issue 50 item 5: `monform gate` decides from the verdicts the
//! reconciler cached only for the definition the files hold now. A pull
//! request that lowers an SLO's target gets that SLO computed afresh (and
//! says so), the unchanged one still from the cache; a cache of the format
//! before fingerprints is not trusted.

use serde_json::Value;

use crate::common::clock::{Simulated, checkout_each_minute, millis};
use crate::common::*;

const SLOS: &str = "slos:
  checkout-availability:
    checks: [checks.checkout]
    target: 99.5
    window: 2d
  checkout-weekly:
    checks: [checks.checkout]
    target: 90
    window: 7d
";

#[test]
fn a_changed_definition_is_computed_afresh_not_taken_from_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    std::fs::write(dir.join("monform.toml"), "[project]\nname = \"slo-gate\"\n").unwrap();
    std::fs::write(dir.join("monitors.yaml"), checkout_each_minute(SLOS)).unwrap();
    let start = "2026-10-01T00:00:00Z";
    let emulator = Simulated::serve(
        &dir.join("emulator.db"),
        start,
        &["Checkout:2026-10-02T12:00:00Z:30m"],
        &[],
    );
    let applied = emulator.run(dir, start, &["apply", "--auto-approve"]);
    assert!(applied.status.success(), "{}", stderr(&applied));
    // 20 minutes into the outage: 2,179 runs, the last 20 failed. At
    // 99.5%, the last 5 minutes burn 200x the budget's rate, the last
    // hour 66.7x: the 14.4x pair fires.
    let during = "2026-10-02T12:20:00Z";
    emulator.jump(during);
    let reconciled = emulator.run(dir, during, &["reconcile", "--once"]);
    assert!(reconciled.status.code() != Some(1), "{}", stderr(&reconciled));
    let both = ["gate", "--slo", "slos.checkout-availability", "slos.checkout-weekly"];
    // The service out of reach: only the cache can answer.
    let offline = |args: &[&str]| emulator.run_offline(dir, during, args);
    let cached = offline(&both);
    assert_eq!(cached.status.code(), Some(1), "{}", stderr(&cached));
    assert_eq!(
        stdout(&cached),
        "slos.checkout-availability: burning fast: 14.4x the budget's rate over 1h and 5m\n"
    );
    assert!(
        stderr(&cached).contains("gate: figures `reconcile` cached 0s ago"),
        "{}",
        stderr(&cached)
    );

    // The pull request: a 90% target. Its budget is 20 times larger: the
    // last 5 minutes burn 10x, the last hour 3.3x, nothing fires, and
    // 1 - (20 / 2,179) / 0.1 = 90.8% of the budget is left. The
    // reconciler's verdict (burning fast) is of the old definition.
    edit(dir, "monitors.yaml", "    target: 99.5\n", "    target: 90\n");
    let mut args = both.to_vec();
    args.extend(["--format", "json"]);
    let changed = emulator.run(dir, during, &args);
    let said = stderr(&changed);
    assert_eq!(changed.status.code(), Some(0), "{}{said}", stdout(&changed));
    assert!(
        said.contains(
            "gate: slos.checkout-availability: computed now: its definition changed since the figures `reconcile` cached 0s ago"
        ),
        "{said}"
    );
    assert!(
        said.contains("gate: 1 of 2 SLO(s): figures `reconcile` cached 0s ago"),
        "{said}"
    );
    let json: Value = serde_json::from_str(&stdout(&changed)).unwrap();
    let (fresh, kept) = (&json["slos"][0], &json["slos"][1]);
    assert_eq!(json["open"], true, "{json}");
    assert_eq!(fresh["address"], "slos.checkout-availability");
    assert_eq!(fresh["cached"], false, "{fresh}");
    assert_eq!(fresh["computedBecause"], "definitionChanged", "{fresh}");
    assert_eq!(fresh["by"], "gate", "{fresh}");
    assert!(fresh["fastBurn"].is_null(), "{fresh}");
    let left = fresh["budgetLeft"].as_f64().unwrap();
    assert!((left - (1.0 - (20.0 / 2_179.0) / 0.1)).abs() < 1e-9, "{fresh}");
    assert_eq!(kept["address"], "slos.checkout-weekly");
    assert_eq!(
        (&kept["cached"], &kept["by"]),
        (&Value::Bool(true), &"reconcile".into())
    );
    assert!(kept.get("computedBecause").is_none(), "{kept}");

    // The gate cached what it computed: the next one, offline, decides
    // from the cache alone, for the new definition.
    let again = offline(&both);
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    assert!(!stderr(&again).contains("computed now"), "{}", stderr(&again));

    // Back to 99.5% under a cache written before fingerprints (version 1),
    // whose figures say all is well: not trusted, both computed now.
    edit(dir, "monitors.yaml", "    target: 90\n", "    target: 99.5\n");
    let entry = |address: &str| {
        serde_json::json!({"address": address, "window": "2d", "budgetLeft": 1.0, "fastBurn": null,
                           "evaluatedAt": millis(during), "by": "reconcile"})
    };
    let old = serde_json::json!({"version": 1, "slos": {
        "slos.checkout-availability": entry("slos.checkout-availability"),
        "slos.checkout-weekly": entry("slos.checkout-weekly"),
    }});
    std::fs::write(dir.join(".monform/slo-status.json"), old.to_string()).unwrap();
    let old_cache = emulator.run(dir, during, &both);
    assert_eq!(old_cache.status.code(), Some(1), "{}", stderr(&old_cache));
    assert!(stdout(&old_cache).contains("burning fast"), "{}", stdout(&old_cache));
    assert!(
        stderr(&old_cache).contains("gate: 2 SLO(s) computed now: no figures cached in the last 300s"),
        "{}",
        stderr(&old_cache)
    );
}
