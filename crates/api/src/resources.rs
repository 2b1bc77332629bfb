//! Kind-level operations: list everything, create, update, delete.

use futures_util::{StreamExt, TryStreamExt};
use monform_model::Kind;
use monform_model::endpoints::{Listing, path};
use monform_model::quirks::{CheckOperation, required_free_form};
use monform_model::resources::CheckType;
use reqwest::Method;
use serde_json::{Value, json};

use crate::client::Reply;
use crate::{Client, Error};

/// Largest page the API serves.
pub const PAGE_SIZE: usize = 100;
/// Pages of one list fetched at once (all kinds are listed at once too):
/// more is no faster on a loopback emulator, and holds more pages in memory.
const PAGE_CONCURRENCY: usize = 4;

/// An object as the API returns it.
#[derive(Debug, Clone, PartialEq)]
pub struct Remote {
    pub kind: Kind,
    pub id: String,
    pub body: Value,
}

impl Remote {
    fn from_body(kind: Kind, body: Value) -> Remote {
        let id = body.get(kind.id_field()).map(id_text).unwrap_or_default();
        Remote { kind, id, body }
    }

    /// `updated_at`: changes on every update, so it serves as a version.
    pub fn version(&self) -> Option<&str> {
        self.body.get("updated_at").and_then(Value::as_str)
    }
}

/// `value` with every map and list at its exact size. Parsing grows them by
/// doubling, and a large account's bodies are most of a plan's memory.
fn compact(value: Value) -> Value {
    match value {
        // Collecting a map sizes it from the iterator, exactly.
        Value::Object(map) => Value::Object(map.into_iter().map(|(k, v)| (k, compact(v))).collect()),
        Value::Array(items) => {
            let mut items: Vec<Value> = items.into_iter().map(compact).collect();
            items.shrink_to_fit();
            Value::Array(items)
        }
        other => other,
    }
}

fn id_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn check_type(body: &Value) -> Option<CheckType> {
    let name = body.get("checkType")?.as_str()?;
    CheckType::ALL.iter().copied().find(|t| t.as_str() == name)
}

impl Client {
    /// Every object of `kind`, reading every page (limit 100).
    pub async fn list_all(&self, kind: Kind) -> Result<Vec<Remote>, Error> {
        let endpoints = kind.endpoints();
        let bodies = match endpoints.listing {
            Listing::Pages => self.list_pages(endpoints.list).await?,
            Listing::Cursor => self.list_cursor(endpoints.list).await?,
        };
        Ok(bodies.into_iter().map(|b| Remote::from_body(kind, b)).collect())
    }

    async fn list_pages(&self, list: &str) -> Result<Vec<Value>, Error> {
        let first = self.page(list, 1).await?;
        let total = first.content_range.as_deref().and_then(total_of);
        let mut items = array(list, first.body)?;
        let pages = match total {
            Some(total) => total.div_ceil(PAGE_SIZE),
            // Without a total, keep reading until a short page.
            None if items.len() < PAGE_SIZE => 1,
            None => usize::MAX,
        };
        if pages == usize::MAX {
            let mut page = 2;
            let mut previous = items.clone();
            loop {
                let more = array(list, self.page(list, page).await?.body)?;
                // A server that ignores `page` would otherwise be read forever.
                if !more.is_empty() && more == previous {
                    let detail = format!("page {page} repeats page {}: the server ignores paging", page - 1);
                    return Err(Error::Decode {
                        method: "GET".into(),
                        path: list.to_owned(),
                        detail,
                    });
                }
                let done = more.len() < PAGE_SIZE;
                items.extend(more.iter().cloned());
                if done {
                    return Ok(items);
                }
                previous = more;
                page += 1;
            }
        }
        let rest: Vec<Vec<Value>> = futures_util::stream::iter(2..=pages)
            .map(|page| async move { array(list, self.page(list, page).await?.body) })
            .buffered(PAGE_CONCURRENCY)
            .try_collect()
            .await?;
        items.extend(rest.into_iter().flatten());
        Ok(items)
    }

    async fn page(&self, list: &str, page: usize) -> Result<Reply, Error> {
        self.send(
            Method::GET,
            list,
            &[("limit", PAGE_SIZE.to_string()), ("page", page.to_string())],
            None,
        )
        .await
    }

