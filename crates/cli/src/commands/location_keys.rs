//! `monform location-keys create|list|revoke ADDRESS`: the keys a private
//! location's agents authenticate with. The service shows a raw key once,
//! in the reply that creates it: `create` prints it alone on standard
//! output (so it can go straight into a secret store) and nothing else
//! ever shows more than its masked form.

use std::path::Path;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use monform_api::Method;
use monform_model::{Address, Kind};

use serde_json::Value;

use super::context::{Stop, block_on, open_backend};
use crate::connect::connect;
use crate::render::Output;

#[derive(Args)]
pub struct LocationKeysArgs {
    #[command(subcommand)]
    action: KeyAction,
}

use crate::format::HumanOrJson as Format;

#[derive(Subcommand)]
enum KeyAction {
    /// Create a key and print it (shown this once) on standard output
    Create {
        /// The private location, e.g. privateLocations.office
        address: String,
        /// Output: the key alone, or json holding it (`monform schema --output location-keys-create`)
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
    },
    /// List the location's keys, masked
    List {
        /// The private location, e.g. privateLocations.office
        address: String,
        /// Output: a table, or json (`monform schema --output location-keys-list`)
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
    },
    /// Revoke a key: agents using it are refused from then on
    Revoke {
        /// The private location, e.g. privateLocations.office
        address: String,
        /// The key's id (from `list`)
        key_id: String,
        /// Output: for people, or json (`monform schema --output location-keys-revoke`)
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
    },
}

pub fn run(dir: &Path, api_url: Option<&str>, args: LocationKeysArgs, output: &Output) -> ExitCode {
    let result = block_on(async {
        let (_, project) = super::context::load(dir, output, super::context::Findings::Hide)?;
        let address = match &args.action {
            KeyAction::Create { address, .. } | KeyAction::List { address, .. } | KeyAction::Revoke { address, .. } => {
                address
            }
        };
        let address: Address = address.parse().map_err(|e| Stop::Message(format!("{address}: {e}")))?;
        if address.kind != Kind::PrivateLocation {
            return Err(Stop::Message(format!(
                "{address} is not a private location: keys belong to privateLocations.ID"
            )));
        }
        let backend = open_backend(dir, &project, "monform location-keys")?;
        let state = backend.load(&project.name).map_err(|e| Stop::Message(e.to_string()))?;
        let location = state
            .resources
            .get(&address.to_string())
            .map(|entry| entry.remote_id.clone())
            .ok_or_else(|| Stop::Message(format!("{address} is not in the state: apply it first")))?;
        let connection = connect(dir, api_url, &project).await?;
        let path = format!("/v1/private-locations/{location}/keys");
        let client = &connection.client;
        let reply = match &args.action {
            KeyAction::Create { .. } => client.send(Method::POST, &path, &[], None).await,
            KeyAction::List { .. } => client.send(Method::GET, &path, &[], None).await,
            KeyAction::Revoke { key_id, .. } => {
                client
                    .send(Method::DELETE, &format!("{path}/{key_id}"), &[], None)
                    .await
            }
        };
        connection.close().await;
        let body = reply.map_err(|e| Stop::Message(format!("{address}: {e}")))?.body;
        match &args.action {
            KeyAction::Create { format, .. } => {
                let raw = body["rawKey"]
                    .as_str()
                    .ok_or_else(|| Stop::Message("the service's reply holds no rawKey".into()))?;
                if *format == Format::Json {
                    crate::render::print_json(&CreatedJson {
                        location: address.to_string(),
                        id: text(&body["id"]),
                        masked_key: text(&body["maskedKey"]),
                        raw_key: raw.to_owned(),
                        created_at: body["created_at"].as_str().map(str::to_owned),
                    });
                    return Ok(());
                }
                eprintln!(
                    "Key {} ({}) created for {address}. It is shown this once: store it now.",
                    text(&body["id"]),
                    text(&body["maskedKey"])
                );
                println!("{raw}");
            }
            KeyAction::List {
                format: Format::Json, ..
            } => {
                let keys = body.as_array().map(Vec::as_slice).unwrap_or_default();
                crate::render::print_json(&KeyList {
                    location: address.to_string(),
                    keys: keys
                        .iter()
                        .map(|key| KeyJson {
                            id: text(&key["id"]),
                            masked_key: text(&key["maskedKey"]),
                            created_at: key["created_at"].as_str().map(str::to_owned),
                        })
                        .collect(),
                });
            }
            KeyAction::List { .. } => {
                let keys = body.as_array().map(Vec::as_slice).unwrap_or_default();
                if keys.is_empty() {
                    println!("{address} has no keys: create one with `monform location-keys create {address}`");
                }
                print!("{}", key_table(keys));
            }
            KeyAction::Revoke {
                key_id,
                format: Format::Json,
                ..
            } => crate::render::print_json(&RevokedJson {
                location: address.to_string(),
                id: key_id.clone(),
            }),
            KeyAction::Revoke { key_id, .. } => println!("Key {key_id} of {address} revoked."),
        }
        Ok(())
    });
    super::context::settle(result).map_or_else(|code| code, |()| ExitCode::SUCCESS)
}

