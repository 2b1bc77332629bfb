//! Convergence: after `apply`, a fresh `fetch` + `plan` of the same files
//! has no changes, and so it does after a random edit of the files (fields
//! changed, resources removed and added, files moved, secrets rotated).
//!
//! Projects are generated as real files (YAML in two styles and TOML, in
//! several folders, scripts inline and as `{ file }`), loaded with
//! `monform_config::load` and applied to an in-process emulator through the
//! engine, with a `LocalState` in the project's folder. Every round also
//! checks that the account holds exactly the desired objects (nothing
//! orphaned, nothing duplicated).
//!
//! The property runs 24 cases, or `PROPTEST_CASES`.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Mutex;

use monform_api::{Client, ClientConfig, Secret};
use monform_engine::ops::{self, ApplyRequest, PlanRequest, Planned, Session};
use monform_engine::{Action, ApplyOptions, Event, LocalState, Plan};
use monform_model::Kind;
use proptest::option::{of as maybe, weighted};
use proptest::prelude::*;
use proptest::sample::{Index, select, subsequence};
use serde_json::{Map, Value, json};

// ---- harness ----

fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(24);
    ProptestConfig {
        cases,
        max_shrink_iters: 256,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

async fn emulator() -> monform_emulator::Server {
    monform_emulator::start_local(monform_emulator::Config {
        rate_limit: None,
        ..Default::default()
    })
    .await
    .expect("emulator starts")
}

fn client_for(server: &monform_emulator::Server) -> Client {
    let mut config = ClientConfig::new(server.url(), Secret::new(server.api_key.clone()));
    config.rate_limit = None;
    config.account_id = Some(server.account_id.clone());
    Client::new(config).expect("client")
}

/// The changes of a plan, one per line with their fields, noops left out.
fn describe(plan: &Plan) -> String {
    let mut out = String::new();
    for change in plan.changes.iter().filter(|c| c.action != Action::Noop) {
        out.push_str(&format!(
            "  {:?} {} ({})\n",
            change.action,
            change.address,
            change.reason.text()
        ));
        for field in &change.fields {
            out.push_str(&format!(
                "      {}: {} -> {}{}\n",
                field.path,
                field.before.as_ref().map_or("-".into(), Value::to_string),
                field.after.as_ref().map_or("-".into(), Value::to_string),
                if field.sensitive { " (sensitive)" } else { "" }
            ));
        }
    }
    out
}

/// What one `apply` did and what the plan after it says.
struct Round {
    applied: Plan,
    events: Vec<String>,
    after: Plan,
}

/// load → fetch → plan → apply → fetch → plan, like `monform apply` then `monform plan`.
async fn apply_and_replan(dir: &Path, env: &HashMap<String, String>, client: &Client) -> Result<Round, String> {
    let lookup = |name: &str| env.get(name).cloned();
    let loaded = monform_config::load(dir, &lookup);
    if !loaded.is_ok() {
        let problems: Vec<String> = loaded
            .diagnostics
            .iter()
            .map(|d| format!("{}: {}", d.location(&loaded.sources).unwrap_or_default(), d.message))
            .collect();
        return Err(format!("the generated files do not load:\n{}", problems.join("\n")));
    }
    // The same operations as `monform apply` and `monform plan`: declared
    // moves, clash refusals, the budget and safety guards, verification.
    let project = loaded.project.clone().expect("project");
    let backend = LocalState::new(dir);
    let session = Session {
        project: &project,
        desired: &loaded.desired,
        client,
        backend: &backend,
    };
    let request = ApplyRequest {
        command: "converge".into(),
        allow_mass_delete: true,
        ..Default::default()
    };
    let ready = ops::prepare_apply(&session, request)
        .await
        .map_err(|e| format!("plan: {e}"))?;
    let plan = ready.plan().clone();
    let events = Mutex::new(Vec::new());
    let on_event = |event: Event| {
        if let Event::Failed { .. } | Event::Skipped { .. } | Event::NotKept { .. } = event {
            events.lock().unwrap().push(format!("{event:?}"));
        }
    };
    let applied = ops::execute(ready, &ApplyOptions::default(), &on_event)
        .await
        .map_err(|e| format!("apply: {e}"))?;
    let events = events.into_inner().unwrap();
    let report = &applied.report;
    if !applied.is_complete() {
        let verification = match &applied.verification {
            Some(Ok(v)) => format!("{:?}", v.failures),
            Some(Err(e)) => e.to_string(),
            None => "none".into(),
        };
        return Err(format!(
            "apply did not succeed:\n  failed: {:?}\n  skipped: {:?}\n  not verified: {verification}\nthe plan was:\n{}",
            report.failed,
            report.skipped,
            describe(&plan)
        ));
    }
    let Planned {
        actual, plan: after, ..
    } = ops::plan(&session, &PlanRequest::default())
        .await
        .map_err(|e| format!("replan: {e}"))?;
    // The account holds exactly the desired objects: nothing orphaned or duplicated.
    for &kind in Kind::ALL {
        let want = loaded.desired.resources.keys().filter(|a| a.kind == kind).count();
        let have = actual.count(kind);
        if want != have {
            return Err(format!(
                "the account holds {have} {kind} but the files declare {want}\nthe plan was:\n{}",
                describe(&plan)
            ));
        }
    }
    Ok(Round {
        applied: plan,
        events,
        after,
    })
}

// ---- the generated project ----

const PROJECT: &str = "converge";
const LOCATIONS: &[&str] = &["eu-west-1", "us-east-1", "ap-southeast-2", "eu-central-1", "sa-east-1"];
const TAGS: &[&str] = &["team:web", "team:platform", "prod", "critical", "backend", "nightly"];
const WORDS: &[&str] = &["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"];
const FREQUENCIES: &[u32] = &[0, 1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440];
const RUNTIMES: &[&str] = &["2026.04", "2025.04", "2024.09"];
/// Environment variables the fake lookup knows; secret values come from them.
const SECRETS: usize = 6;

/// Sections and how many logical ids (slots) each may use.
const SECTIONS: &[(&str, usize)] = &[
    ("privateLocations", 2),
    ("alertChannels", 4),
    ("snippets", 3),
    ("groups", 3),
    ("variables", 4),
    ("statusPageServices", 3),
    ("statusPages", 2),
    ("checks", 10),
];

fn logical_id(section: &str, slot: usize) -> String {
    match section {
        "privateLocations" => format!("office-{slot}"),
        "alertChannels" => format!("channel-{slot}"),
        "snippets" => format!("snippet-{slot}"),
        "groups" => format!("group-{slot}"),
        "variables" => format!("VAR_{slot}"),
        "statusPageServices" => format!("service-{slot}"),
        "statusPages" => format!("page-{slot}"),
        _ => format!("check-{slot}"),
    }
}

fn slots(section: &str) -> usize {
    SECTIONS.iter().find(|(s, _)| *s == section).map_or(0, |(_, n)| *n)
}

/// Where a resource is written.
const FILES: &[&str] = &[
    "monitors/web.yaml",
    "monitors/infra.toml",
    "shared.yaml",
    "pages/more/status.yml",
];

#[derive(Debug, Clone)]
struct Slot {
    body: Value,
    file: usize,
}

#[derive(Debug, Clone)]
struct Spec {
    /// `[defaults]` of monform.toml.
    defaults: Option<Value>,
    /// Values of SECRET_0.. in the environment.
    secrets: Vec<String>,
    /// Per section (in `SECTIONS` order), per slot.
    sections: Vec<Vec<Option<Slot>>>,
}

fn word() -> impl Strategy<Value = String> {
    select(WORDS).prop_map(str::to_owned)
}

fn text() -> impl Strategy<Value = String> {
    "[A-Za-z0-9][A-Za-z0-9 .,:/()-]{0,40}"
}

fn pick(pool: &'static [&'static str]) -> impl Strategy<Value = Vec<String>> {
    subsequence(pool, 0..=pool.len())
        .prop_shuffle()
        .prop_map(|v| v.into_iter().map(str::to_owned).collect())
}

