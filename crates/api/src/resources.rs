//! Kind-level operations: list everything, create, update, delete.

use futures_util::{StreamExt, TryStreamExt};
use monform_model::Kind;
use monform_model::endpoints::{Listing, path};
use monform_model::quirks::{CheckOperation, required_free_form};
use monform_model::resources::CheckType;
use reqwest::Method;
use serde_json::{Value, json};

use serde_json::value::RawValue;

use crate::client::{Ahead, RawReply, SendOptions};
use crate::remote::{Listed, Remote, listed};
use crate::{Client, Error};

/// Largest page the API serves.
pub const PAGE_SIZE: usize = 100;
/// Pages of one list fetched at once (all kinds are listed at once too):
/// more is no faster on a loopback emulator, and holds more pages in memory.
const PAGE_CONCURRENCY: usize = 4;

fn check_type(body: &Value) -> Option<CheckType> {
    let name = body.get("checkType")?.as_str()?;
    CheckType::ALL.iter().copied().find(|t| t.as_str() == name)
}

impl Client {
    /// Starts listing each of `kinds` now, in the background (on the
    /// current tokio runtime): the next [`Client::list_all`] of a kind takes
    /// that listing instead of starting one. A plan lists every kind
    /// whatever the files say, so it can read the service while the files
    /// load (at 100,000 checks each takes seconds). Only a kind of more
    /// than `ClientConfig::ahead_pages` pages (200) is read
    /// whole; of a smaller one only the first page: it reads in moments,
    /// and holding it while the files load only adds to the peak memory (a
    /// 10,000-check plan's by a sixth). A kind already under way is not
    /// started again.
    pub fn prefetch(&self, kinds: &[Kind]) {
        let Ok(mut prefetched) = self.prefetched.lock() else {
            return;
        };
        for &kind in kinds {
            if kind.is_local() || prefetched.contains_key(&kind) {
                continue;
            }
            let client = self.clone();
            prefetched.insert(kind, tokio::spawn(async move { client.list_ahead(kind).await }));
        }
    }

    /// Every object of `kind`, reading every page (limit 100); what
    /// [`Client::prefetch`] read of it is taken (once) instead.
    pub async fn list_all(&self, kind: Kind) -> Result<Vec<Remote>, Error> {
        if kind.is_local() {
            return Ok(Vec::new());
        }
        let started = self.prefetched.lock().ok().and_then(|mut p| p.remove(&kind));
        // A listing that did not finish (its task panicked or was
        // cancelled) is read again.
        let ahead = match started {
            Some(task) => task.await.ok().transpose()?,
            None => None,
        };
        let list = kind.endpoints().list;
        let items = match ahead {
            Some(Ahead::Whole(listed)) => return Ok(listed),
            Some(Ahead::FirstPage(first)) => self.pages_after(list, first).await?,
            None => return self.list_now(kind).await,
        };
        Ok(items.into_iter().map(|item| Remote::from_listed(kind, item)).collect())
    }

    /// One page (limit 100) of a paged listing of `kind`, and how many
    /// objects the listing holds (`Content-Range`) when the server says:
    /// what a rolling refresh reads a few of per plan. `None` for a kind
    /// listed by cursor, which has no page numbers.
    pub async fn list_page(&self, kind: Kind, page: usize) -> Result<Option<(Vec<Remote>, Option<usize>)>, Error> {
        if kind.is_local() {
            return Ok(Some((Vec::new(), Some(0))));
        }
        let endpoints = kind.endpoints();
        if endpoints.listing == Listing::Cursor {
            return Ok(None);
        }
        let reply = self.page(endpoints.list, page.max(1)).await?;
        let total = reply.content_range.as_deref().and_then(total_of);
        let items = items_of(endpoints.list, &reply.bytes)?;
        Ok(Some((
            items.into_iter().map(|item| Remote::from_listed(kind, item)).collect(),
            total,
        )))
    }

