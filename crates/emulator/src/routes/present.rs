//! Objects as responses show them: the fields the service computes (a
//! check's `alertChannels`, an alert channel's `subscriptions`, a private
//! location's agents, a status page's cards) and what it hides (a secret
//! variable's value). Most kinds only gain fields after their own; those
//! are made as JSON text once ([`added_fields`]), so a list page can splice
//! them into the stored text (`stored.rs`) and a single object gets the
//! same bytes through a `Value`.

use std::collections::HashMap;

use monform_model::Kind;
use rusqlite::Connection;
use serde::Deserialize;
use serde_json::{Value, json};

use super::shapes;
use crate::clock::now_ms;
use crate::domain::agents;
use crate::error::ApiResult;
use crate::ids::id_text;
use crate::store::Objects;

/// An alert channel's flag (not in the model): new checks subscribe to it.
pub const AUTO_SUBSCRIBE: &str = "autoSubscribe";

/// What the presentation reads of a stored object: a parsed body, or the
/// few fields of one a list page keeps in its text (`stored::Head`).
pub trait Fields {
    /// Whether the object has the top-level field `name`.
    fn has(&self, name: &str) -> bool;
    /// The value of the top-level field `name` (`Null` when absent).
    fn value(&self, name: &str) -> &Value;
}

impl Fields for Value {
    fn has(&self, name: &str) -> bool {
        self.get(name).is_some()
    }
    fn value(&self, name: &str) -> &Value {
        &self[name]
    }
}

/// The lists of a check's `alertChannels` (spec 2.6), in order, with the
/// channel type each holds.
const CHANNEL_LISTS: [(&str, &str); 4] = [
    ("EMAIL", "email"),
    ("WEBHOOK", "webhook"),
    ("SLACK", "slack"),
    ("SMS", "sms"),
];

/// What presenting objects of a kind needs from the database, read once per request.
pub struct Context {
    /// The alert channels the objects subscribe to, by id, as a check's
    /// `alertChannels` shows each: its list (in `CHANNEL_LISTS`) and entry,
    /// as JSON text (`None`: a type no list shows).
    channels: HashMap<String, Option<(usize, String)>>,
    /// Agent registrations, for the computed fields of private locations.
    agents: Vec<Value>,
    /// Status page services by id, for the cards of status pages.
    services: HashMap<String, Value>,
    /// The subscriptions of alert channels, by channel id, as JSON text.
    subscriptions: HashMap<String, String>,
    /// The account, which status pages name (`accountId`).
    account: String,
}

impl Context {
    /// What presenting `objects` (of `kind`) needs: only the alert channels
    /// they subscribe to (in one query), so a page or one object never
    /// reads every channel.
    pub fn load<'v, F: Fields + 'v>(
        db: &Connection,
        account: &str,
        kind: Kind,
        objects: impl IntoIterator<Item = &'v F>,
    ) -> ApiResult<Context> {
        let objects: Vec<&F> = objects.into_iter().collect();
        let mut channels = HashMap::new();
        if kind == Kind::Check {
            let mut wanted: Vec<String> = objects
                .iter()
                .flat_map(|object| {
                    object
                        .value("alertChannelSubscriptions")
                        .as_array()
                        .into_iter()
                        .flatten()
                })
                .map(|subscription| id_text(&subscription["alertChannelId"]))
                .collect();
            wanted.sort_unstable();
            wanted.dedup();
            if !wanted.is_empty() {
                for (id, text) in db.get_many_text(account, Kind::AlertChannel.section(), &wanted)? {
                    channels.insert(id, channel_entry_of_text(&text));
                }
            }
        }
        let agents = if kind == Kind::PrivateLocation {
            agents::all_agents(db, account)?
        } else {
            Vec::new()
        };
        let services = if kind == Kind::StatusPage {
            shapes::services_of(db, account, objects.iter().map(|page| page.value("cards")))?
        } else {
            HashMap::new()
        };
        let subscriptions = if kind == Kind::AlertChannel {
            shapes::subscriptions_of(db, account, objects.iter().map(|channel| channel.value("id")))?
        } else {
            HashMap::new()
        };
        Ok(Context {
            channels,
            agents,
            services,
            subscriptions,
            account: account.to_owned(),
        })
    }
}

/// The kinds whose presentation may be fields added after the object's
/// own ([`added_fields`]); the others' changes fields in place or inside.
pub fn adds_fields_only(kind: Kind) -> bool {
    !matches!(kind, Kind::PrivateLocation | Kind::StatusPage)
}

