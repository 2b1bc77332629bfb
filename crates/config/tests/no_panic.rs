//! The loader never panics, whatever the files contain, and every span it
//! reports points inside its file.
//!
//! Inputs:
//! - arbitrary bytes, raw (often not UTF-8) and lossy-decoded, and "token
//!   soup" (YAML/TOML punctuation, real names, odd numbers and strings), as
//!   resource files, as `monform.toml`, and straight into `parse_yaml` /
//!   `parse_toml`;
//! - structured documents: real sections, ids, fields and values, valid
//!   resources of every kind with random perturbations, and random trees,
//!   serialized to YAML and TOML in several styles (own emitters with
//!   anchors, aliases, tags, block scalars, flow and inline forms; and the
//!   serde-saphyr and toml serializers);
//! - those serializations with random byte edits;
//! - the shapes of issue 25: alias, `forEach` and substitution bombs (stopped
//!   by the byte budget), substitutions nested thousands deep, and
//!   one-line files of 70 KB and more.
//!
//! Checked on every load: `load` returns; every diagnostic (and related
//! diagnostic) with a span points inside its file, on character boundaries,
//! and renders with miette's graphical handler (as the CLI does); so do the
//! spans of the desired resources and their references.
//!
//! Each property runs 256 cases, or `PROPTEST_CASES`.

use std::fmt::Debug;
use std::path::Path;

use miette::{GraphicalReportHandler, GraphicalTheme};
use monform_config::source::{Sources, Span};
use monform_config::tree::{Node, NodeValue, parse_toml, parse_yaml};
use monform_config::{Diagnostic, Loaded, load};
use proptest::prelude::*;
use proptest::sample::{Index, select};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::json;

// ---- harness ----

fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256);
    ProptestConfig {
        cases,
        max_shrink_iters: 4096,
        ..ProptestConfig::default()
    }
}

fn env(name: &str) -> Option<String> {
    match name {
        "SET" => Some("value".into()),
        // Never read: a load that did would put it in a diagnostic or a value.
        "MONFORM_API_KEY" => Some("fuzz-credential".into()),
        "EMPTY" => Some(String::new()),
        "NESTED" => Some("${env:SET}".into()),
        "MULTI" => Some("line\nnext: 1 # é".into()),
        _ => None,
    }
}

const MINIMAL_PROJECT: &str = "[project]\nname = \"fuzz\"\n";

/// Valid `monform.toml` files the resource-file properties pick from.
const PROJECTS: &[&str] = &[
    MINIMAL_PROJECT,
    "[project]\nname = \"fuzz\"\n\n[defaults]\nfrequency = 10\nlocations = [\"eu-west-1\"]\ntags = [\"team:web\"]\n",
    "[project]\nname = \"fuzz\"\ninclude = [\"**/*.yaml\", \"**/*.toml\"]\n\n[api]\nurl = \"local\"\n\n[state]\nbackend = \"local\"\n",
    "[project]\nname = \"fuzz\"\ninclude = [\"monitors/*\"]\n\n[defaults]\nactivated = false\nalertChannels = [\"ch\"]\ngroup = \"g\"\n",
];

const SCRIPT: &[u8] = b"await page.goto(`${process.env.BASE_URL}`)\n";

/// Writes a project (monform.toml, scripts and `files`), loads it and checks
/// every span of the result.
fn load_project(project: &[u8], files: &[(String, Vec<u8>)]) -> Loaded {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    write(root, "monform.toml", project);
    for script in ["script.js", "scripts/script.js", "monitors/script.js"] {
        write(root, script, SCRIPT);
    }
    for (path, bytes) in files {
        write(root, path, bytes);
    }
    let loaded = load(root, &env);
    check_loaded(&loaded);
    loaded
}

/// `load_project` for files with lines longer than miette's renderer can
/// lay out (columns past 65,535 panic in it: the CLI clips such lines
/// before rendering, issue 25 item 6): spans are checked, not rendered.
fn load_project_unrendered(project: &[u8], files: &[(String, Vec<u8>)]) -> Loaded {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    write(root, "monform.toml", project);
    for (path, bytes) in files {
        write(root, path, bytes);
    }
    let loaded = load(root, &env);
    fn check(sources: &Sources, diagnostic: &Diagnostic) {
        if let Some(span) = diagnostic.span {
            check_span(sources, span, &diagnostic.message);
        }
        let _ = diagnostic.location(sources);
        diagnostic.related.iter().for_each(|d| check(sources, d));
    }
    for diagnostic in &loaded.diagnostics {
        check(&loaded.sources, diagnostic);
    }
    loaded
}

fn write(root: &Path, relative: &str, bytes: &[u8]) {
    let path = root.join(relative);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("create dir");
    }
    std::fs::write(path, bytes).expect("write file");
}

fn check_loaded(loaded: &Loaded) {
    let handler = GraphicalReportHandler::new_themed(GraphicalTheme::unicode_nocolor()).with_width(100);
    for diagnostic in &loaded.diagnostics {
        check_diagnostic(&loaded.sources, diagnostic, &handler);
    }
    for resource in loaded.desired.resources.values() {
        check_span(&loaded.sources, resource.span, &resource.address);
        for reference in &resource.references {
            check_span(&loaded.sources, reference.span, &reference.path);
        }
    }
}