    /// What [`Client::prefetch`] reads of `kind`.
    async fn list_ahead(&self, kind: Kind) -> Result<Ahead, Error> {
        let endpoints = kind.endpoints();
        if endpoints.listing == Listing::Cursor {
            return Ok(Ahead::Whole(self.list_now(kind).await?));
        }
        let first = self.page(endpoints.list, 1).await?;
        let total = first.content_range.as_deref().and_then(total_of);
        if total.is_none_or(|total| total.div_ceil(PAGE_SIZE) <= self.ahead_pages()) {
            return Ok(Ahead::FirstPage(first));
        }
        let items = self.pages_after(endpoints.list, first).await?;
        Ok(Ahead::Whole(
            items.into_iter().map(|item| Remote::from_listed(kind, item)).collect(),
        ))
    }

    /// Every object of `kind`, read now.
    async fn list_now(&self, kind: Kind) -> Result<Vec<Remote>, Error> {
        let endpoints = kind.endpoints();
        let items = match endpoints.listing {
            Listing::Pages => self.list_pages(endpoints.list).await?,
            Listing::Cursor => self.list_cursor(endpoints.list).await?,
        };
        Ok(items.into_iter().map(|item| Remote::from_listed(kind, item)).collect())
    }

    async fn list_pages(&self, list: &str) -> Result<Vec<Listed>, Error> {
        let first = self.page(list, 1).await?;
        self.pages_after(list, first).await
    }

    /// Every object of `kind`, handed to `visit` a page at a time as the
    /// pages arrive, in order: a caller that looks at each object and
    /// drops it never holds the whole listing (the read-back after a cold
    /// apply of 100,000 checks held about 100 MB of their bodies). What
    /// [`Client::prefetch`] read of `kind` is taken instead, as one page.
    pub async fn list_each(&self, kind: Kind, mut visit: impl FnMut(Vec<Remote>) + Send) -> Result<(), Error> {
        if kind.is_local() {
            return Ok(());
        }
        if self.prefetched.lock().is_ok_and(|p| p.contains_key(&kind)) {
            visit(self.list_all(kind).await?);
            return Ok(());
        }
        let list = kind.endpoints().list;
        let mut on_page = |items: Vec<Listed>| {
            visit(items.into_iter().map(|item| Remote::from_listed(kind, item)).collect());
        };
        match kind.endpoints().listing {
            Listing::Pages => {
                let first = self.page(list, 1).await?;
                self.each_page_after(list, first, &mut on_page).await
            }
            Listing::Cursor => self.each_cursor_page(list, &mut on_page).await,
        }
    }

    /// A listing's items, its first page read (`first`): the others read.
    async fn pages_after(&self, list: &str, first: RawReply) -> Result<Vec<Listed>, Error> {
        let mut items = Vec::new();
        self.each_page_after(list, first, &mut |page| items.extend(page))
            .await?;
        Ok(items)
    }

    /// Hands each page of a listing to `visit`, in order, its first page
    /// read (`first`).
    async fn each_page_after(
        &self,
        list: &str,
        first: RawReply,
        visit: &mut (dyn FnMut(Vec<Listed>) + Send),
    ) -> Result<(), Error> {
        let total = first.content_range.as_deref().and_then(total_of);
        let items = items_of(list, &first.bytes)?;
        let pages = match total {
            Some(total) => total.div_ceil(PAGE_SIZE),
            // Without a total, keep reading until a short page.
            None if items.len() < PAGE_SIZE => 1,
            None => usize::MAX,
        };
        if pages == usize::MAX {
            let mut page = 2;
            let mut previous = texts(&items);
            visit(items);
            loop {
                let more = items_of(list, &self.page(list, page).await?.bytes)?;
                // A server that ignores `page` would otherwise be read forever.
                if !more.is_empty() && texts(&more) == previous {
                    let detail = format!("page {page} repeats page {}: the server ignores paging", page - 1);
                    return Err(Error::Decode {
                        method: "GET".into(),
                        path: list.to_owned(),
                        detail,
                    });
                }
                let done = more.len() < PAGE_SIZE;
                previous = texts(&more);
                visit(more);
                if done {
                    return Ok(());
                }
                page += 1;
            }
        }
        visit(items);
        futures_util::stream::iter(2..=pages)
            .map(|page| async move { items_of(list, &self.page(list, page).await?.bytes) })
            .buffered(PAGE_CONCURRENCY)
            .try_for_each(|items| {
                visit(items);
                futures_util::future::ready(Ok(()))
            })
            .await
    }

