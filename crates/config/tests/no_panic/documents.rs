//! Structured documents: real sections, ids, fields and values, valid
//! resources of every kind with random edits, and random trees.

use super::*;

/// A document value, before it is written as YAML or TOML.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum V {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    /// Written verbatim where a scalar may stand (odd numbers, dates); a string elsewhere.
    Raw(String),
    Seq(Vec<V>),
    Map(Vec<(String, V)>),
}

impl V {
    pub(crate) fn from_json(value: &serde_json::Value) -> V {
        use serde_json::Value;
        match value {
            Value::Null => V::Null,
            Value::Bool(b) => V::Bool(*b),
            Value::Number(n) => n.as_i64().map_or_else(|| V::Float(n.as_f64().unwrap_or(0.0)), V::Int),
            Value::String(s) => V::Str(s.clone()),
            Value::Array(items) => V::Seq(items.iter().map(V::from_json).collect()),
            Value::Object(map) => V::Map(map.iter().map(|(k, v)| (k.clone(), V::from_json(v))).collect()),
        }
    }

    pub(crate) fn children_mut(&mut self) -> Vec<&mut V> {
        match self {
            V::Seq(items) => items.iter_mut().collect(),
            V::Map(entries) => entries.iter_mut().map(|(_, v)| v).collect(),
            _ => Vec::new(),
        }
    }

    pub(crate) fn count(&self) -> usize {
        1 + match self {
            V::Seq(items) => items.iter().map(V::count).sum(),
            V::Map(entries) => entries.iter().map(|(_, v)| v.count()).sum(),
            _ => 0,
        }
    }

    /// The node at pre-order position `n`.
    pub(crate) fn nth_mut(&mut self, n: usize) -> Option<&mut V> {
        if n == 0 {
            return Some(self);
        }
        let mut n = n - 1;
        for child in self.children_mut() {
            let size = child.count();
            if n < size {
                return child.nth_mut(n);
            }
            n -= size;
        }
        None
    }
}