    async fn list_cursor(&self, list: &str) -> Result<Vec<Value>, Error> {
        let mut items = Vec::new();
        let mut next: Option<String> = None;
        loop {
            let mut query = vec![("limit", PAGE_SIZE.to_string())];
            if let Some(next) = &next {
                query.push(("nextId", next.clone()));
            }
            let reply = self.send(Method::GET, list, &query, None).await?;
            let entries = reply.body.get("entries").cloned().unwrap_or(Value::Null);
            items.extend(array(list, entries)?);
            match reply.body.get("nextId").and_then(Value::as_str) {
                Some(id) if !id.is_empty() && next.as_deref() != Some(id) => next = Some(id.to_owned()),
                _ => return Ok(items),
            }
        }
    }

    /// Creates an object from its API body. Checks and groups are never
    /// auto-subscribed to alert channels: monform manages subscriptions.
    pub async fn create(&self, kind: Kind, body: &Value) -> Result<Remote, Error> {
        let endpoints = kind.endpoints();
        let check_type = if kind == Kind::Check { check_type(body) } else { None };
        let mut body = body.clone();
        if let Some(t) = check_type {
            fill_quirks(&mut body, CheckOperation::Create(t));
        }
        let reply = self
            .send(
                Method::POST,
                &path(endpoints.create, None, check_type),
                &auto_assign(kind),
                Some(&body),
            )
            .await?;
        Ok(Remote::from_body(kind, reply.body))
    }

    /// Updates an object: only the fields in `body` change.
    pub async fn update(&self, kind: Kind, id: &str, body: &Value) -> Result<Remote, Error> {
        let endpoints = kind.endpoints();
        let check_type = if kind == Kind::Check { check_type(body) } else { None };
        let mut body = body.clone();
        if let Some(t) = check_type {
            fill_quirks(&mut body, CheckOperation::TypedUpdate(t));
        }
        let reply = self
            .send(
                Method::PUT,
                &path(endpoints.update, Some(id), check_type),
                &auto_assign(kind),
                Some(&body),
            )
            .await?;
        Ok(Remote::from_body(kind, reply.body))
    }

    /// Deletes an object; one that is already gone counts as deleted.
    pub async fn delete(&self, kind: Kind, id: &str) -> Result<(), Error> {
        match self
            .send(
                Method::DELETE,
                &path(kind.endpoints().delete, Some(id), None),
                &[],
                None,
            )
            .await
        {
            Ok(_) => Ok(()),
            Err(e) if e.status() == Some(404) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// One object, or `None` when it does not exist.
    pub async fn get(&self, kind: Kind, id: &str) -> Result<Option<Remote>, Error> {
        match self
            .send(Method::GET, &path(kind.endpoints().read, Some(id), None), &[], None)
            .await
        {
            Ok(reply) => Ok(Some(Remote::from_body(kind, reply.body))),
            Err(e) if e.status() == Some(404) => Ok(None),
            Err(e) => Err(e),
        }
    }
}

fn auto_assign(kind: Kind) -> Vec<(&'static str, String)> {
    if kind.endpoints().auto_assign_alerts {
        vec![("autoAssignAlerts", "false".to_owned())]
    } else {
        Vec::new()
    }
}

/// The API's required free-form fields (spec quirks), filled with empty values.
fn fill_quirks(body: &mut Value, operation: CheckOperation) {
    for field in required_free_form(operation) {
        if body.get(*field).is_none() {
            body[*field] = if *field == "script" { json!("") } else { json!({}) };
        }
    }
}

/// The items of a listing page, each compacted as soon as its page is read.
fn array(list: &str, body: Value) -> Result<Vec<Value>, Error> {
    match body {
        Value::Array(items) => Ok(items.into_iter().map(compact).collect()),
        other => Err(Error::Decode {
            method: "GET".into(),
            path: list.to_owned(),
            detail: format!("expected a JSON array, got {}", kind_of(&other)),
        }),
    }
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "nothing",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The total of a `Content-Range: first-last/total` header.
fn total_of(range: &str) -> Option<usize> {
    range.rsplit('/').next()?.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_content_range_totals() {
        assert_eq!(total_of("0-99/250"), Some(250));
        assert_eq!(total_of("*/0"), Some(0));
        assert_eq!(total_of("garbage"), None);
    }
}
