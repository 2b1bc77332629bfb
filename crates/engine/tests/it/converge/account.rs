//! Strategies for the other resources: groups, snippets, alert channels,
//! variables, private locations, status page services and pages.

use super::*;

pub(crate) fn group(slot: usize) -> BoxedStrategy<Value> {
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

pub(crate) fn snippet(slot: usize) -> BoxedStrategy<Value> {
    (word(), script(format!("snippet-{slot}")))
        .prop_map(move |(name, script)| json!({ "name": format!("Snippet {slot} {name}"), "script": script }))
        .boxed()
}

pub(crate) fn alert_channel(slot: usize) -> BoxedStrategy<Value> {
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

pub(crate) fn variable(_slot: usize) -> BoxedStrategy<Value> {
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

pub(crate) fn private_location(slot: usize) -> BoxedStrategy<Value> {
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

pub(crate) fn service(slot: usize) -> BoxedStrategy<Value> {
    word()
        .prop_map(move |name| json!({ "name": format!("Service {slot} {name}") }))
        .boxed()
}

pub(crate) fn status_page(slot: usize) -> BoxedStrategy<Value> {
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

pub(crate) fn resource(section: &str, slot: usize) -> BoxedStrategy<Value> {
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
