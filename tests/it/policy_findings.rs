//! The ten policies of the bench (the seven of `examples/policies/` and
//! three more) over a project that breaks and keeps each of them, through
//! `monform plan --format json` against the emulator: every finding, in
//! order, is a snapshot. How the input is built and when (issue 48: after
//! the plan, the account's objects freed first, equal arrays and objects
//! shared) must not change one of them.

use crate::common;
use crate::policy::project_with;

use common::*;

/// The bench's three policies beside the examples (crates/bench/src/policies.rs).
const MORE: [(&str, &str); 3] = [
    (
        "name_length.rego",
        "package monform.name_length\n\nwarn contains {\"msg\": \"name over 60 characters\", \"address\": r.address, \"field\": \"name\"} if {\n\tsome r in input.resources\n\tcount(object.get(r.fields, \"name\", \"\")) > 60\n}\n",
    ),
    (
        "slowest_frequency.rego",
        "package monform.slowest_frequency\n\ndeny contains {\"msg\": \"runs less than once a day\", \"address\": r.address, \"field\": \"frequency\"} if {\n\tsome r in input.resources\n\tr.kind == \"checks\"\n\tobject.get(r.fields, \"frequency\", 10) > 1440\n}\n",
    ),
    (
        "tag_count.rego",
        "package monform.tag_count\n\nwarn contains {\"msg\": \"more than 20 tags\", \"address\": r.address, \"field\": \"tags\"} if {\n\tsome r in input.resources\n\tcount(object.get(r.fields, \"tags\", [])) > 20\n}\n",
    ),
];

/// Applied first: `gone` (tagged slo) is deleted by the next plan.
const APPLIED: &str = "alertChannels:
  oncall:
    type: EMAIL
    config: { address: oncall@example.com }
checks:
  gone:
    checkType: TCP
    name: Gone
    tags: [slo, owner:web]
    locations: [eu-west-1]
    alertChannels: [oncall]
    request: { hostname: example.com, port: 443 }
";

/// Every kind of finding: a browser check on the default response time,
/// tagged critical at 10 minutes, without owner, in a group without
/// channels; a check writing locations its group imposes; a long name
/// and 21 tags; checks sharing their group's arrays (the input shares
/// them) and one with a fractional threshold.
const PLANNED: &str = "alertChannels:
  oncall:
    type: EMAIL
    config: { address: oncall@example.com }
groups:
  routed:
    name: Routed
    locations: [eu-west-1, us-east-1]
    tags: [owner:platform]
    alertChannels: [oncall]
  silent:
    name: Silent
    tags: [team:web]
checks:
  login:
    checkType: BROWSER
    name: Login
    group: silent
    frequency: 10
    tags: [critical]
    locations: [eu-west-1]
    script: \"await page.goto('https://example.com')\"
  api-a:
    checkType: API
    name: API A
    group: routed
    locations: [ap-southeast-1]
    request:
      method: GET
      url: https://example.com/a
      assertions:
      - { source: STATUS_CODE, comparison: EQUALS, target: '200' }
  api-b:
    checkType: API
    name: API B
    group: routed
    request:
      method: GET
      url: https://example.com/b
      assertions:
      - { source: STATUS_CODE, comparison: EQUALS, target: '200' }
  ping:
    checkType: ICMP
    name: A ping whose name is far longer than the sixty characters the team allows
    tags: [t1, t2, t3, t4, t5, t6, t7, t8, t9, t10, t11, t12, t13, t14, t15, t16, t17, t18, t19, t20, owner:net]
    locations: [eu-west-1]
    alertChannels: [oncall]
    degradedPacketLossThreshold: 10.5
    request: { hostname: example.com }
";

#[test]
fn the_ten_policies_find_the_same_on_a_plan() {
    let emulator = Emulator::start();
    let dir = project_with(APPLIED, "");
    for (name, text) in MORE {
        std::fs::write(dir.path().join("policies").join(name), text).unwrap();
    }
    let output = emulator
        .monform(dir.path())
        .args(["apply", "--auto-approve"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    std::fs::write(dir.path().join("monitors.yaml"), PLANNED).unwrap();
    let output = emulator
        .monform(dir.path())
        .args(["plan", "--format", "json"])
        .output()
        .unwrap();
    let plan: serde_json::Value =
        serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("{e}: {}", stderr(&output)));
    let findings: Vec<String> = plan["policy"]["findings"]
        .as_array()
        .unwrap_or_else(|| panic!("no findings: {plan}"))
        .iter()
        .map(|f| f.to_string())
        .collect();
    insta::assert_snapshot!("ten_policies_findings", findings.join("\n"));
}