/// `location-keys list --format json`: the location's keys, masked.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[schemars(rename = "LocationKeys")]
pub struct KeyList {
    /// `privateLocations.NAME`.
    location: String,
    keys: Vec<KeyJson>,
}

/// One key: never its raw value (shown once, by `create`).
#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct KeyJson {
    /// What `revoke` takes.
    id: String,
    /// The key with all but its last characters masked.
    masked_key: String,
    /// When it was made (RFC 3339), as the service says.
    created_at: Option<String>,
}

/// `location-keys create ADDRESS --format json`: the new key, its raw
/// value included.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "LocationKeyCreated")]
pub struct CreatedJson {
    /// `privateLocations.NAME`.
    location: String,
    /// What `revoke` takes.
    id: String,
    /// The key with all but its last characters masked (what `list` shows).
    masked_key: String,
    /// The key itself, for the location's agents (`MONFORM_AGENT_KEY`). The
    /// service shows it in this reply only, as the human output does (the
    /// key alone on standard output): store it now. No other output of
    /// monform ever holds a raw key.
    raw_key: String,
    /// When it was made (RFC 3339), as the service says.
    created_at: Option<String>,
}

/// `location-keys revoke ADDRESS KEY_ID --format json`: the key revoked
/// (agents using it are refused from then on).
#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "LocationKeyRevoked")]
pub struct RevokedJson {
    /// `privateLocations.NAME`.
    location: String,
    /// The key's id.
    id: String,
}

/// The keys as a table: id (what `revoke` takes), the masked key and
/// when it was made, in columns two spaces apart whatever their widths.
fn key_table(keys: &[Value]) -> String {
    if keys.is_empty() {
        return String::new();
    }
    let rows: Vec<[String; 3]> = keys
        .iter()
        .map(|key| [text(&key["id"]), text(&key["maskedKey"]), date(&key["created_at"])])
        .collect();
    let header = ["ID", "KEY", "CREATED"].map(str::to_owned);
    let width = |column: usize| {
        rows.iter()
            .chain([&header])
            .map(|row| row[column].chars().count())
            .max()
            .unwrap_or(0)
    };
    let (id_w, key_w) = (width(0), width(1));
    std::iter::once(&header)
        .chain(&rows)
        .map(|[id, key, created]| format!("{id:id_w$}  {key:key_w$}  {created}\n"))
        .collect()
}

/// A service date as `2026-11-25 17:28 UTC`; as it came when it is not one.
fn date(value: &Value) -> String {
    let raw = text(value);
    chrono::DateTime::parse_from_rfc3339(&raw).map_or(raw, |at| {
        at.with_timezone(&chrono::Utc).format("%Y-%m-%d %H:%M UTC").to_string()
    })
}

fn text(value: &Value) -> String {
    value.as_str().map_or_else(|| value.to_string(), str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_masked_key_and_the_date_are_columns_apart() {
        let keys = [
            json!({"id": "k1", "maskedKey": "*******************************abcd", "created_at": "2026-11-25T17:28:03.123Z"}),
            json!({"id": "k2-longer", "maskedKey": "***wxyz", "created_at": "later"}),
        ];
        assert_eq!(
            key_table(&keys),
            "ID         KEY                                  CREATED\n\
             k1         *******************************abcd  2026-11-25 17:28 UTC\n\
             k2-longer  ***wxyz                              later\n"
        );
    }
}