fn secret_ref() -> impl Strategy<Value = String> {
    (0..SECRETS).prop_map(|i| format!("${{env:SECRET_{i}}}"))
}

/// A script: inline, or `{ file }` (written by `write_project`; `__content` is the text).
fn script(name: String) -> impl Strategy<Value = Value> {
    ("[a-z][a-z0-9 ();.=']{3,60}", any::<bool>()).prop_map(move |(code, in_file)| {
        let code = format!("await {code}\n");
        if in_file {
            json!({ "file": format!("scripts/{name}.js"), "__content": code })
        } else {
            Value::String(code)
        }
    })
}

fn url() -> impl Strategy<Value = String> {
    (word(), "[a-z0-9/]{0,12}").prop_map(|(host, path)| format!("https://{host}.example.com/{path}"))
}

fn key_values() -> impl Strategy<Value = Vec<Value>> {
    prop::collection::vec(
        ("[A-Z][A-Za-z-]{1,10}", "[a-z0-9 ]{0,10}", maybe(any::<bool>())).prop_map(|(key, value, locked)| {
            let mut kv = json!({ "key": key, "value": value });
            if let Some(locked) = locked {
                kv["locked"] = json!(locked);
            }
            kv
        }),
        0..3,
    )
}

fn environment_variables() -> impl Strategy<Value = Vec<Value>> {
    prop::collection::vec(
        (
            0..100u32,
            "[a-z0-9]{1,10}",
            any::<bool>(),
            secret_ref(),
            maybe(any::<bool>()),
        ),
        0..4,
    )
    .prop_map(|vars| {
        let mut seen = std::collections::BTreeSet::new();
        vars.into_iter()
            .filter(|(k, ..)| seen.insert(*k))
            .map(|(k, value, secret, secret_value, locked)| {
                let mut var = json!({ "key": format!("ENV_{k}") });
                if secret {
                    var["value"] = json!(secret_value);
                    var["secret"] = json!(true);
                } else {
                    var["value"] = json!(value);
                }
                if let Some(locked) = locked {
                    var["locked"] = json!(locked);
                }
                var
            })
            .collect()
    })
}

fn retry_strategy() -> impl Strategy<Value = Value> {
    (
        select(&["FIXED", "LINEAR", "EXPONENTIAL", "SINGLE_RETRY"][..]),
        maybe(0u32..=120),
        maybe(any::<bool>()),
        1u32..=10,
        0u32..=600,
    )
        .prop_map(|(kind, backoff, same_region, retries, duration)| {
            let mut strategy = json!({ "type": kind });
            if let Some(backoff) = backoff {
                strategy["baseBackoffSeconds"] = json!(backoff);
            }
            if let Some(same) = same_region {
                strategy["sameRegion"] = json!(same);
            }
            if kind != "SINGLE_RETRY" {
                strategy["maxRetries"] = json!(retries);
                strategy["maxDurationSeconds"] = json!(duration);
            }
            strategy
        })
}

fn alert_settings() -> impl Strategy<Value = Value> {
    (
        any::<bool>(),
        1u32..=5,
        select(&[5u32, 10, 15, 30][..]),
        maybe((select(&[0u32, 1, 2, 5, 100000][..]), select(&[1u32, 5, 10, 30][..]))),
    )
        .prop_map(|(run_based, runs, minutes, reminders)| {
            let mut settings = if run_based {
                json!({ "escalationType": "RUN_BASED", "runBasedEscalation": { "failedRunThreshold": runs } })
            } else {
                json!({ "escalationType": "TIME_BASED", "timeBasedEscalation": { "minutesFailingThreshold": minutes } })
            };
            if let Some((amount, interval)) = reminders {
                settings["reminders"] = json!({ "amount": amount, "interval": interval });
            }
            settings
        })
}

/// A frequency valid for the check type, with a valid offset (spec 2.4).
fn frequency(sub_minute: bool) -> impl Strategy<Value = (u32, Option<u32>)> {
    let frequencies: Vec<u32> = FREQUENCIES.iter().copied().filter(|f| sub_minute || *f > 0).collect();
    select(frequencies).prop_flat_map(|f| {
        let offset: BoxedStrategy<Option<u32>> = match f {
            0 => select(&[10u32, 20, 30][..]).prop_map(Some).boxed(),
            1..=60 => maybe(1..=f * 10).boxed(),
            _ => maybe(1..=f.div_ceil(60)).boxed(),
        };
        (Just(f), offset)
    })
}