fn check_diagnostic(sources: &Sources, diagnostic: &Diagnostic, handler: &GraphicalReportHandler) {
    if let Some(span) = diagnostic.span {
        check_span(sources, span, &diagnostic.message);
    }
    let _ = diagnostic.location(sources);
    let mut rendered = String::new();
    assert!(
        handler
            .render_report(&mut rendered, &diagnostic.to_report(sources))
            .is_ok(),
        "cannot render {diagnostic:?}"
    );
    for related in &diagnostic.related {
        check_diagnostic(sources, related, handler);
    }
}

fn check_span(sources: &Sources, span: Span, what: &dyn Debug) {
    assert!(
        (span.file as usize) < sources.len(),
        "{what:?}: span {span:?} names a file that was not read"
    );
    let file = sources.get(span.file);
    check_span_in(&file.text, span, &format!("{what:?} in {}", file.name));
}

fn check_span_in(text: &str, span: Span, what: &str) {
    let end = span.start.checked_add(span.len);
    assert!(
        end.is_some_and(|end| end <= text.len()),
        "{what}: span {span:?} ends past the end of the file ({} bytes)",
        text.len()
    );
    let end = span.start + span.len;
    assert!(
        text.is_char_boundary(span.start) && text.is_char_boundary(end),
        "{what}: span {span:?} cuts a character"
    );
}

/// Every span of a parsed tree lies inside the text.
fn check_tree(text: &str, node: &Node) {
    check_span_in(text, node.span, "node");
    match &node.value {
        NodeValue::Seq(items) => items.iter().for_each(|item| check_tree(text, item)),
        NodeValue::Map(entries) => {
            for entry in entries {
                check_span_in(text, entry.key_span, &format!("key `{}`", entry.key));
                check_tree(text, &entry.value);
            }
        }
        _ => {}
    }
}

fn check_parsers(text: &str) {
    match parse_yaml(0, text) {
        Ok(node) => check_tree(text, &node),
        Err(error) => {
            if let Some(span) = error.span {
                check_span_in(text, span, &error.message);
            }
        }
    }
    match parse_toml(0, text) {
        Ok(node) => check_tree(text, &node),
        Err(errors) => {
            for error in errors {
                if let Some(span) = error.span {
                    check_span_in(text, span, &error.message);
                }
            }
        }
    }
}

// ---- arbitrary text ----

/// Pieces of YAML and TOML, real names and awkward values.
#[rustfmt::skip]
const TOKENS: &[&str] = &[
    "checks", "groups", "snippets", "alertChannels", "variables", "statusPages", "privateLocations", "checkType", "URL",
    "API", "HEARTBEAT", "request", "url", "name", "script", "file", "frequency", "heartbeat", "period", "a", "b", "g",
    "ch", ":", ": ", "\n", "\n  ", "\n    ", "  ", " ", "- ", "-", "[", "]", "{", "}", ",", "\"", "'", "&a ", "*a",
    "&b ", "*b ", "*a : ", "? ", "?", "|", "|-", "|+", ">", ">-", "# c", "---", "...", "!!str ", "!!int ", "!!map ",
    "!!seq", "!t ", "!<tag:x> ", "<<: ", "<<: *a", "%YAML 1.2\n", "%TAG ! !x\n", "${env:", "${env:SET}", "${env:UNSET}",
    "${env:SET:-d}", "$${env:X}", "${env:1}", "${env:}", "${", "}", "\t", "\r", "\r\n", "é", "😀", "\u{feff}", "\u{0}",
    "\u{85}", "\u{2028}", "~", "null", "true", "no", "0", "-1", "0x1F", "0o17", "0b101", "1e999", "-.inf", ".nan",
    "1_000", "9223372036854775807", "9223372036854775808", "-9223372036854775809", "18446744073709551616", "4294967296",
    "=", " = ", "[[", "]]", "[checks.a]", "[[checks]]", "[checks.a.request]", "\"\"\"", "'''", "\\", "\\u",
    "\\U0001F600", "\\x41", "1979-05-27T07:32:00Z", "07:32:00", "1979-05-27", "a.b", "a.\"b\"", "+", "_", "inf", "nan",
    "+nan", "{ file = \"script.js\" }", "{ file: script.js }", "script.js", "../script.js", "/", ".",
    "${var:x:-", "${env:UNSET:-", "${each.value.x:-", "${env:MONFORM_API_KEY}", "${env:UNSET:-${env:SET}}",
    "{ file: /proc/self/environ }", "{ file: ../../../etc/passwd }", "forEachFile: \"../../*\"", "&big ", "*big, ",
];

fn token_soup() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        8 => select(TOKENS).prop_map(str::to_owned),
        1 => "[a-z0-9 ]{1,6}",
        1 => any::<char>().prop_map(String::from),
    ];
    prop::collection::vec(piece, 0..80).prop_map(|pieces| pieces.concat())
}

fn bytes() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 0..600)
}

// ---- structured documents ----

