//! The input made straight from each resource's serde form equals the one
//! made through JSON (masked, after its group, converted), for every
//! resource of every example project and for the cases the examples lack.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use monform_config::Desired;
use serde_json::{Value, json};

use super::serialize::to_regorus;
use super::*;

/// The groups map `resources` builds.
fn groups_of(desired: &Desired) -> HashMap<&str, (Value, regorus::Value)> {
    let mut convert = Convert::default();
    desired
        .resources
        .values()
        .filter(|g| g.address.kind == Kind::Group)
        .map(|g| {
            let json = mask(Kind::Group, &g.resource.to_json(), &g.sensitive);
            (g.address.id.as_str(), (json.clone(), convert.fields(json)))
        })
        .collect()
}

/// Every resource of `desired` both ways: equal; the kinds built directly
/// and the number through JSON.
fn compare(desired: &Desired) -> (BTreeSet<Kind>, usize) {
    let groups = groups_of(desired);
    let mut convert = Convert::default();
    let mut direct_kinds = BTreeSet::new();
    let mut through = 0;
    for resource in desired.resources.values() {
        // The serde form alone, before masking and merging: what
        // `serde_json::to_value` and `regorus::Value::from` make.
        let plain = to_regorus(&mut convert, &*resource.resource).expect("serializable");
        assert_eq!(
            plain,
            regorus::Value::from(resource.resource.to_json()),
            "{}",
            resource.address
        );
        let expected = through_json(&mut convert, resource, &groups);
        match direct(&mut convert, resource, &groups) {
            Some(fields) => {
                assert_eq!(fields, expected, "{}", resource.address);
                direct_kinds.insert(resource.address.kind);
            }
            None => through += 1,
        }
    }
    (direct_kinds, through)
}

fn load(dir: &Path) -> Desired {
    let loaded = monform_config::load(dir, &|_: &str| None);
    loaded.desired
}

#[test]
fn every_example_resource_is_the_same_made_directly() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut kinds = BTreeSet::new();
    let mut resources = 0;
    for project in [
        "full",
        "quickstart",
        "slo",
        "environments",
        "playwright-suite",
        "reconcile/project",
    ] {
        let desired = load(&examples.join(project));
        resources += desired.resources.len();
        kinds.extend(compare(&desired).0);
    }
    assert!(resources > 20, "{resources}");
    // Every kind the examples write is built directly at least once.
    for kind in [Kind::Check, Kind::Group, Kind::AlertChannel] {
        assert!(kinds.contains(&kind), "{kind:?} in {kinds:?}");
    }
}

#[test]
fn secrets_groups_defaults_snippets_and_floats_are_the_same_made_directly() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("monform.toml"),
        "[project]\nname = \"p\"\n[defaults]\nfrequency = 10\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("m.yaml"),
        r#"
groups:
  g:
    name: G
    concurrency: 1
    activated: false
    locations: [us-east-1]
    tags: [team, shared]
    environmentVariables: [{ key: B, value: "2" }]
    retryStrategy: { type: FIXED, baseBackoffSeconds: 10, maxRetries: 1, maxDurationSeconds: 60, sameRegion: true }
    apiCheckDefaults:
      headers: [{ key: X-Team, value: web }]
      queryParameters: [{ key: v, value: "1" }]
      assertions: [{ source: STATUS_CODE, comparison: EQUALS, target: "200" }]
    setupSnippet: login
  bare:
    name: Bare
    concurrency: 1
snippets:
  login:
    name: Login
    script: "await login()"
alertChannels:
  hook:
    type: WEBHOOK
    config: { name: n, url: "https://h.test/in?token=abc", method: POST }
checks:
  api:
    checkType: API
    name: A
    group: g
    tags: [own, shared]
    request:
      method: GET
      url: https://example.com
      headers: [{ key: Accept, value: text/html }]
  api-bare:
    checkType: API
    name: A bare
    group: bare
    request: { method: GET, url: https://example.com/bare }
  secret-header:
    checkType: API
    name: S
    group: g
    request:
      method: GET
      url: https://example.com
      headers: [{ key: Authorization, value: Bearer hunter2 }]
  url-credential:
    checkType: URL
    name: U
    request: { url: "https://example.com/?apikey=abc" }
  browser:
    checkType: BROWSER
    name: B
    group: g
    script: "await page.goto('https://example.com')"
  tcp:
    checkType: TCP
    name: T
    degradedResponseTime: 1500
    request: { hostname: example.com, port: 443 }
variables:
  TOKEN: { value: s3cret, secret: true }
  PLAIN: { value: open }
"#,
    )
    .unwrap();
    let desired = load(dir.path());
    assert!(desired.resources.len() >= 11, "{}", desired.resources.len());
    let (kinds, through) = compare(&desired);
    // The secret header, the URL's credential, the channel's URL token and
    // the secret variable go through JSON; everything else directly.
    assert_eq!(through, 4);
    assert!(kinds.contains(&Kind::Check) && kinds.contains(&Kind::Group) && kinds.contains(&Kind::Variable));
}

#[test]
fn serde_shapes_are_made_as_serde_json_makes_them() {
    #[derive(serde::Serialize)]
    enum Shape {
        Unit,
        Newtype(u8),
        Tuple(i32, f64),
        Struct { a: Option<u8>, b: char },
    }
    #[derive(serde::Serialize)]
    struct All {
        shapes: Vec<Shape>,
        bytes: serde_json::Value,
        big: u128,
        negative: i64,
        nan: f64,
        float: f32,
        map: std::collections::BTreeMap<String, (u8, bool)>,
        unit: (),
        long: String,
    }
    let value = All {
        shapes: vec![
            Shape::Unit,
            Shape::Newtype(1),
            Shape::Tuple(-1, 2.5),
            Shape::Struct { a: None, b: 'x' },
        ],
        bytes: json!([1, {"k": [null]}]),
        big: u128::from(u64::MAX),
        negative: -7,
        nan: f64::NAN,
        float: 0.5,
        map: [("k".to_owned(), (1, true))].into_iter().collect(),
        unit: (),
        long: "x".repeat(100),
    };
    let mut convert = Convert::default();
    let direct = to_regorus(&mut convert, &value).unwrap();
    let json = serde_json::to_value(&value).unwrap();
    assert_eq!(direct, convert.fields(json.clone()));
    assert_eq!(direct, regorus::Value::from(json));
    // A map keyed by numbers is left to serde_json.
    let numbered: std::collections::BTreeMap<u8, u8> = [(1, 2)].into_iter().collect();
    assert!(to_regorus(&mut convert, &numbered).is_err());
}