/// The fields responses add to a stored object of `kind`, in order, each
/// as JSON text; `None` when its presentation is more than that (a secret
/// variable, a private location, a status page: see [`present`]). A field
/// the object already has is replaced in place by [`present`].
pub fn added_fields(kind: Kind, object: &impl Fields, context: &Context) -> Option<Vec<(&'static str, String)>> {
    let mut added = Vec::new();
    match kind {
        Kind::Check => added.push((
            "alertChannels",
            alert_channels(object.value("alertChannelSubscriptions"), context),
        )),
        Kind::Variable if object.value("secret") == true => return None,
        Kind::PrivateLocation | Kind::StatusPage => return None,
        Kind::AlertChannel => {
            let id = id_text(object.value("id"));
            let subscriptions = context.subscriptions.get(&id).cloned();
            added.push(("subscriptions", subscriptions.unwrap_or_else(|| "[]".to_owned())));
            if !object.has(AUTO_SUBSCRIBE) {
                added.push((AUTO_SUBSCRIBE, "false".to_owned()));
            }
        }
        Kind::Group if !object.has("apiCheckDefaults") => {
            let defaults = json!({ "url": "", "headers": [], "queryParameters": [], "assertions": [] });
            added.push(("apiCheckDefaults", defaults.to_string()));
        }
        _ => {}
    }
    Some(added)
}

/// The object as responses show it.
pub fn present(kind: Kind, mut body: Value, context: &Context) -> Value {
    if let Some(added) = added_fields(kind, &body, context) {
        for (name, text) in added {
            // Text made by `added_fields` from values: it parses.
            body[name] = serde_json::from_str(&text).unwrap_or(Value::Null);
        }
        return body;
    }
    match kind {
        // A secret one: the others only gain fields.
        Kind::Variable => body["value"] = Value::Null,
        Kind::PrivateLocation => agents::agent_fields(&mut body, &context.agents, now_ms()),
        Kind::StatusPage => {
            shapes::present_cards(&mut body, &context.services);
            body["accountId"] = json!(context.account);
        }
        _ => {}
    }
    body
}

/// [`channel_entry`] of a channel's stored text, parsing only the two
/// fields an entry reads (a check page looks up about 100 channels).
fn channel_entry_of_text(text: &str) -> Option<(usize, String)> {
    match serde_json::from_str::<ShownChannel>(text) {
        Ok(channel) => entry(channel.kind.as_str().unwrap_or_default(), &channel.config),
        // A field twice (a `Value` keeps the last) the way of a `Value`,
        // as before; a body that does not parse, as `Objects::get_many`
        // read it: `null`.
        Err(_) => channel_entry(&serde_json::from_str(text).unwrap_or(Value::Null)),
    }
}

/// The fields of a stored alert channel its entries read.
#[derive(Deserialize)]
struct ShownChannel {
    #[serde(rename = "type", default)]
    kind: Value,
    #[serde(default)]
    config: Value,
}

/// Where an alert channel goes in a check's `alertChannels`: its list (in
/// `CHANNEL_LISTS`) and its entry as JSON text; `None` for other types.
fn channel_entry(channel: &Value) -> Option<(usize, String)> {
    entry(channel["type"].as_str().unwrap_or_default(), &channel["config"])
}

/// [`channel_entry`] of a channel of type `kind` with `config`.
fn entry(kind: &str, config: &Value) -> Option<(usize, String)> {
    let list = CHANNEL_LISTS.iter().position(|(type_name, _)| *type_name == kind)?;
    let entry = match kind {
        "EMAIL" => json!({ "address": config["address"] }),
        "WEBHOOK" => json!({
            "url": config["url"], "name": config["name"], "method": config["method"],
            "headers": config["headers"], "queryParameters": config["queryParameters"],
        }),
        "SLACK" => json!({ "url": config["url"] }),
        "SMS" => json!({ "number": config["number"], "name": config["name"] }),
        _ => return None,
    };
    Some((list, entry.to_string()))
}

/// `alertChannels` of a check response (spec 2.6), from its active
/// subscriptions, as JSON text.
fn alert_channels(subscriptions: &Value, context: &Context) -> String {
    let mut lists: [Vec<&str>; CHANNEL_LISTS.len()] = Default::default();
    for subscription in subscriptions.as_array().into_iter().flatten() {
        if subscription["activated"] == false {
            continue;
        }
        // A text id looked up as it is, without a copy (`id_text`'s reading).
        let channel = match &subscription["alertChannelId"] {
            Value::String(id) => context.channels.get(id.as_str()),
            other => context.channels.get(&id_text(other)),
        };
        if let Some(Some((list, entry))) = channel {
            lists[*list].push(entry);
        }
    }
    let room: usize = lists.iter().flatten().map(|entry| entry.len() + 1).sum();
    let mut out = String::with_capacity(room + 48);
    out.push('{');
    for (index, ((_, name), entries)) in CHANNEL_LISTS.iter().zip(lists).enumerate() {
        if index > 0 {
            out.push(',');
        }
        out.push('"');
        out.push_str(name);
        out.push_str("\":[");
        for (at, entry) in entries.iter().enumerate() {
            if at > 0 {
                out.push(',');
            }
            out.push_str(entry);
        }
        out.push(']');
    }
    out.push('}');
    out
}