fn set(object: &mut Map<String, Value>, key: &str, value: Option<impl Into<Value>>) {
    if let Some(value) = value {
        object.insert(key.to_owned(), value.into());
    }
}

/// Slot numbers of another section, as logical ids (dangling ones are removed by `repair`).
fn refs(section: &'static str) -> impl Strategy<Value = Vec<String>> {
    subsequence((0..slots(section)).collect::<Vec<_>>(), 0..=slots(section))
        .prop_shuffle()
        .prop_map(move |v| v.into_iter().map(|i| logical_id(section, i)).collect())
}

fn one_ref(section: &'static str) -> impl Strategy<Value = String> {
    (0..slots(section)).prop_map(move |i| logical_id(section, i))
}

/// The fields every check type has.
fn check_common(slot: usize, sub_minute: bool) -> impl Strategy<Value = Map<String, Value>> {
    (
        (
            word(),
            maybe(any::<bool>()),
            maybe(any::<bool>()),
            maybe(any::<bool>()),
            maybe(pick(LOCATIONS)),
            maybe(pick(TAGS)),
            maybe(text()),
            maybe(frequency(sub_minute)),
        ),
        (
            weighted(0.4, one_ref("groups")),
            maybe(0u32..5),
            weighted(0.5, refs("alertChannels")),
            weighted(0.3, refs("privateLocations")),
            weighted(
                0.3,
                (
                    one_ref("statusPageServices"),
                    select(&["CRITICAL", "MAJOR", "MINOR"][..]),
                    text(),
                    any::<bool>(),
                ),
            ),
        ),
        (
            weighted(0.3, retry_strategy()),
            weighted(0.3, alert_settings()),
            maybe(select(RUNTIMES)),
            maybe((0u32..=150_000, 0u32..=150_000)),
            maybe(any::<bool>()),
            maybe(any::<bool>()),
        ),
    )
        .prop_map(move |(a, b, c)| {
            let (name, activated, muted, should_fail, locations, tags, description, frequency) = a;
            let (group, group_order, channels, private_locations, incident) = b;
            let (retry, alerting, runtime, response_times, run_parallel, use_global) = c;
            let mut check = Map::new();
            check.insert("name".into(), json!(format!("Check {slot} {name}")));
            set(&mut check, "activated", activated);
            set(&mut check, "muted", muted);
            set(&mut check, "shouldFail", should_fail);
            set(&mut check, "locations", locations);
            set(&mut check, "tags", tags);
            set(&mut check, "description", description);
            if let Some((frequency, offset)) = frequency {
                check.insert("frequency".into(), json!(frequency));
                set(&mut check, "frequencyOffset", offset);
            }
            set(&mut check, "group", group);
            set(&mut check, "groupOrder", group_order);
            set(&mut check, "alertChannels", channels);
            set(&mut check, "privateLocations", private_locations);
            if let Some((service, severity, name, notify)) = incident {
                check.insert(
                    "triggerIncident".into(),
                    json!({ "service": service, "severity": severity, "name": format!("Incident {name}"),
                            "description": "generated", "notifySubscribers": notify }),
                );
            }
            set(&mut check, "retryStrategy", retry);
            set(&mut check, "alertSettings", alerting);
            set(&mut check, "runtimeId", runtime);
            if let Some((a, b)) = response_times {
                check.insert("degradedResponseTime".into(), json!(a.min(b)));
                check.insert("maxResponseTime".into(), json!(a.max(b)));
            }
            set(&mut check, "runParallel", run_parallel);
            set(&mut check, "useGlobalAlertSettings", use_global);
            check
        })
}

fn api_request() -> impl Strategy<Value = Value> {
    (
        select(&["GET", "POST", "PUT", "HEAD", "DELETE", "PATCH"][..]),
        url(),
        maybe(any::<bool>()),
        maybe(any::<bool>()),
        maybe((
            "[a-z0-9{}\": ]{0,30}",
            select(&["JSON", "FORM", "RAW", "GRAPHQL", "NONE"][..]),
        )),
        key_values(),
        key_values(),
        prop::collection::vec(
            (
                select(&["STATUS_CODE", "JSON_BODY", "HEADERS", "TEXT_BODY", "RESPONSE_TIME"][..]),
                select(
                    &[
                        "EQUALS",
                        "NOT_EQUALS",
                        "LESS_THAN",
                        "GREATER_THAN",
                        "CONTAINS",
                        "NOT_EMPTY",
                    ][..],
                ),
                "[a-z0-9]{0,6}",
            ),
            0..3,
        ),
        weighted(0.3, ("[a-z]{1,8}", secret_ref())),
    )
        .prop_map(
            |(method, url, follow, skip_ssl, body, headers, query, assertions, auth)| {
                let mut request = Map::new();
                request.insert("method".into(), json!(method));
                request.insert("url".into(), json!(url));
                set(&mut request, "followRedirects", follow);
                set(&mut request, "skipSSL", skip_ssl);
                if let Some((body, body_type)) = body {
                    request.insert("body".into(), json!(body));
                    request.insert("bodyType".into(), json!(body_type));
                }
                if !headers.is_empty() {
                    request.insert("headers".into(), json!(headers));
                }
                if !query.is_empty() {
                    request.insert("queryParameters".into(), json!(query));
                }
                let assertions: Vec<Value> = assertions
                    .into_iter()
                    .map(|(source, comparison, target)| {
                        let mut a = json!({ "source": source, "comparison": comparison, "target": target });
                        if source == "JSON_BODY" {
                            a["property"] = json!("$.status");
                        }
                        a
                    })
                    .collect();
                if !assertions.is_empty() {
                    request.insert("assertions".into(), json!(assertions));
                }
                if let Some((username, password)) = auth {
                    request.insert(
                        "basicAuth".into(),
                        json!({ "username": username, "password": password }),
                    );
                }
                Value::Object(request)
            },
        )
}