/// A document value, before it is written as YAML or TOML.
#[derive(Debug, Clone, PartialEq)]
enum V {
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
    fn from_json(value: &serde_json::Value) -> V {
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

    fn children_mut(&mut self) -> Vec<&mut V> {
        match self {
            V::Seq(items) => items.iter_mut().collect(),
            V::Map(entries) => entries.iter_mut().map(|(_, v)| v).collect(),
            _ => Vec::new(),
        }
    }

    fn count(&self) -> usize {
        1 + match self {
            V::Seq(items) => items.iter().map(V::count).sum(),
            V::Map(entries) => entries.iter().map(|(_, v)| v.count()).sum(),
            _ => 0,
        }
    }

    /// The node at pre-order position `n`.
    fn nth_mut(&mut self, n: usize) -> Option<&mut V> {
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

const SECTIONS: &[&str] = &[
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
const FIELDS: &[&str] = &[
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

const IDS: &[&str] = &["a", "b", "g", "ch", "s", "svc", "office", "web", "x_1", "9lives"];
const BAD_IDS: &[&str] = &["", "-x", "a b", "é", "a.b", "null", "x/y"];

#[rustfmt::skip]
const STRINGS: &[&str] = &[
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

const RAW: &[&str] = &[
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

fn key() -> BoxedStrategy<String> {
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

fn scalar() -> BoxedStrategy<V> {
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

fn value() -> BoxedStrategy<V> {
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
fn templates() -> Vec<(&'static str, &'static str, serde_json::Value)> {
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

fn template(id: &str) -> serde_json::Value {
    let found = templates().into_iter().find(|(_, template_id, _)| *template_id == id);
    found.expect("a template with this id").2
}

#[derive(Debug, Clone)]
enum Edit {
    Replace(V),
    Remove,
    Insert(String, V),
}

fn edit() -> impl Strategy<Value = (Index, Edit)> {
    let edit = prop_oneof![
        2 => value().prop_map(Edit::Replace),
        2 => Just(Edit::Remove),
        1 => (key(), value()).prop_map(|(k, v)| Edit::Insert(k, v)),
    ];
    (any::<Index>(), edit)
}

fn apply(resource: &mut V, (at, edit): (Index, Edit)) {
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
fn entry() -> BoxedStrategy<(String, String, V)> {
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
fn document() -> BoxedStrategy<V> {
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
fn project_document() -> BoxedStrategy<V> {
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

// ---- writers ----

/// A small deterministic generator for style choices.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn one_in(&mut self, n: u64) -> bool {
        self.next().is_multiple_of(n)
    }
}

fn is_plain(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '/')
        && chars.all(|c| c.is_ascii_alphanumeric() || " _./-@+".contains(c))
        && !s.ends_with(' ')
}

fn double_quoted(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() || c == '\u{feff}' || c == '\u{2028}' || c == '\u{2029}' => {
                out.push_str(&format!("\\u{:04X}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn float_text(f: f64, nan: &str, inf: &str) -> String {
    if f.is_nan() {
        nan.to_owned()
    } else if f.is_infinite() {
        format!("{}{inf}", if f < 0.0 { "-" } else { "" })
    } else {
        format!("{f:?}")
    }
}

/// YAML in mixed styles: block and flow, plain, quoted and block scalars,
/// anchors, comments, document markers; when `wild`, also aliases (as
/// values and keys) and tags, which change what the document means.
struct YamlWriter {
    rng: Rng,
    wild: bool,
    out: String,
    anchors: usize,
}

fn to_yaml(value: &V, seed: u64, wild: bool) -> String {
    let mut w = YamlWriter {
        rng: Rng(seed | 1),
        wild,
        out: String::new(),
        anchors: 0,
    };
    if w.rng.one_in(10) {
        w.out.push_str("%YAML 1.2\n---\n");
    } else if w.rng.one_in(6) {
        w.out.push_str("--- # start\n");
    }
    match value {
        V::Map(entries) if !entries.is_empty() && !w.rng.one_in(12) => w.block_map(entries, 0),
        V::Seq(items) if !items.is_empty() && !w.rng.one_in(12) => w.block_seq(items, 0),
        other => {
            let text = w.flow(other);
            w.out.push_str(&text);
            w.out.push('\n');
        }
    }
    if w.rng.one_in(10) {
        w.out.push_str("...\n");
    }
    w.out
}

impl YamlWriter {
    fn indent(&mut self, n: usize) {
        self.out.extend(std::iter::repeat_n(' ', n));
    }

    fn anchor(&mut self) -> String {
        if self.rng.one_in(12) {
            self.anchors += 1;
            format!("&a{} ", self.anchors)
        } else {
            String::new()
        }
    }

    fn alias(&mut self) -> Option<String> {
        (self.wild && self.anchors > 0 && self.rng.one_in(15))
            .then(|| format!("*a{}", 1 + self.rng.next() as usize % self.anchors))
    }

    fn key(&mut self, key: &str) -> String {
        if let Some(alias) = self.alias() {
            return format!("{alias} ");
        }
        if is_plain(key) && !self.rng.one_in(8) {
            key.to_owned()
        } else if !key.contains(['\'', '\n', '\r']) && key.chars().all(|c| !c.is_control()) && self.rng.one_in(2) {
            format!("'{key}'")
        } else {
            double_quoted(key)
        }
    }

    fn scalar(&mut self, value: &V, in_flow: bool) -> String {
        if let Some(alias) = self.alias() {
            return alias;
        }
        let tag = match self.rng.next() % 40 {
            0 if self.wild => "!!str ",
            1 if self.wild => "!custom ",
            _ => "",
        };
        let body = match value {
            V::Null => ["null", "~", "Null"][self.rng.next() as usize % 3].to_owned(),
            V::Bool(b) => b.to_string(),
            V::Int(i) if *i >= 0 && self.rng.one_in(8) => format!("0x{i:X}"),
            V::Int(i) => i.to_string(),
            V::Float(f) => float_text(*f, ".nan", ".inf"),
            V::Raw(s) => s.clone(),
            V::Str(s) => {
                if is_plain(s) && (!in_flow || !s.contains(['[', ']', '{', '}', ','])) && self.rng.one_in(2) {
                    s.clone()
                } else if !s.contains(['\'', '\r'])
                    && s.chars().all(|c| c == '\n' || !c.is_control())
                    && self.rng.one_in(3)
                {
                    format!("'{}'", s.replace('\n', "\n\n"))
                } else {
                    double_quoted(s)
                }
            }
            V::Seq(_) | V::Map(_) => unreachable!("collections are not scalars"),
        };
        format!("{}{tag}{body}", self.anchor())
    }

    fn flow(&mut self, value: &V) -> String {
        match value {
            V::Seq(items) => {
                let items: Vec<String> = items.iter().map(|item| self.flow(item)).collect();
                format!("{}[{}]", self.anchor(), items.join(", "))
            }
            V::Map(entries) => {
                let entries: Vec<String> = entries
                    .iter()
                    .map(|(k, v)| format!("{}: {}", self.key(k), self.flow(v)))
                    .collect();
                format!("{}{{{}}}", self.anchor(), entries.join(", "))
            }
            scalar => self.scalar(scalar, true),
        }
    }

    /// A block scalar for a multi-line string, if it can be written as one.
    fn literal(&mut self, value: &V, indent: usize) -> Option<String> {
        let V::Str(s) = value else { return None };
        let fits = s.contains('\n')
            && !s.starts_with([' ', '\t', '\n'])
            && s.chars().all(|c| c == '\n' || !c.is_control())
            && !s.contains(['\r', '\u{feff}', '\u{85}', '\u{2028}', '\u{2029}'])
            && !s.ends_with("\n\n");
        if !fits || !self.rng.one_in(2) {
            return None;
        }
        let mut out = String::from(if s.ends_with('\n') { "|" } else { "|-" });
        for line in s.trim_end_matches('\n').split('\n') {
            out.push('\n');
            if !line.is_empty() {
                out.extend(std::iter::repeat_n(' ', indent + 2));
                out.push_str(line);
            }
        }
        Some(out)
    }

    fn block_map(&mut self, entries: &[(String, V)], indent: usize) {
        for (k, v) in entries {
            self.indent(indent);
            let key = self.key(k);
            if self.rng.one_in(30) {
                // Explicit key.
                self.out.push_str(&format!("? {key}\n"));
                self.indent(indent);
                self.out.push(':');
            } else {
                self.out.push_str(&key);
                self.out.push(':');
            }
            self.block_value(v, indent);
        }
    }

    fn block_seq(&mut self, items: &[V], indent: usize) {
        for item in items {
            self.indent(indent);
            self.out.push('-');
            self.block_value(item, indent);
        }
    }

    /// After `key:` or `-`: the value, and the end of the line.
    fn block_value(&mut self, value: &V, indent: usize) {
        match value {
            V::Map(entries) if !entries.is_empty() && !self.rng.one_in(5) => {
                let anchor = self.anchor();
                self.out.push_str(&format!(" {}\n", anchor.trim_end()));
                self.block_map(entries, indent + 2);
            }
            V::Seq(items) if !items.is_empty() && !self.rng.one_in(5) => {
                let anchor = self.anchor();
                self.out.push_str(&format!(" {}\n", anchor.trim_end()));
                self.block_seq(items, indent + 2);
            }
            V::Null if self.rng.one_in(3) => self.out.push('\n'),
            other => {
                let text = match self.literal(other, indent) {
                    Some(text) => text,
                    None => self.flow(other),
                };
                self.out.push(' ');
                self.out.push_str(&text);
                if self.rng.one_in(20) && !text.contains('\n') {
                    self.out.push_str(" # note");
                }
                self.out.push('\n');
            }
        }
    }
}

/// TOML with tables, arrays of tables and inline values.
struct TomlWriter {
    rng: Rng,
    wild: bool,
    out: String,
}

fn to_toml(value: &V, seed: u64, wild: bool) -> String {
    let mut w = TomlWriter {
        rng: Rng(seed | 1),
        wild,
        out: String::new(),
    };
    match value {
        V::Map(entries) => w.table(&[], entries, None),
        other => {
            let text = w.inline(other);
            w.out.push_str(&format!("value = {text}\n"));
        }
    }
    w.out
}

impl TomlWriter {
    fn key(&mut self, key: &str) -> String {
        if !key.is_empty()
            && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            && !self.rng.one_in(10)
        {
            key.to_owned()
        } else if !key.contains(['\'', '\n', '\r']) && key.chars().all(|c| !c.is_control()) && self.rng.one_in(3) {
            format!("'{key}'")
        } else {
            double_quoted(key)
        }
    }

    fn inline(&mut self, value: &V) -> String {
        match value {
            // No null in TOML: an empty string, or the (invalid) word when wild.
            V::Null => if self.wild { "null" } else { "\"\"" }.to_owned(),
            V::Bool(b) => b.to_string(),
            V::Int(i) if *i >= 0 && self.rng.one_in(8) => format!("0x{i:x}"),
            V::Int(i) if i.unsigned_abs() > 10_000 && self.rng.one_in(4) => {
                let digits = i.unsigned_abs().to_string();
                let grouped: Vec<&str> = digits
                    .as_bytes()
                    .chunks(3)
                    .map(|c| std::str::from_utf8(c).unwrap_or("0"))
                    .collect();
                format!("{}{}", if *i < 0 { "-" } else { "" }, grouped.join("_"))
            }
            V::Int(i) => i.to_string(),
            V::Float(f) => float_text(*f, "nan", "inf"),
            V::Raw(s) => s.clone(),
            V::Str(s) => {
                if s.contains('\n')
                    && !s.contains("'''")
                    && !s.contains('\r')
                    && s.chars().all(|c| c == '\n' || !c.is_control())
                    && self.rng.one_in(2)
                {
                    format!("'''\n{s}'''")
                } else if !s.contains(['\'', '\n', '\r']) && s.chars().all(|c| !c.is_control()) && self.rng.one_in(3) {
                    format!("'{s}'")
                } else {
                    double_quoted(s)
                }
            }
            V::Seq(items) => {
                let items: Vec<String> = items.iter().map(|item| self.inline(item)).collect();
                let sep = if self.rng.one_in(5) { ",\n  " } else { ", " };
                format!("[{}]", items.join(sep))
            }
            V::Map(entries) => {
                let entries: Vec<String> = entries
                    .iter()
                    .map(|(k, v)| format!("{} = {}", self.key(k), self.inline(v)))
                    .collect();
                format!("{{ {} }}", entries.join(", "))
            }
        }
    }

    fn header(&mut self, path: &[String]) -> String {
        let keys: Vec<String> = path.iter().map(|k| self.key(k)).collect();
        keys.join(".")
    }

    /// Key/values first, then sub-tables and arrays of tables, as TOML
    /// requires. A table whose entries are all sub-tables may go without a
    /// header of its own.
    fn table(&mut self, path: &[String], entries: &[(String, V)], header: Option<&str>) {
        let mut lines = Vec::new();
        let mut tables = Vec::new();
        let mut arrays = Vec::new();
        for (k, v) in entries {
            match v {
                V::Map(sub) if !self.rng.one_in(4) => tables.push((k, sub)),
                V::Seq(items)
                    if !items.is_empty() && items.iter().all(|i| matches!(i, V::Map(_))) && self.rng.one_in(2) =>
                {
                    arrays.push((k, items))
                }
                V::Null if self.rng.one_in(2) => {}
                _ => {
                    let key = self.key(k);
                    let value = self.inline(v);
                    lines.push(format!("{key} = {value}\n"));
                }
            }
        }
        if let Some(header) = header
            && (!lines.is_empty() || entries.is_empty() || self.rng.one_in(3))
        {
            self.out.push_str(&format!("\n{header}\n"));
        }
        self.out.push_str(&lines.concat());
        for (k, sub) in tables {
            let path: Vec<String> = path.iter().cloned().chain([k.clone()]).collect();
            let header = format!("[{}]", self.header(&path));
            self.table(&path, sub, Some(&header));
        }
        for (k, items) in arrays {
            let path: Vec<String> = path.iter().cloned().chain([k.clone()]).collect();
            for item in items {
                let header = format!("[[{}]]", self.header(&path));
                if let V::Map(sub) = item {
                    // An array-of-tables element always has its header.
                    self.out.push_str(&format!("\n{header}\n"));
                    self.table(&path, sub, None);
                }
            }
        }
    }
}

fn to_toml_value(value: &V) -> Option<toml::Value> {
    Some(match value {
        V::Null => return None,
        V::Bool(b) => toml::Value::Boolean(*b),
        V::Int(i) => toml::Value::Integer(*i),
        V::Float(f) => toml::Value::Float(*f),
        V::Str(s) | V::Raw(s) => toml::Value::String(s.clone()),
        V::Seq(items) => toml::Value::Array(items.iter().filter_map(to_toml_value).collect()),
        V::Map(entries) => toml::Value::Table(
            entries
                .iter()
                .filter_map(|(k, v)| Some((k.clone(), to_toml_value(v)?)))
                .collect(),
        ),
    })
}

#[derive(Debug, Clone, Copy)]
enum Style {
    /// Own writer: style seed, and whether to use meaning-changing forms.
    YamlOwn(u64, bool),
    YamlSerde,
    TomlOwn(u64, bool),
    TomlSerde {
        pretty: bool,
    },
}

impl Style {
    fn extension(self) -> &'static str {
        match self {
            Style::YamlOwn(..) | Style::YamlSerde => "yaml",
            Style::TomlOwn(..) | Style::TomlSerde { .. } => "toml",
        }
    }

    fn write(self, value: &V) -> String {
        match self {
            Style::YamlOwn(seed, wild) => to_yaml(value, seed, wild),
            Style::YamlSerde => serde_saphyr::to_string(value).unwrap_or_else(|_| to_yaml(value, 1, false)),
            Style::TomlOwn(seed, wild) => to_toml(value, seed, wild),
            Style::TomlSerde { pretty } => {
                let table = match to_toml_value(value) {
                    Some(toml::Value::Table(table)) => table,
                    Some(other) => toml::Table::from_iter([("value".to_owned(), other)]),
                    None => toml::Table::new(),
                };
                let text = if pretty {
                    toml::to_string_pretty(&table)
                } else {
                    toml::to_string(&table)
                };
                text.unwrap_or_else(|_| to_toml(value, 1, false))
            }
        }
    }
}

fn style() -> impl Strategy<Value = Style> {
    prop_oneof![
        4 => (any::<u64>(), prop::bool::weighted(0.3)).prop_map(|(seed, wild)| Style::YamlOwn(seed, wild)),
        1 => Just(Style::YamlSerde),
        3 => (any::<u64>(), prop::bool::weighted(0.3)).prop_map(|(seed, wild)| Style::TomlOwn(seed, wild)),
        1 => any::<bool>().prop_map(|pretty| Style::TomlSerde { pretty }),
    ]
}

/// Random edits of a text: deletions, insertions of tokens, duplicated spans.
#[derive(Debug, Clone)]
enum Mutation {
    Delete(Index, usize),
    Insert(Index, &'static str),
    Byte(Index, u8),
    Duplicate(Index, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<Index>(), 1usize..12).prop_map(|(at, n)| Mutation::Delete(at, n)),
        (any::<Index>(), select(TOKENS)).prop_map(|(at, t)| Mutation::Insert(at, t)),
        (any::<Index>(), any::<u8>()).prop_map(|(at, b)| Mutation::Byte(at, b)),
        (any::<Index>(), 1usize..40).prop_map(|(at, n)| Mutation::Duplicate(at, n)),
    ]
}

fn mutate(text: &str, mutations: &[Mutation]) -> Vec<u8> {
    let mut bytes = text.as_bytes().to_vec();
    for m in mutations {
        let len = bytes.len();
        match m {
            Mutation::Delete(at, n) if len > 0 => {
                let start = at.index(len);
                bytes.drain(start..(start + n).min(len));
            }
            Mutation::Insert(at, token) => {
                let start = at.index(len + 1);
                bytes.splice(start..start, token.bytes());
            }
            Mutation::Byte(at, b) if len > 0 => bytes[at.index(len)] = *b,
            Mutation::Duplicate(at, n) if len > 0 => {
                let start = at.index(len);
                let copy = bytes[start..(start + n).min(len)].to_vec();
                bytes.splice(start..start, copy);
            }
            _ => {}
        }
    }
    bytes
}

fn lossy(bytes: &[u8]) -> Vec<u8> {
    String::from_utf8_lossy(bytes).into_owned().into_bytes()
}

// ---- properties ----

proptest! {
    #![proptest_config(config())]

    #[test]
    fn arbitrary_bytes_as_resource_files(data in bytes(), project in select(PROJECTS), nested in any::<bool>()) {
        let dir = if nested { "monitors/" } else { "" };
        load_project(project.as_bytes(), &[
            (format!("{dir}fuzz.yaml"), lossy(&data)),
            (format!("{dir}fuzz.toml"), lossy(&data)),
            (format!("{dir}raw.yml"), data.clone()),
            (format!("{dir}raw.toml"), data),
        ]);
    }

    #[test]
    fn token_soup_as_resource_files(text in token_soup(), project in select(PROJECTS)) {
        load_project(project.as_bytes(), &[
            ("monitors/soup.yaml".to_owned(), text.clone().into_bytes()),
            ("monitors/soup.toml".to_owned(), text.into_bytes()),
        ]);
    }

    #[test]
    fn structured_documents(
        documents in prop::collection::vec((document(), style()), 1..4),
        project in select(PROJECTS),
    ) {
        let files: Vec<(String, Vec<u8>)> = documents
            .iter()
            .enumerate()
            .map(|(i, (doc, style))| {
                (format!("monitors/doc{i}.{}", style.extension()), style.write(doc).into_bytes())
            })
            .collect();
        load_project(project.as_bytes(), &files);
    }

    #[test]
    fn mutated_documents(
        doc in document(),
        style in style(),
        mutations in prop::collection::vec(mutation(), 1..6),
        project in select(PROJECTS),
    ) {
        let text = style.write(&doc);
        let bytes = mutate(&text, &mutations);
        load_project(project.as_bytes(), &[
            (format!("monitors/mutated.{}", style.extension()), lossy(&bytes)),
            (format!("monitors/raw.{}", style.extension()), bytes),
        ]);
    }

    #[test]
    fn project_files(
        project in project_document(),
        seed in any::<u64>(),
        serde in any::<bool>(),
        mutations in prop::collection::vec(mutation(), 0..3),
        soup in prop::option::weighted(0.2, token_soup()),
    ) {
        let style = if serde {
            Style::TomlSerde { pretty: seed % 2 == 0 }
        } else {
            Style::TomlOwn(seed, seed % 3 == 0)
        };
        let text = match soup {
            Some(soup) => soup,
            None => style.write(&project),
        };
        // A valid resource file, so that the project's settings are used.
        let resources = json!({
            "checks": { "url": template("url"), "beat": template("beat") },
            "groups": { "g": template("g") },
            "snippets": { "s": template("s") },
            "alertChannels": { "ch": template("ch"), "hook": template("hook") },
        });
        let resources = to_yaml(&V::from_json(&resources), seed, false).into_bytes();
        load_project(&mutate(&text, &mutations), &[("monitors/web.yaml".to_owned(), resources)]);
    }

    #[test]
    fn parsers_on_arbitrary_text(text in any::<String>(), soup in token_soup()) {
        check_parsers(&text);
        check_parsers(&soup);
    }

    #[test]
    fn parsers_on_structured_text(
        doc in document(),
        style in style(),
        mutations in prop::collection::vec(mutation(), 0..4),
    ) {
        let text = style.write(&doc);
        check_parsers(&text);
        check_parsers(&String::from_utf8_lossy(&mutate(&text, &mutations)));
    }
}

// ---- issue 25 shapes ----

/// A substitution nested `depth` deep in defaults, of mixed kinds, maybe
/// unbalanced, maybe inside a longer string.
fn nested_substitution() -> impl Strategy<Value = String> {
    (
        0usize..20_000,
        prop::collection::vec(
            select(
                &[
                    "${var:x:-",
                    "${env:UNSET:-",
                    "${each.value.x:-",
                    "${env:MONFORM_API_KEY:-",
                ][..],
            ),
            1..4,
        ),
        0usize..3,
        any::<bool>(),
    )
        .prop_map(|(depth, kinds, cut, inside)| {
            let open: String = (0..depth).map(|i| kinds[i % kinds.len()]).collect();
            let close = "}".repeat(depth.saturating_sub(cut));
            let value = format!("{open}x{close}");
            if inside { format!("a {value} b") } else { value }
        })
}

/// A one-line flow-style file: `count` resources, with an unknown field
/// (and maybe a bad value) near its end, so a diagnostic points past
/// column 65,535.
fn long_line() -> impl Strategy<Value = String> {
    (
        1_000usize..1_500,
        select(&["colour: red", "frequency: often", "name: ${env:UNSET}", "bogus"][..]),
    )
        .prop_map(|(count, last)| {
            let resources: Vec<String> = (0..count)
                .map(|i| format!("s{i}: {{name: \"Snippet number {i} with a fairly long name\", script: x}}"))
                .collect();
            format!(
                "{{snippets: {{{}, last: {{name: L, script: x, {last}}}}}}}",
                resources.join(", ")
            )
        })
}

/// Files that expand far past their size: aliases doubling, aliases of a
/// large string, a `forEach` over a large definition, a `[vars]` value
/// substituted many times.
fn bomb() -> impl Strategy<Value = (String, String)> {
    let doubling = (1usize..4, 24usize..30).prop_map(|(width, levels)| {
        let mut text = format!("a0: &a0 [{}]\n", vec!["x"; width + 1].join(", "));
        for i in 1..levels {
            let aliases = vec![format!("*a{}", i - 1); width + 1].join(", ");
            text.push_str(&format!("a{i}: &a{i} [{aliases}]\n"));
        }
        (MINIMAL_PROJECT.to_owned(), text)
    });
    let large = (30_000usize..60_000, 5_000usize..8_000).prop_map(|(size, count)| {
        let text = format!("s: &s {}\nl: [{}]\n", "x".repeat(size), "*s, ".repeat(count));
        (MINIMAL_PROJECT.to_owned(), text)
    });
    let for_each = (300usize..400, 100_000usize..150_000).prop_map(|(items, size)| {
        let items: String = (0..items).map(|i| format!("i{i}, ")).collect();
        let text = format!(
            "x: &big \"{}\"\nsnippets:\n  s:\n    forEach: [{items}]\n    name: S\n    script: x\n    description: [{}]\n",
            "y".repeat(size),
            "*big, ".repeat(10)
        );
        (MINIMAL_PROJECT.to_owned(), text)
    });
    let vars = (500_000usize..2_000_000, 300usize..400).prop_map(|(size, count)| {
        let project = format!("{MINIMAL_PROJECT}\n[vars]\nbig = \"{}\"\n", "z".repeat(size));
        let text = format!(
            "snippets:\n  s: {{ name: \"${{var:big}}\", script: x, tags: [{}] }}\n",
            "\"a${var:big}\", ".repeat(count)
        );
        (project, text)
    });
    prop_oneof![doubling, large, for_each, vars]
}

/// Bombs allocate up to the budget (128 MiB) each: fewer cases, and no
/// more than 12 however many CI asks for (each takes about a second).
fn bomb_config() -> ProptestConfig {
    ProptestConfig {
        cases: (config().cases / 64).clamp(4, 12),
        ..config()
    }
}

/// Each case reads and renders files of up to a few hundred kilobytes:
/// a quarter of the cases, at most 128 (CI's 5,000 cases would take half
/// an hour).
fn large_config() -> ProptestConfig {
    ProptestConfig {
        cases: (config().cases / 4).clamp(16, 128),
        ..config()
    }
}

proptest! {
    #![proptest_config(large_config())]

    #[test]
    fn deeply_nested_substitutions(value in nested_substitution(), toml in any::<bool>()) {
        let quoted = value.replace('\\', "\\\\").replace('"', "\\\"");
        let project = format!("{MINIMAL_PROJECT}\n[vars]\nv = \"{quoted}\"\n");
        let file = if toml {
            ("monitors/deep.toml".to_owned(), format!("[snippets.s]\nname = \"{quoted}\"\nscript = \"x\"\n"))
        } else {
            ("monitors/deep.yaml".to_owned(), format!("snippets:\n  s: {{ name: \"{quoted}\", script: x }}\n"))
        };
        let loaded = load_project(project.as_bytes(), &[(file.0, file.1.into_bytes())]);
        let shown = format!("{:?}", loaded.diagnostics);
        prop_assert!(!shown.contains("fuzz-credential"));
    }

    #[test]
    fn one_line_files_of_70_kb_and_more(text in long_line()) {
        prop_assert!(text.len() > 70_000);
        load_project_unrendered(MINIMAL_PROJECT.as_bytes(), &[("monitors/long.yaml".to_owned(), text.into_bytes())]);
    }
}

proptest! {
    #![proptest_config(bomb_config())]

    #[test]
    fn expansion_bombs_stop_at_the_budget((project, text) in bomb()) {
        // Unrendered: rendering 100 diagnostics in a file of 1 MB lines
        // costs more than the load; the other properties render.
        let loaded = load_project_unrendered(project.as_bytes(), &[("monitors/bomb.yaml".to_owned(), text.into_bytes())]);
        prop_assert!(
            loaded.diagnostics.iter().any(|d| d.message.contains("expands to more than 128 MiB")),
            "{:?}",
            loaded.diagnostics.iter().map(|d| d.message.chars().take(120).collect::<String>()).collect::<Vec<_>>()
        );
    }
}

// ---- fixed cases ----

/// The structured generator starts from valid resources: together they load
/// without a single diagnostic, in every style.
#[test]
fn templates_are_valid() {
    let mut sections: Vec<(String, V)> = Vec::new();
    for (section, id, resource) in templates() {
        let resource = V::from_json(&resource);
        match sections.iter_mut().find(|(s, _)| s == section) {
            Some((_, V::Map(entries))) => entries.push((id.to_owned(), resource)),
            _ => sections.push((section.to_owned(), V::Map(vec![(id.to_owned(), resource)]))),
        }
    }
    let doc = V::Map(sections);
    let styles = [
        Style::YamlOwn(7, false),
        Style::YamlOwn(12345, false),
        Style::YamlOwn(3, false),
        Style::YamlSerde,
        Style::TomlOwn(7, false),
        Style::TomlOwn(999, false),
        Style::TomlOwn(4, false),
        Style::TomlSerde { pretty: false },
        Style::TomlSerde { pretty: true },
    ];
    for style in styles {
        let text = style.write(&doc);
        let loaded = load_project(
            MINIMAL_PROJECT.as_bytes(),
            &[(format!("monitors/all.{}", style.extension()), text.clone().into_bytes())],
        );
        assert!(
            loaded.diagnostics.is_empty(),
            "{style:?}:\n{text}\n{:#?}",
            loaded.diagnostics
        );
        assert_eq!(loaded.desired.len(), templates().len(), "{style:?}");
    }
}

/// Inputs that once produced spans past the end of the file.
#[test]
fn yaml_key_spans_stay_inside_the_file() {
    for text in [
        "?",
        "? ",
        "{? }",
        "checks:\n  ?",
        "a: &x a-rather-long-key-text\n*x : 1",
        "checks: &c web\n*c :",
    ] {
        check_parsers(text);
        load_project(
            MINIMAL_PROJECT.as_bytes(),
            &[("f.yaml".to_owned(), text.as_bytes().to_vec())],
        );
    }
}

/// Deep nesting is an error, not a stack overflow, even on a test thread's
/// small stack in a debug build.
#[test]
fn deep_nesting_is_an_error() {
    for depth in [40, 70, 1000] {
        let block: String = (0..depth).map(|i| format!("{}-\n", " ".repeat(i * 2))).collect();
        let flow = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        let toml = format!("a = {}{}", "[".repeat(depth), "]".repeat(depth));
        let inline = format!("a = {}1{}", "{b = ".repeat(depth), "}".repeat(depth));
        check_parsers(&block);
        check_parsers(&flow);
        check_parsers(&toml);
        check_parsers(&inline);
        load_project(
            MINIMAL_PROJECT.as_bytes(),
            &[
                ("block.yaml".to_owned(), block.into_bytes()),
                ("flow.yaml".to_owned(), flow.into_bytes()),
                ("deep.toml".to_owned(), toml.into_bytes()),
                ("inline.toml".to_owned(), inline.into_bytes()),
            ],
        );
    }
}