impl Serialize for V {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            V::Null => serializer.serialize_unit(),
            V::Bool(b) => serializer.serialize_bool(*b),
            V::Int(i) => serializer.serialize_i64(*i),
            V::Float(f) => serializer.serialize_f64(*f),
            V::Str(s) | V::Raw(s) => serializer.serialize_str(s),
            V::Seq(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            V::Map(entries) => {
                let mut map = serializer.serialize_map(Some(entries.len()))?;
                for (k, v) in entries {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

pub(crate) const SECTIONS: &[&str] = &[
    "checks",
    "groups",
    "snippets",
    "variables",
    "alertChannels",
    "maintenanceWindows",
    "statusPages",
    "statusPageServices",
    "dashboards",
    "privateLocations",
];

#[rustfmt::skip]
pub(crate) const FIELDS: &[&str] = &[
    "checkType", "name", "frequency", "frequencyOffset", "request", "url", "method", "hostname", "port", "query",
    "recordType", "nameServer", "protocol", "ipFamily", "pingCount", "group", "script", "file", "alertChannels",
    "setupSnippet", "tearDownSnippet", "heartbeat", "period", "periodUnit", "grace", "graceUnit", "codeBundlePath",
    "testCommand", "prompt", "locations", "privateLocations", "tags", "assertions", "source", "comparison", "target",
    "property", "headers", "key", "value", "type", "config", "address", "number", "environmentVariables",
    "dependencies", "path", "content", "retryStrategy", "alertSettings", "reminders", "triggerIncident", "service",
    "severity", "degradedResponseTime", "maxResponseTime", "activated", "muted", "runtimeId", "concurrency",
    "apiCheckDefaults", "slugName", "icon", "secret", "locked", "cards", "services", "customUrl", "header", "startsAt",
    "endsAt", "repeatUnit", "description", "body", "bodyType", "followRedirects", "localSetupScript",
];

pub(crate) const IDS: &[&str] = &["a", "b", "g", "ch", "s", "svc", "office", "web", "x_1", "9lives"];
pub(crate) const BAD_IDS: &[&str] = &["", "-x", "a b", "é", "a.b", "null", "x/y"];

#[rustfmt::skip]
pub(crate) const STRINGS: &[&str] = &[
    "URL", "API", "TCP", "DNS", "ICMP", "BROWSER", "MULTI_STEP", "HEARTBEAT", "PLAYWRIGHT", "AGENTIC", "url", "GET",
    "POST", "STATUS_CODE", "JSON_BODY", "RESPONSE_TIME", "EQUALS", "LESS_THAN", "A", "AAAA", "UDP", "IPv4", "days",
    "minutes", "seconds", "EMAIL", "WEBHOOK", "SMS", "FALLBACK", "LINEAR", "RUN_BASED", "MAJOR", "eu-west-1",
    "us-east-1", "https://example.com/", "example.com", "oncall@example.com", "+31612345678", "${env:SET}",
    "${env:UNSET}", "${env:", "${env:SET:-d}", "${env:UNSET:-}", "${env:NESTED}", "${env:MULTI}", "$${env:X}",
    "${env:1X}", "${env:}", "${x}", "${env:A-B}", "script.js", "../script.js", "scripts/script.js", "missing.js", "",
    " ", "a", "b", "g", "ch", "s", "svc", "office", "null", "~", "true", "1", "0x10", "1e5", "2026.04",
    "2026-01-01T00:00:00Z", "é", "😀", "\n", "a\nb", "a\n", "\"", "'", "#", ": ", "- ", "\t", "\u{0}", "\r",
    "line one\nline two\n",
];

pub(crate) const RAW: &[&str] = &[
    "99999999999999999999",
    "-9223372036854775808",
    "18446744073709551615",
    "1e999",
    "-1e-999",
    "0x7FFFFFFFFFFFFFFF",
    "0xFFFFFFFFFFFFFFFFF",
    "0o777",
    "0b11",
    "1_000",
    "+5",
    "-0",
    "0.0",
    "+.inf",
    "1979-05-27T07:32:00Z",
    "1979-05-27",
    "07:32:00",
];

pub(crate) fn key() -> BoxedStrategy<String> {
    prop_oneof![
        3 => select(SECTIONS).prop_map(str::to_owned),
        8 => select(FIELDS).prop_map(str::to_owned),
        2 => select(IDS).prop_map(str::to_owned),
        1 => select(BAD_IDS).prop_map(str::to_owned),
        1 => "[a-zA-Z0-9_.-]{0,10}",
        1 => "\\PC{0,6}",
    ]
    .boxed()
}

pub(crate) fn scalar() -> BoxedStrategy<V> {
    prop_oneof![
        2 => Just(V::Null),
        2 => any::<bool>().prop_map(V::Bool),
        2 => any::<i64>().prop_map(V::Int),
        4 => (-3i64..200).prop_map(V::Int),
        1 => select(&[i64::MIN, i64::MAX, 4_294_967_295, 4_294_967_296, 300_001, 1440][..]).prop_map(V::Int),
        2 => any::<f64>().prop_map(V::Float),
        1 => select(&[f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.0, 0.5, 1e300][..]).prop_map(V::Float),
        8 => select(STRINGS).prop_map(|s| V::Str(s.to_owned())),
        2 => "[ -~]{0,16}".prop_map(V::Str),
        1 => "\\PC{0,8}".prop_map(V::Str),
        1 => any::<String>().prop_map(V::Str),
        1 => (1usize..700).prop_map(|n| V::Str("x".repeat(n))),
        2 => select(RAW).prop_map(|s| V::Raw(s.to_owned())),
    ]
    .boxed()
}

pub(crate) fn value() -> BoxedStrategy<V> {
    scalar()
        .prop_recursive(4, 40, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(V::Seq),
                prop::collection::vec((key(), inner), 0..6).prop_map(V::Map),
                // A script from a file, or a list of references.
                select(STRINGS).prop_map(|f| V::Map(vec![("file".into(), V::Str(f.into()))])),
                prop::collection::vec(select(IDS).prop_map(|s| V::Str(s.into())), 0..4).prop_map(V::Seq),
            ]
        })
        .boxed()
}

/// Valid resources of every kind: (section, id, resource). They reference
/// each other by the ids given here.
pub(crate) fn templates() -> Vec<(&'static str, &'static str, serde_json::Value)> {
    vec![
        (
            "checks",
            "url",
            json!({
                "checkType": "URL", "name": "Homepage", "group": "g", "frequency": 5, "frequencyOffset": 3,
                "request": { "url": "https://www.example.com/", "followRedirects": true,
                    "assertions": [{ "source": "STATUS_CODE", "comparison": "EQUALS", "target": "200" }] },
                "alertChannels": ["ch", "hook"],
            }),
        ),
        (
            "checks",
            "api",
            json!({
                "checkType": "API", "name": "Orders API", "group": "g", "frequency": 0, "frequencyOffset": 30,
                "setupSnippet": "s", "tearDownSnippet": "inline", "runtimeId": "2026.04",
                "retryStrategy": { "type": "LINEAR", "baseBackoffSeconds": 30, "maxRetries": 2,
                    "maxDurationSeconds": 120, "sameRegion": true },
                "alertSettings": { "escalationType": "RUN_BASED", "runBasedEscalation": { "failedRunThreshold": 2 },
                    "reminders": { "amount": 1, "interval": 10 } },
                "request": { "method": "POST", "url": "https://${env:SET}/orders", "bodyType": "JSON",
                    "body": "{\"dryRun\": true}", "headers": [{ "key": "Content-Type", "value": "application/json" }],
                    "assertions": [
                        { "source": "STATUS_CODE", "comparison": "LESS_THAN", "target": "300" },
                        { "source": "JSON_BODY", "property": "$.status", "comparison": "EQUALS", "target": "ok" },
                    ] },
                "degradedResponseTime": 800, "maxResponseTime": 3000,
                "triggerIncident": { "service": "svc", "severity": "MAJOR", "name": "Down", "description": "d",
                    "notifySubscribers": true },
            }),
        ),
        (
            "checks",
            "tcp",
            json!({
                "checkType": "TCP", "name": "Database port", "frequency": 0, "frequencyOffset": 10,
                "request": { "hostname": "db.example.com", "port": 5432 }, "privateLocations": ["office"],
            }),
        ),
        (
            "checks",
            "dns",
            json!({
                "checkType": "DNS", "name": "Apex", "frequency": 60,
                "request": { "query": "example.com", "recordType": "A", "nameServer": "1.1.1.1", "port": 53,
                    "protocol": "UDP",
                    "assertions": [{ "source": "RESPONSE_CODE", "comparison": "EQUALS", "target": "NOERROR" }] },
            }),
        ),
        (
            "checks",
            "icmp",
            json!({
                "checkType": "ICMP", "name": "Gateway ping", "frequency": 1, "degradedPacketLossThreshold": 5,
                "maxPacketLossThreshold": 25, "request": { "hostname": "gw.example.com", "ipFamily": "IPv4",
                    "pingCount": 10 },
            }),
        ),
        (
            "checks",
            "browser",
            json!({
                "checkType": "BROWSER", "name": "Login", "frequency": 15, "script": { "file": "script.js" },
                "environmentVariables": [{ "key": "BASE_URL", "value": "https://www.example.com" },
                    { "key": "PASSWORD", "value": "${env:UNSET:-change-me}", "secret": true }],
            }),
        ),
        (
            "checks",
            "steps",
            json!({
                "checkType": "MULTI_STEP", "name": "Checkout", "frequency": 30, "script": "await fetch('x')\n",
            }),
        ),
        (
            "checks",
            "beat",
            json!({
                "checkType": "HEARTBEAT", "name": "Backup", "tags": ["team:platform"],
                "heartbeat": { "period": 1, "periodUnit": "days", "grace": 30, "graceUnit": "minutes" },
            }),
        ),
        (
            "checks",
            "e2e",
            json!({
                "checkType": "PLAYWRIGHT", "name": "Suite", "frequency": 60, "codeBundlePath": "tests/e2e",
                "testCommand": "npx playwright test", "browsers": ["chromium"],
            }),
        ),
        (
            "checks",
            "agent",
            json!({
                "checkType": "AGENTIC", "name": "Sign-up agent", "frequency": 60, "prompt": "Sign up.\n",
            }),
        ),
        (
            "groups",
            "g",
            json!({
                "name": "Production", "concurrency": 3, "locations": ["eu-west-1", "us-east-1"], "runtimeId": "2026.04",
                "apiCheckDefaults": { "url": "https://api.example.com",
                    "headers": [{ "key": "User-Agent", "value": "monform" }] },
                "setupSnippet": "s", "alertChannels": ["ch"], "retryStrategy": "FALLBACK",
            }),
        ),
        (
            "snippets",
            "s",
            json!({ "name": "Sign request", "script": { "file": "script.js" } }),
        ),
        (
            "snippets",
            "inline",
            json!({ "name": "Clean up", "script": "await fetch('x')\n" }),
        ),
        (
            "alertChannels",
            "ch",
            json!({
                "type": "EMAIL", "config": { "address": "oncall@example.com" }, "sendDegraded": false,
            }),
        ),
        (
            "alertChannels",
            "hook",
            json!({
                "type": "WEBHOOK", "config": { "name": "Ops bot", "url": "https://hooks.example.com/x",
                    "method": "POST", "headers": [{ "key": "X-Source", "value": "monform" }],
                    "webhookSecret": "${env:SET}" },
            }),
        ),
        (
            "alertChannels",
            "sms",
            json!({
                "type": "SMS", "config": { "number": "+31612345678", "name": "On-call" },
            }),
        ),
        ("variables", "KEY", json!({ "value": "${env:SET:-x}", "secret": true })),
        (
            "maintenanceWindows",
            "weekly",
            json!({
                "name": "Weekly", "tags": ["team:platform"], "startsAt": "2026-12-06T02:00:00Z",
                "endsAt": "2026-12-06T03:00:00Z", "repeatInterval": 1, "repeatUnit": "WEEK",
                "timezone": "Europe/Amsterdam", "silenceAllAlerts": true,
            }),
        ),
        (
            "statusPages",
            "public",
            json!({
                "name": "Status", "url": "acme-status", "cards": [{ "name": "Shop", "services": ["svc"] }],
            }),
        ),
        ("statusPageServices", "svc", json!({ "name": "Web shop" })),
        (
            "dashboards",
            "wall",
            json!({
                "header": "Acme", "customUrl": "acme-wall", "tags": ["team:web"], "checksPerPage": 10, "width": "FULL",
            }),
        ),
        (
            "privateLocations",
            "office",
            json!({
                "name": "Office", "slugName": "office-ams", "icon": "building",
                "proxyUrl": "${env:UNSET:-http://proxy:3128}",
            }),
        ),
    ]
}

pub(crate) fn template(id: &str) -> serde_json::Value {
    let found = templates().into_iter().find(|(_, template_id, _)| *template_id == id);
    found.expect("a template with this id").2
}

#[derive(Debug, Clone)]
pub(crate) enum Edit {
    Replace(V),
    Remove,
    Insert(String, V),
}

pub(crate) fn edit() -> impl Strategy<Value = (Index, Edit)> {
    let edit = prop_oneof![
        2 => value().prop_map(Edit::Replace),
        2 => Just(Edit::Remove),
        1 => (key(), value()).prop_map(|(k, v)| Edit::Insert(k, v)),
    ];
    (any::<Index>(), edit)
}

pub(crate) fn apply(resource: &mut V, (at, edit): (Index, Edit)) {
    let n = at.index(resource.count());
    match edit {
        Edit::Replace(value) => {
            if let Some(node) = resource.nth_mut(n) {
                *node = value;
            }
        }
        // Removes a child of the node at `n`.
        Edit::Remove => {
            if let Some(node) = resource.nth_mut(n) {
                match node {
                    V::Seq(items) if !items.is_empty() => drop(items.remove(n % items.len())),
                    V::Map(entries) if !entries.is_empty() => drop(entries.remove(n % entries.len())),
                    _ => {}
                }
            }
        }
        Edit::Insert(key, value) => {
            if let Some(node) = resource.nth_mut(n) {
                match node {
                    V::Seq(items) => items.push(value),
                    V::Map(entries) => entries.push((key, value)),
                    other => *other = V::Map(vec![(key, value)]),
                }
            }
        }
    }
}

/// One resource entry: (section, id, resource).
pub(crate) fn entry() -> BoxedStrategy<(String, String, V)> {
    let count = templates().len();
    let id = prop_oneof![8 => Just(None), 3 => select(IDS).prop_map(Some), 1 => select(BAD_IDS).prop_map(Some)];
    let from_template = (0..count, id, prop::collection::vec(edit(), 0..3)).prop_map(|(i, id, edits)| {
        let (section, default_id, resource) = templates().swap_remove(i);
        let mut resource = V::from_json(&resource);
        for e in edits {
            apply(&mut resource, e);
        }
        (section.to_owned(), id.unwrap_or(default_id).to_owned(), resource)
    });
    let random = (
        key(),
        prop_oneof![select(IDS), select(BAD_IDS)],
        prop_oneof![
            3 => prop::collection::vec((key(), value()), 0..8).prop_map(V::Map),
            1 => value(),
        ],
    )
        .prop_map(|(section, id, resource)| (section, id.to_owned(), resource));
    prop_oneof![5 => from_template, 1 => random].boxed()
}

/// A resource file: mostly sections of resources, sometimes anything.
pub(crate) fn document() -> BoxedStrategy<V> {
    let sections = prop::collection::vec(entry(), 0..6).prop_map(|entries| {
        let mut sections: Vec<(String, V)> = Vec::new();
        for (section, id, resource) in entries {
            let position = match sections.iter().position(|(s, _)| *s == section) {
                Some(p) => p,
                None => {
                    sections.push((section, V::Map(Vec::new())));
                    sections.len() - 1
                }
            };
            if let V::Map(resources) = &mut sections[position].1 {
                resources.push((id, resource));
            }
        }
        V::Map(sections)
    });
    prop_oneof![
        8 => sections,
        1 => prop::collection::vec((key(), value()), 0..4).prop_map(V::Map),
        1 => value(),
    ]
    .boxed()
}

/// A `monform.toml`: its real sections and fields, valid values mostly.
pub(crate) fn project_document() -> BoxedStrategy<V> {
    let project_field = prop_oneof![
        4 => Just(("name".to_owned(), V::Str("fuzz".into()))),
        1 => select(STRINGS).prop_map(|s| ("name".to_owned(), V::Str(s.into()))),
        2 => prop::collection::vec(
            prop_oneof![
                select(&["**/*.yaml", "*.toml", "monitors/**", "[", "{a,b", "**", "a[!b]"][..])
                    .prop_map(|s| V::Str(s.into())),
                scalar(),
            ],
            0..4,
        )
        .prop_map(|items| ("include".to_owned(), V::Seq(items))),
        1 => (
            select(&["allow-paths", "secret-env", "public-env"][..]),
            prop::collection::vec(
                prop_oneof![
                    select(&["../shared", "/", "scripts", "SET", "MONFORM_API_KEY", "${env:SET}", "1X", ""][..])
                        .prop_map(|s| V::Str(s.into())),
                    scalar(),
                ],
                0..3,
            ),
        )
            .prop_map(|(key, items)| (key.to_owned(), V::Seq(items))),
        1 => (key(), value()),
    ];
    let section = prop_oneof![
        4 => prop::collection::vec(project_field, 0..3).prop_map(|f| ("project".to_owned(), V::Map(f))),
        1 => value().prop_map(|v| ("api".to_owned(), V::Map(vec![("url".into(), v)]))),
        1 => prop_oneof![Just("local"), Just("postgres"), Just("s3")]
            .prop_map(|b| ("state".to_owned(), V::Map(vec![("backend".into(), V::Str(b.into()))]))),
        2 => prop::collection::vec((key(), value()), 0..5).prop_map(|f| ("defaults".to_owned(), V::Map(f))),
        1 => (key(), value()),
    ];
    prop::collection::vec(section, 0..5).prop_map(V::Map).boxed()
}