/// The fields of one check type, with its `checkType`.
fn check_type_fields(slot: usize) -> impl Strategy<Value = (bool, Value)> {
    let name = logical_id("checks", slot);
    prop_oneof![
        (
            api_request(),
            weighted(0.4, one_ref("snippets")),
            weighted(0.3, one_ref("snippets"))
        )
            .prop_map(|(request, setup, teardown)| {
                let mut check = json!({ "checkType": "API", "request": request });
                if let Some(setup) = setup {
                    check["setupSnippet"] = json!(setup);
                }
                if let Some(teardown) = teardown {
                    check["tearDownSnippet"] = json!(teardown);
                }
                (true, check)
            }),
        (
            url(),
            maybe(any::<bool>()),
            maybe(select(&["IPv4", "IPv6"][..])),
            maybe(select(&["200", "301", "404"][..]))
        )
            .prop_map(|(url, follow, ip, status)| {
                let mut request = json!({ "url": url });
                if let Some(follow) = follow {
                    request["followRedirects"] = json!(follow);
                }
                if let Some(ip) = ip {
                    request["ipFamily"] = json!(ip);
                }
                if let Some(status) = status {
                    request["assertions"] =
                        json!([{ "source": "STATUS_CODE", "comparison": "EQUALS", "target": status }]);
                }
                (false, json!({ "checkType": "URL", "request": request }))
            }),
        (word(), 1u32..=65535, maybe("[a-z]{1,8}"), any::<bool>()).prop_map(|(host, port, data, assert)| {
            let mut request = json!({ "hostname": format!("{host}.internal"), "port": port });
            if let Some(data) = data {
                request["data"] = json!(data);
            }
            if assert {
                request["assertions"] =
                    json!([{ "source": "RESPONSE_TIME", "comparison": "LESS_THAN", "target": "500" }]);
            }
            (true, json!({ "checkType": "TCP", "request": request }))
        }),
        (
            word(),
            select(&["A", "AAAA", "CNAME", "MX", "TXT", "NS"][..]),
            maybe("1\\.1\\.1\\.[1-9]"),
            maybe(1u32..=65535),
            maybe(select(&["TCP", "UDP"][..]))
        )
            .prop_map(|(host, record, server, port, protocol)| {
                let mut request = json!({ "query": format!("{host}.example.com"), "recordType": record });
                if let Some(server) = server {
                    request["nameServer"] = json!(server);
                }
                if let Some(port) = port {
                    request["port"] = json!(port);
                }
                if let Some(protocol) = protocol {
                    request["protocol"] = json!(protocol);
                }
                (false, json!({ "checkType": "DNS", "request": request }))
            }),
        (
            word(),
            maybe(select(&["IPv4", "IPv6"][..])),
            maybe(1u32..=50),
            maybe((1u32..=100, 1u32..=100))
        )
            .prop_map(|(host, ip, count, thresholds)| {
                let mut request = json!({ "hostname": format!("{host}.example.com") });
                if let Some(ip) = ip {
                    request["ipFamily"] = json!(ip);
                }
                if let Some(count) = count {
                    request["pingCount"] = json!(count);
                }
                let mut check = json!({ "checkType": "ICMP", "request": request });
                if let Some((a, b)) = thresholds {
                    check["degradedPacketLossThreshold"] = json!(f64::from(a.min(b)) / 2.0);
                    check["maxPacketLossThreshold"] = json!(a.max(b));
                }
                (false, check)
            }),
        (
            1u32..=100,
            select(&["seconds", "minutes", "hours", "days"][..]),
            0u32..=60,
            select(&["seconds", "minutes", "hours", "days"][..])
        )
            .prop_map(|(period, period_unit, grace, grace_unit)| {
                let heartbeat =
                    json!({ "period": period, "periodUnit": period_unit, "grace": grace, "graceUnit": grace_unit });
                (false, json!({ "checkType": "HEARTBEAT", "heartbeat": heartbeat }))
            }),
        (script(format!("{name}-browser")), environment_variables()).prop_map(|(script, vars)| {
            let mut check = json!({ "checkType": "BROWSER", "script": script });
            if !vars.is_empty() {
                check["environmentVariables"] = json!(vars);
            }
            (false, check)
        }),
        script(format!("{name}-steps"))
            .prop_map(|script| (false, json!({ "checkType": "MULTI_STEP", "script": script }))),
        (
            "[a-z]{1,8}/[a-z]{1,8}",
            maybe("npx playwright test( --grep [a-z]{1,6})?"),
            subsequence(&["chromium", "firefox", "webkit"][..], 1..=3),
            environment_variables()
        )
            .prop_map(|(bundle, command, browsers, vars)| {
                let mut check = json!({ "checkType": "PLAYWRIGHT", "codeBundlePath": bundle, "browsers": browsers });
                if let Some(command) = command {
                    check["testCommand"] = json!(command);
                }
                if !vars.is_empty() {
                    check["environmentVariables"] = json!(vars);
                }
                (false, check)
            }),
        text().prop_map(|prompt| (
            false,
            json!({ "checkType": "AGENTIC", "prompt": format!("Verify: {prompt}") })
        )),
    ]
}

fn check(slot: usize) -> BoxedStrategy<Value> {
    check_type_fields(slot)
        .prop_flat_map(move |(sub_minute, typed)| (check_common(slot, sub_minute), Just(typed)))
        .prop_map(|(mut common, typed)| {
            if let Value::Object(typed) = typed {
                common.extend(typed);
            }
            Value::Object(common)
        })
        .boxed()
}

