//! Strategies for field values, and for checks of every type with their
//! common fields, requests and type-specific fields.

use super::*;

pub(crate) fn word() -> impl Strategy<Value = String> {
    select(WORDS).prop_map(str::to_owned)
}

pub(crate) fn text() -> impl Strategy<Value = String> {
    "[A-Za-z0-9][A-Za-z0-9 .,:/()-]{0,40}"
}

pub(crate) fn pick(pool: &'static [&'static str]) -> impl Strategy<Value = Vec<String>> {
    subsequence(pool, 0..=pool.len())
        .prop_shuffle()
        .prop_map(|v| v.into_iter().map(str::to_owned).collect())
}

pub(crate) fn secret_ref() -> impl Strategy<Value = String> {
    (0..SECRETS).prop_map(|i| format!("${{env:SECRET_{i}}}"))
}

/// A script: inline, or `{ file }` (written by `write_project`; `__content` is the text).
pub(crate) fn script(name: String) -> impl Strategy<Value = Value> {
    ("[a-z][a-z0-9 ();.=']{3,60}", any::<bool>()).prop_map(move |(code, in_file)| {
        let code = format!("await {code}\n");
        if in_file {
            json!({ "file": format!("scripts/{name}.js"), "__content": code })
        } else {
            Value::String(code)
        }
    })
}

pub(crate) fn url() -> impl Strategy<Value = String> {
    (word(), "[a-z0-9/]{0,12}").prop_map(|(host, path)| format!("https://{host}.example.com/{path}"))
}

pub(crate) fn key_values() -> impl Strategy<Value = Vec<Value>> {
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

pub(crate) fn environment_variables() -> impl Strategy<Value = Vec<Value>> {
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

pub(crate) fn retry_strategy() -> impl Strategy<Value = Value> {
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

pub(crate) fn alert_settings() -> impl Strategy<Value = Value> {
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
pub(crate) fn frequency(sub_minute: bool) -> impl Strategy<Value = (u32, Option<u32>)> {
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

pub(crate) fn set(object: &mut Map<String, Value>, key: &str, value: Option<impl Into<Value>>) {
    if let Some(value) = value {
        object.insert(key.to_owned(), value.into());
    }
}

/// Slot numbers of another section, as logical ids (dangling ones are removed by `repair`).
pub(crate) fn refs(section: &'static str) -> impl Strategy<Value = Vec<String>> {
    subsequence((0..slots(section)).collect::<Vec<_>>(), 0..=slots(section))
        .prop_shuffle()
        .prop_map(move |v| v.into_iter().map(|i| logical_id(section, i)).collect())
}

pub(crate) fn one_ref(section: &'static str) -> impl Strategy<Value = String> {
    (0..slots(section)).prop_map(move |i| logical_id(section, i))
}

/// The fields every check type has.
pub(crate) fn check_common(slot: usize, sub_minute: bool) -> impl Strategy<Value = Map<String, Value>> {
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

pub(crate) fn api_request() -> impl Strategy<Value = Value> {
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
pub(crate) fn check_type_fields(slot: usize) -> impl Strategy<Value = (bool, Value)> {
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

pub(crate) fn check(slot: usize) -> BoxedStrategy<Value> {
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