    async fn page(&self, list: &str, page: usize) -> Result<RawReply, Error> {
        let query = [("limit", PAGE_SIZE.to_string()), ("page", page.to_string())];
        self.send_raw(Method::GET, list, &query, None, SendOptions::default())
            .await
    }

    async fn list_cursor(&self, list: &str) -> Result<Vec<Listed>, Error> {
        let mut items = Vec::new();
        self.each_cursor_page(list, &mut |page| items.extend(page)).await?;
        Ok(items)
    }

    /// Hands each page of a cursor listing to `visit`, in order.
    async fn each_cursor_page(&self, list: &str, visit: &mut (dyn FnMut(Vec<Listed>) + Send)) -> Result<(), Error> {
        /// A page of a cursor listing.
        #[derive(serde::Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct CursorPage {
            #[serde(default)]
            entries: Vec<Box<RawValue>>,
            next_id: Option<String>,
        }
        let mut next: Option<String> = None;
        loop {
            let mut query = vec![("limit", PAGE_SIZE.to_string())];
            if let Some(next) = &next {
                query.push(("nextId", next.clone()));
            }
            let reply = self
                .send_raw(Method::GET, list, &query, None, SendOptions::default())
                .await?;
            let page: CursorPage = serde_json::from_slice(&reply.bytes).map_err(|e| decode_error(list, &e))?;
            visit(page.entries.into_iter().map(Listed::from_raw).collect());
            match page.next_id {
                Some(id) if !id.is_empty() && next.as_deref() != Some(id.as_str()) => next = Some(id),
                _ => return Ok(()),
            }
        }
    }

    /// Creates an object from its API body. Checks and groups are never
    /// auto-subscribed to alert channels: monform manages subscriptions.
    pub async fn create(&self, kind: Kind, body: &Value) -> Result<Remote, Error> {
        if kind.is_local() {
            return Ok(local_object(kind, None, body));
        }
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
        Ok(Remote::new(kind, &reply.body))
    }

    /// Updates an object: only the fields in `body` change.
    pub async fn update(&self, kind: Kind, id: &str, body: &Value) -> Result<Remote, Error> {
        if kind.is_local() {
            return Ok(local_object(kind, Some(id), body));
        }
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
        Ok(Remote::new(kind, &reply.body))
    }

    /// Deletes an object; one that is already gone counts as deleted.
    pub async fn delete(&self, kind: Kind, id: &str) -> Result<(), Error> {
        if kind.is_local() {
            return Ok(());
        }
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
        if kind.is_local() {
            return Ok(None);
        }
        match self
            .send(Method::GET, &path(kind.endpoints().read, Some(id), None), &[], None)
            .await
        {
            Ok(reply) => Ok(Some(Remote::new(kind, &reply.body))),
            Err(e) if e.status() == Some(404) => Ok(None),
            Err(e) => Err(e),
        }
    }
}

/// The object a write of a local kind (`Kind::is_local`: SLOs, which the
/// service has no API for) stands for: nothing is sent; the body comes
/// back with an id (a new one on create) for the state to record. The
/// engine keeps such objects in the state alone and never reads them back.
fn local_object(kind: Kind, id: Option<&str>, body: &Value) -> Remote {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let id = id.map(str::to_owned).unwrap_or_else(|| {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        format!("local-{nanos:x}-{n}")
    });
    let mut body = body.clone();
    if let Value::Object(map) = &mut body {
        map.insert(kind.id_field().to_owned(), Value::String(id));
    }
    Remote::new(kind, &body)
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

/// The items of a listing page, each kept as its JSON text with where its
/// fields are.
fn items_of(list: &str, bytes: &[u8]) -> Result<Vec<Listed>, Error> {
    listed(bytes).map_err(|e| decode_error(list, &e))
}

fn texts(items: &[Listed]) -> Vec<String> {
    items.iter().map(|item| item.text().to_owned()).collect()
}

fn decode_error(list: &str, error: &serde_json::Error) -> Error {
    Error::Decode {
        method: "GET".into(),
        path: list.to_owned(),
        detail: format!("expected a JSON array of objects: {error}"),
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