fn group(slot: usize) -> BoxedStrategy<Value> {
    (
        (
            word(),
            maybe(any::<bool>()),
            maybe(any::<bool>()),
            maybe(pick(TAGS)),
            maybe(pick(LOCATIONS)),
            maybe(1u32..=10),
            maybe(select(RUNTIMES)),
        ),
        (
            weighted(0.5, refs("alertChannels")),
            weighted(0.3, one_ref("snippets")),
            weighted(0.2, refs("privateLocations")),
            maybe(prop_oneof![Just(json!("FALLBACK")), retry_strategy()]),
            weighted(0.3, environment_variables()),
            weighted(0.3, (url(), key_values())),
            maybe(any::<bool>()),
        ),
    )
        .prop_map(move |(a, b)| {
            let (name, activated, muted, tags, locations, concurrency, runtime) = a;
            let (channels, snippet, private_locations, retry, vars, defaults, run_parallel) = b;
            let mut group = Map::new();
            group.insert("name".into(), json!(format!("Group {slot} {name}")));
            set(&mut group, "activated", activated);
            set(&mut group, "muted", muted);
            set(&mut group, "tags", tags);
            set(&mut group, "locations", locations);
            set(&mut group, "concurrency", concurrency);
            set(&mut group, "runtimeId", runtime);
            set(&mut group, "alertChannels", channels);
            set(&mut group, "setupSnippet", snippet);
            set(&mut group, "privateLocations", private_locations);
            set(&mut group, "retryStrategy", retry);
            set(&mut group, "environmentVariables", vars);
            if let Some((url, headers)) = defaults {
                group.insert("apiCheckDefaults".into(), json!({ "url": url, "headers": headers }));
            }
            set(&mut group, "runParallel", run_parallel);
            Value::Object(group)
        })
        .boxed()
}

fn snippet(slot: usize) -> BoxedStrategy<Value> {
    (word(), script(format!("snippet-{slot}")))
        .prop_map(move |(name, script)| json!({ "name": format!("Snippet {slot} {name}"), "script": script }))
        .boxed()
}

fn alert_channel(slot: usize) -> BoxedStrategy<Value> {
    let config = prop_oneof![
        word().prop_map(move |w| ("EMAIL", json!({ "address": format!("ch{slot}-{w}@example.com") }))),
        (word(), maybe("#[a-z]{1,8}")).prop_map(move |(w, channel)| {
            let mut config = json!({ "url": format!("https://hooks.slack.com/services/ch{slot}/{w}") });
            if let Some(channel) = channel {
                config["channel"] = json!(channel);
            }
            ("SLACK", config)
        }),
        (
            word(),
            select(&["GET", "POST", "PUT"][..]),
            key_values(),
            maybe(secret_ref())
        )
            .prop_map(move |(w, method, headers, secret)| {
                let mut config = json!({
                    "name": format!("Hook {w}"), "url": format!("https://hooks.example.com/ch{slot}/{w}"),
                    "method": method, "headers": headers,
                });
                if let Some(secret) = secret {
                    config["webhookSecret"] = json!(secret);
                }
                ("WEBHOOK", config)
            }),
        (select(&["SMS", "CALL"][..]), 100_000u32..999_999, word()).prop_map(move |(kind, number, w)| {
            (
                kind,
                json!({ "number": format!("+3161{slot}{number}"), "name": format!("On-call {w}") }),
            )
        }),
        (
            word(),
            secret_ref(),
            select(&["US", "EU"][..]),
            select(&["P1", "P3", "P5"][..])
        )
            .prop_map(move |(w, key, region, priority)| {
                let config = json!({
                    "name": format!("Genie {slot} {w}"), "apiKey": key, "region": region, "priority": priority,
                });
                ("OPSGENIE", config)
            }),
        (word(), maybe(word())).prop_map(move |(w, account)| {
            let mut config = json!({ "serviceKey": format!("pd-{slot}-{w}") });
            if let Some(account) = account {
                config["account"] = json!(account);
            }
            ("PAGERDUTY", config)
        }),
    ];
    (
        config,
        maybe(any::<bool>()),
        maybe(any::<bool>()),
        maybe(any::<bool>()),
        maybe((any::<bool>(), 1u32..=30)),
    )
        .prop_map(|((kind, config), recovery, failure, degraded, ssl)| {
            let mut channel = Map::new();
            channel.insert("type".into(), json!(kind));
            channel.insert("config".into(), config);
            set(&mut channel, "sendRecovery", recovery);
            set(&mut channel, "sendFailure", failure);
            set(&mut channel, "sendDegraded", degraded);
            if let Some((expiry, threshold)) = ssl {
                channel.insert("sslExpiry".into(), json!(expiry));
                channel.insert("sslExpiryThreshold".into(), json!(threshold));
            }
            Value::Object(channel)
        })
        .boxed()
}

fn variable(_slot: usize) -> BoxedStrategy<Value> {
    (
        any::<bool>(),
        "[a-zA-Z0-9:/._-]{1,20}",
        secret_ref(),
        maybe(any::<bool>()),
    )
        .prop_map(|(secret, value, secret_value, locked)| {
            let mut variable = if secret {
                json!({ "value": secret_value, "secret": true })
            } else {
                json!({ "value": value })
            };
            if let Some(locked) = locked {
                variable["locked"] = json!(locked);
            }
            variable
        })
        .boxed()
}

fn private_location(slot: usize) -> BoxedStrategy<Value> {
    (
        word(),
        maybe(select(&["location", "building", "home"][..])),
        maybe(secret_ref()),
    )
        .prop_map(move |(name, icon, proxy)| {
            let mut location =
                json!({ "name": format!("Office {slot} {name}"), "slugName": format!("pl-office-{slot}") });
            if let Some(icon) = icon {
                location["icon"] = json!(icon);
            }
            if let Some(proxy) = proxy {
                location["proxyUrl"] = json!(proxy);
            }
            location
        })
        .boxed()
}

fn service(slot: usize) -> BoxedStrategy<Value> {
    word()
        .prop_map(move |name| json!({ "name": format!("Service {slot} {name}") }))
        .boxed()
}

fn status_page(slot: usize) -> BoxedStrategy<Value> {
    (
        word(),
        maybe(text()),
        maybe(select(&["LIGHT", "DARK", "AUTO"][..])),
        prop::collection::vec((word(), refs("statusPageServices")), 0..3),
        maybe(any::<bool>()),
    )
        .prop_map(move |(w, description, theme, cards, private)| {
            let mut page = json!({ "name": format!("Status {slot} {w}"), "url": format!("page-{slot}-{w}") });
            if let Some(description) = description {
                page["description"] = json!(description);
            }
            if let Some(theme) = theme {
                page["defaultTheme"] = json!(theme);
            }
            let cards: Vec<Value> = cards
                .into_iter()
                .map(|(name, services)| json!({ "name": format!("Card {name}"), "services": services }))
                .collect();
            if !cards.is_empty() {
                page["cards"] = json!(cards);
            }
            if let Some(private) = private {
                page["isPrivate"] = json!(private);
            }
            page
        })
        .boxed()
}

fn resource(section: &str, slot: usize) -> BoxedStrategy<Value> {
    match section {
        "privateLocations" => private_location(slot),
        "alertChannels" => alert_channel(slot),
        "snippets" => snippet(slot),
        "groups" => group(slot),
        "variables" => variable(slot),
        "statusPageServices" => service(slot),
        "statusPages" => status_page(slot),
        _ => check(slot),
    }
}

fn spec() -> impl Strategy<Value = Spec> {
    let sections: Vec<BoxedStrategy<Vec<Option<Slot>>>> = SECTIONS
        .iter()
        .map(|&(section, n)| {
            let presence = if section == "checks" { 0.7 } else { 0.6 };
            (0..n)
                .map(|slot| weighted(presence, (resource(section, slot), 0..FILES.len())))
                .collect::<Vec<_>>()
                .prop_map(|slots| {
                    slots
                        .into_iter()
                        .map(|s| s.map(|(body, file)| Slot { body, file }))
                        .collect()
                })
                .boxed()
        })
        .collect();
    let defaults = weighted(
        0.3,
        (maybe(pick(LOCATIONS)), maybe(pick(TAGS)), maybe(any::<bool>())).prop_map(|(locations, tags, muted)| {
            let mut defaults = Map::new();
            set(&mut defaults, "locations", locations);
            set(&mut defaults, "tags", tags);
            set(&mut defaults, "muted", muted);
            Value::Object(defaults)
        }),
    );
    let secrets = prop::collection::vec("[A-Za-z0-9]{4,16}", SECRETS);
    (defaults, secrets, sections).prop_map(|(defaults, secrets, sections)| {
        repair(Spec {
            defaults,
            secrets,
            sections,
        })
    })
}

/// Removes references to slots that are empty.
fn repair(mut spec: Spec) -> Spec {
    let exists: HashMap<&str, Vec<String>> = SECTIONS
        .iter()
        .enumerate()
        .map(|(i, (section, _))| {
            let ids = spec.sections[i]
                .iter()
                .enumerate()
                .filter(|(_, s)| s.is_some())
                .map(|(slot, _)| logical_id(section, slot))
                .collect();
            (*section, ids)
        })
        .collect();
    let has = |section: &str, id: &Value| exists[section].iter().any(|e| Some(e.as_str()) == id.as_str());
    for (i, (section, _)) in SECTIONS.iter().enumerate() {
        for slot in spec.sections[i].iter_mut().flatten() {
            let Some(body) = slot.body.as_object_mut() else {
                continue;
            };
            let fields: &[(&str, &str)] = match *section {
                "checks" => &[
                    ("group", "groups"),
                    ("alertChannels", "alertChannels"),
                    ("privateLocations", "privateLocations"),
                    ("setupSnippet", "snippets"),
                    ("tearDownSnippet", "snippets"),
                ],
                "groups" => &[
                    ("alertChannels", "alertChannels"),
                    ("privateLocations", "privateLocations"),
                    ("setupSnippet", "snippets"),
                ],
                _ => &[],
            };
            for (field, target) in fields {
                match body.get_mut(*field) {
                    Some(Value::Array(ids)) => ids.retain(|id| has(target, id)),
                    Some(id) if !has(target, id) => {
                        body.remove(*field);
                    }
                    _ => {}
                }
            }
            if body
                .get("triggerIncident")
                .is_some_and(|t| !has("statusPageServices", &t["service"]))
            {
                body.remove("triggerIncident");
            }
            if let Some(Value::Array(cards)) = body.get_mut("cards") {
                for card in cards {
                    if let Some(Value::Array(ids)) = card.get_mut("services") {
                        ids.retain(|id| has("statusPageServices", id));
                    }
                }
            }
        }
    }
    spec
}

// ---- mutation ----

#[derive(Debug, Clone, Copy)]
enum Choice {
    /// The resource as it was.
    Keep,
    /// The other version's resource (added when there was none).
    Other,
    /// The resource with one field taken from the other version (set, changed or removed).
    Tweak,
    /// No resource.
    Drop,
}

fn choice() -> impl Strategy<Value = Choice> {
    prop_oneof![4 => Just(Choice::Keep), 3 => Just(Choice::Other), 3 => Just(Choice::Tweak), 2 => Just(Choice::Drop)]
}

/// Fields changed together by a tweak (rules span them).
const COUPLED: &[&[&str]] = &[
    &["frequency", "frequencyOffset"],
    &["degradedPacketLossThreshold", "maxPacketLossThreshold"],
    &["degradedResponseTime", "maxResponseTime"],
];

fn tweak(base: &Value, other: &Value, pick: Index) -> Value {
    let variant = |v: &Value| (v.get("checkType").cloned(), v.get("type").cloned());
    if variant(base) != variant(other) {
        return other.clone();
    }
    let (Some(from), Some(to)) = (base.as_object(), other.as_object()) else {
        return other.clone();
    };
    let mut keys: Vec<&String> = from
        .keys()
        .chain(to.keys())
        .filter(|k| !matches!(k.as_str(), "checkType" | "type" | "slugName"))
        .collect();
    keys.sort();
    keys.dedup();
    if keys.is_empty() {
        return base.clone();
    }
    let key = pick.get(&keys).as_str();
    let together: Vec<&str> = COUPLED
        .iter()
        .find(|c| c.contains(&key))
        .map_or_else(|| vec![key], |c| c.to_vec());
    let mut out = from.clone();
    for key in together {
        match to.get(key) {
            Some(value) => out.insert(key.to_owned(), value.clone()),
            None => out.remove(key),
        };
    }
    Value::Object(out)
}

#[derive(Debug, Clone)]
struct Mutation {
    other: Spec,
    choices: Vec<Choice>,
    picks: Vec<Index>,
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let total: usize = SECTIONS.iter().map(|(_, n)| n).sum::<usize>() + SECRETS + 1;
    (
        spec(),
        prop::collection::vec(choice(), total),
        prop::collection::vec(any::<Index>(), total),
    )
        .prop_map(|(other, choices, picks)| Mutation { other, choices, picks })
}

fn mutate(base: &Spec, mutation: &Mutation) -> Spec {
    let mut next = base.clone();
    let mut n = 0;
    let mut next_choice = || {
        n += 1;
        (mutation.choices[n - 1], mutation.picks[n - 1])
    };
    for (i, slots) in next.sections.iter_mut().enumerate() {
        for (slot, current) in slots.iter_mut().enumerate() {
            let other = &mutation.other.sections[i][slot];
            *current = match (next_choice(), current.take(), other) {
                ((Choice::Keep, _), current, _) => current,
                ((Choice::Drop, _), ..) => None,
                ((Choice::Other, _), _, other) => other.clone(),
                ((Choice::Tweak, pick), Some(current), Some(other)) => Some(Slot {
                    body: tweak(&current.body, &other.body, pick),
                    file: other.file,
                }),
                ((Choice::Tweak, _), current, _) => current,
            };
        }
    }
    for (i, secret) in next.secrets.iter_mut().enumerate() {
        if let (Choice::Other | Choice::Tweak, _) = next_choice() {
            *secret = mutation.other.secrets[i].clone();
        }
    }
    if let (Choice::Other | Choice::Tweak, _) = next_choice() {
        next.defaults = mutation.other.defaults.clone();
    }
    repair(next)
}

// ---- writing the files ----

fn to_toml(value: &Value) -> toml::Value {
    match value {
        Value::Bool(b) => toml::Value::Boolean(*b),
        Value::Number(n) => n
            .as_i64()
            .map_or_else(|| toml::Value::Float(n.as_f64().unwrap_or(0.0)), toml::Value::Integer),
        Value::String(s) => toml::Value::String(s.clone()),
        Value::Array(items) => toml::Value::Array(items.iter().map(to_toml).collect()),
        Value::Object(map) => toml::Value::Table(map.iter().map(|(k, v)| (k.clone(), to_toml(v))).collect()),
        Value::Null => toml::Value::String(String::new()),
    }
}

/// Writes scripts given as `{ file, __content }` and points `file` at them from `folder`.
fn place_scripts(value: &mut Value, folder: &Path, root: &Path) {
    match value {
        Value::Object(map) => {
            if let (Some(Value::String(file)), Some(Value::String(content))) = (map.get("file"), map.get("__content")) {
                let path = root.join(file);
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(&path, content).unwrap();
                let depth = folder.components().count();
                let relative = format!("{}{file}", "../".repeat(depth));
                map.remove("__content");
                map.insert("file".into(), Value::String(relative));
                return;
            }
            map.values_mut().for_each(|v| place_scripts(v, folder, root));
        }
        Value::Array(items) => items.iter_mut().for_each(|v| place_scripts(v, folder, root)),
        _ => {}
    }
}

/// Writes the project (replacing the previous files, keeping `.monform/`).
fn write_project(root: &Path, spec: &Spec) {
    for entry in std::fs::read_dir(root).unwrap() {
        let entry = entry.unwrap();
        if entry.file_name() == ".monform" {
            continue;
        }
        if entry.file_type().unwrap().is_dir() {
            std::fs::remove_dir_all(entry.path()).unwrap();
        } else {
            std::fs::remove_file(entry.path()).unwrap();
        }
    }
    let mut project = format!("[project]\nname = \"{PROJECT}\"\n\n[state]\nbackend = \"local\"\n");
    if let Some(defaults) = &spec.defaults {
        let table = toml::to_string(&toml::Value::Table(
            [("defaults".to_owned(), to_toml(defaults))].into_iter().collect(),
        ))
        .unwrap();
        project.push('\n');
        project.push_str(&table);
    }
    std::fs::write(root.join("monform.toml"), project).unwrap();
    let mut files: BTreeMap<usize, Map<String, Value>> = BTreeMap::new();
    for (i, (section, _)) in SECTIONS.iter().enumerate() {
        for (slot, entry) in spec.sections[i].iter().enumerate() {
            let Some(entry) = entry else { continue };
            let folder = Path::new(FILES[entry.file]).parent().unwrap();
            let mut body = entry.body.clone();
            place_scripts(&mut body, folder, root);
            let file = files.entry(entry.file).or_default();
            let section = file
                .entry((*section).to_owned())
                .or_insert_with(|| Value::Object(Map::new()));
            section[logical_id(section_name(i), slot)] = body;
        }
    }
    for (file, document) in files {
        let name = FILES[file];
        let path = root.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let document = Value::Object(document);
        let text = match file {
            1 => toml::to_string(&to_toml(&document)).unwrap(),
            2 => serde_json::to_string_pretty(&document).unwrap(),
            _ => serde_saphyr::to_string(&document).unwrap(),
        };
        std::fs::write(path, text).unwrap();
    }
}

fn section_name(i: usize) -> &'static str {
    SECTIONS[i].0
}

fn environment(spec: &Spec) -> HashMap<String, String> {
    spec.secrets
        .iter()
        .enumerate()
        .map(|(i, v)| (format!("SECRET_{i}"), v.clone()))
        .collect()
}

fn files_of(root: &Path) -> String {
    let mut out = String::new();
    for entry in walk(root) {
        let text = std::fs::read_to_string(&entry).unwrap_or_default();
        out.push_str(&format!(
            "--- {}\n{text}\n",
            entry.strip_prefix(root).unwrap().display()
        ));
    }
    out
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for path in entries {
        if path.file_name().is_some_and(|n| n == ".monform") {
            continue;
        }
        if path.is_dir() {
            found.extend(walk(&path));
        } else {
            found.push(path);
        }
    }
    found
}

// ---- the properties ----

/// Applies `spec` and checks that the plan after it is empty.
async fn converges(root: &Path, spec: &Spec, client: &Client, what: &str) -> Result<(), TestCaseError> {
    write_project(root, spec);
    let round = apply_and_replan(root, &environment(spec), client)
        .await
        .map_err(|e| TestCaseError::fail(format!("{what}: {e}\n\nfiles:\n{}", files_of(root))))?;
    prop_assert!(
        !round.after.summary().has_changes(),
        "{what}: the plan after apply still has changes:\n{}\nthe applied plan was:\n{}\nevents: {:#?}\n\nfiles:\n{}",
        describe(&round.after),
        describe(&round.applied),
        round.events,
        files_of(root)
    );
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn apply_converges_and_edits_converge(first in spec(), edit in mutation()) {
        let second = mutate(&first, &edit);
        let dir = tempfile::tempdir().unwrap();
        runtime().block_on(async {
            let server = emulator().await;
            let client = client_for(&server);
            converges(dir.path(), &first, &client, "first apply").await?;
            converges(dir.path(), &second, &client, "apply after the edit").await?;
            let _ = server.shutdown().await;
            Ok::<(), TestCaseError>(())
        })?;
    }
}

// ---- fixed cases ----

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

#[test]
fn the_full_example_converges() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/full"),
        dir.path(),
    );
    runtime().block_on(async {
        let server = emulator().await;
        let client = client_for(&server);
        let round = apply_and_replan(dir.path(), &HashMap::new(), &client).await.unwrap();
        assert!(round.applied.summary().create > 0);
        assert!(!round.after.summary().has_changes(), "{}", describe(&round.after));
        let _ = server.shutdown().await;
    });
}

// ---- known bugs, one case each ----

/// Applies each version of a project in turn (`files` of YAML by path) and
/// returns the rounds; stops at the first failure.
fn apply_versions(versions: &[&[(&str, &str)]]) -> Result<Vec<Round>, String> {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    runtime().block_on(async {
        let server = emulator().await;
        let client = client_for(&server);
        let mut rounds = Vec::new();
        for files in versions {
            let spec = Spec {
                defaults: None,
                secrets: Vec::new(),
                sections: SECTIONS.iter().map(|(_, n)| vec![None; *n]).collect(),
            };
            write_project(root, &spec);
            for (path, text) in *files {
                std::fs::create_dir_all(root.join(path).parent().unwrap()).unwrap();
                std::fs::write(root.join(path), text).unwrap();
            }
            let round = apply_and_replan(root, &HashMap::new(), &client).await?;
            rounds.push(round);
        }
        let _ = server.shutdown().await;
        Ok(rounds)
    })
}

fn assert_converged(rounds: &[Round]) {
    for (i, round) in rounds.iter().enumerate() {
        assert!(
            !round.after.summary().has_changes(),
            "version {}: the plan after apply still has changes:\n{}the applied plan was:\n{}",
            i + 1,
            describe(&round.after),
            describe(&round.applied)
        );
    }
}

const CHECK_IN_GROUP: &str = "
groups:
  shop:
    name: Shop
checks:
  home:
    checkType: URL
    name: Home
    group: shop
    request: { url: https://example.com }
";

const CHECK_ALONE: &str = "
checks:
  home:
    checkType: URL
    name: Home
    request: { url: https://example.com }
";

/// Taking a check out of a group and removing the group in one edit: the
/// field monform set before is cleared (`groupId: null`), so the check
/// leaves the group before the group is deleted.
#[test]
fn removing_a_group_and_the_reference_to_it_applies() {
    let rounds = apply_versions(&[&[("monitors.yaml", CHECK_IN_GROUP)], &[("monitors.yaml", CHECK_ALONE)]]);
    assert_converged(&rounds.unwrap());
}

/// Changing an alert channel's `type` replaces it (delete + create). The API
/// drops every subscription to the deleted channel, so the checks and groups
/// that list it are updated to subscribe to the new one.
#[test]
fn replacing_a_used_alert_channel_keeps_the_subscriptions() {
    let email = "
alertChannels:
  oncall:
    type: EMAIL
    config: { address: oncall@example.com }
checks:
  home:
    checkType: URL
    name: Home
    alertChannels: [oncall]
    request: { url: https://example.com }
";
    let slack = email.replace(
        "type: EMAIL\n    config: { address: oncall@example.com }",
        "type: SLACK\n    config: { url: https://hooks.slack.com/services/oncall }",
    );
    let rounds = apply_versions(&[&[("monitors.yaml", email)], &[("monitors.yaml", &slack)]]).unwrap();
    assert_converged(&rounds);
}

/// Removing `frequency` and `frequencyOffset` from a check (back to the
/// default frequency 10): the update clears the old offset (300, valid for
/// 60 but not for 10) instead of leaving it behind.
#[test]
fn going_back_to_the_default_frequency_applies() {
    let hourly = "
checks:
  home:
    checkType: URL
    name: Home
    frequency: 60
    frequencyOffset: 300
    request: { url: https://example.com }
";
    let rounds = apply_versions(&[&[("monitors.yaml", hourly)], &[("monitors.yaml", CHECK_ALONE)]]);
    assert_converged(&rounds.unwrap());
}

/// Changing a private location's `slugName` replaces it. Checks and groups
/// use it by slug and the API refuses to delete it while they do: the new
/// one is created first, the checks move to it, then the old one goes.
#[test]
fn renaming_a_used_private_location_slug_applies() {
    let before = "
privateLocations:
  office:
    name: Office
    slugName: office-ams
checks:
  home:
    checkType: URL
    name: Home
    privateLocations: [office]
    request: { url: https://example.com }
";
    let after = before.replace("slugName: office-ams", "slugName: office-rtm");
    let rounds = apply_versions(&[&[("monitors.yaml", before)], &[("monitors.yaml", &after)]]);
    assert_converged(&rounds.unwrap());
}

/// The happy paths of the cases above: they converge.
#[test]
fn moving_checks_between_groups_and_files_converges() {
    let two_groups = "
groups:
  shop: { name: Shop }
  blog: { name: Blog }
snippets:
  setup: { name: Setup, script: 'await setup()' }
checks:
  home:
    checkType: API
    name: Home
    group: shop
    setupSnippet: setup
    request: { url: https://example.com }
";
    let moved = "
groups:
  blog: { name: Blog }
snippets:
  other: { name: Other, script: 'await other()' }
";
    let check = "
checks:
  home:
    checkType: API
    name: Home
    group: blog
    setupSnippet: other
    request: { url: https://example.com }
";
    let rounds = apply_versions(&[
        &[("monitors.yaml", two_groups)],
        &[("a/groups.yaml", moved), ("b/checks.yaml", check)],
    ])
    .unwrap();
    assert_converged(&rounds);
}
