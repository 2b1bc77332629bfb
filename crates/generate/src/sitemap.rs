//! A sitemap (sitemaps.org: `<urlset>` of `<url><loc>`, or a
//! `<sitemapindex>` of `<sitemap><loc>`) as URL checks, one per page.
//!
//! Index files are followed through the caller's fetch function, bounded
//! ([`Limits`]: how deep, how many files, how many pages), and never to
//! another host than the site's: the host of the URL given, or (for a file)
//! of the first page or sitemap it names. Pages of other hosts are listed as
//! skipped. XML is read by roxmltree, which refuses DTDs (no entity
//! expansion).

use std::collections::{BTreeSet, VecDeque};

use serde_json::{Map, Value};
use url::Url;

use crate::{GenerateError, Generated, Item, Skipped, Source, ids};

/// One sitemap file, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Document {
    /// `<urlset>`: the pages' `<loc>`s.
    Pages(Vec<String>),
    /// `<sitemapindex>`: the sitemaps' `<loc>`s.
    Index(Vec<String>),
}

/// Parses a sitemap or sitemap index; `origin` names it in errors.
pub fn parse(xml: &str, origin: &str) -> Result<Document, GenerateError> {
    let not = |message: String| GenerateError::NotSitemap {
        origin: origin.to_owned(),
        message,
    };
    let document = roxmltree::Document::parse(xml).map_err(|e| not(e.to_string()))?;
    let root = document.root_element();
    let entry = match root.tag_name().name() {
        "urlset" => "url",
        "sitemapindex" => "sitemap",
        other => {
            return Err(not(format!(
                "the root element is <{other}>, not <urlset> or <sitemapindex>"
            )));
        }
    };
    let locs = root
        .children()
        .filter(|n| n.is_element() && n.tag_name().name() == entry)
        .filter_map(|n| n.children().find(|c| c.is_element() && c.tag_name().name() == "loc"))
        .filter_map(|loc| loc.text())
        .map(|text| text.trim().to_owned())
        .filter(|text| !text.is_empty())
        .collect();
    Ok(if entry == "url" {
        Document::Pages(locs)
    } else {
        Document::Index(locs)
    })
}

/// How far index files are followed.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Index levels below the first file (an index of indexes is 2).
    pub depth: usize,
    /// Sitemap files fetched, the first one not counted.
    pub files: usize,
    /// Pages kept.
    pub pages: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        // sitemaps.org allows 50,000 pages a file; a monitor per page past
        // a few thousand is rarely what is meant, so stop at 5,000.
        Limits {
            depth: 2,
            files: 100,
            pages: 5_000,
        }
    }
}

/// The pages of a sitemap, its index files followed.
#[derive(Debug, Clone, Default)]
pub struct Collected {
    /// Sorted, without duplicates or fragments.
    pub pages: Vec<Url>,
    pub skipped: Vec<Skipped>,
    /// The site's host (`example.com`, `127.0.0.1:8080`).
    pub site: Option<String>,
    pub files_read: usize,
}

/// The fetch function: a sitemap's URL to its text, or why not.
pub type Fetch<'a> = dyn FnMut(&Url) -> Result<String, String> + 'a;

/// Collects the pages of `first` (read from `first_url` when it was
/// fetched, a local file otherwise), fetching index files' sitemaps.
pub fn collect(first: Document, first_url: Option<&Url>, fetch: &mut Fetch<'_>, limits: Limits) -> Collected {
    let mut out = Collected {
        site: first_url.map(site),
        ..Collected::default()
    };
    let mut pages = BTreeSet::new();
    let mut seen = BTreeSet::new();
    let mut queue = VecDeque::from([(first, 0usize)]);
    while let Some((document, depth)) = queue.pop_front() {
        match document {
            Document::Pages(locs) => {
                for loc in locs {
                    let Some(url) = absolute(&loc, &mut out) else { continue };
                    if pages.len() >= limits.pages {
                        out.skipped
                            .push(skip(&loc, &format!("past the first {} pages", limits.pages)));
                        continue;
                    }
                    pages.insert(url);
                }
            }
            Document::Index(locs) => {
                for loc in locs {
                    let Some(url) = absolute(&loc, &mut out) else { continue };
                    if !seen.insert(url.clone()) {
                        continue;
                    }
                    if depth + 1 > limits.depth {
                        out.skipped.push(skip(
                            &loc,
                            &format!("sitemap indexes nested deeper than {}", limits.depth),
                        ));
                        continue;
                    }
                    if out.files_read >= limits.files {
                        out.skipped
                            .push(skip(&loc, &format!("past the first {} sitemap files", limits.files)));
                        continue;
                    }
                    out.files_read += 1;
                    match fetch(&url).and_then(|text| parse(&text, url.as_str()).map_err(|e| e.to_string())) {
                        Ok(child) => queue.push_back((child, depth + 1)),
                        Err(reason) => out.skipped.push(skip(&loc, &format!("sitemap not read: {reason}"))),
                    }
                }
            }
        }
    }
    out.pages = pages.into_iter().collect();
    out.skipped.sort();
    out.skipped.dedup();
    out
}

/// A host with its port when it has one: what "the same host" compares.
fn site(url: &Url) -> String {
    match (url.host_str(), url.port()) {
        (Some(host), Some(port)) => format!("{host}:{port}"),
        (Some(host), None) => host.to_owned(),
        (None, _) => String::new(),
    }
}

/// `loc` as an http(s) URL of the site (the first one decides the site
/// when no URL was given), without its fragment; else skipped.
fn absolute(loc: &str, out: &mut Collected) -> Option<Url> {
    let mut url = match Url::parse(loc) {
        Ok(url) if matches!(url.scheme(), "http" | "https") => url,
        _ => {
            out.skipped.push(skip(loc, "not an absolute http or https URL"));
            return None;
        }
    };
    url.set_fragment(None);
    let host = site(&url);
    let expected = out.site.get_or_insert_with(|| host.clone());
    if *expected != host {
        out.skipped.push(skip(loc, &format!("on another host than {expected}")));
        return None;
    }
    Some(url)
}

fn skip(what: &str, reason: &str) -> Skipped {
    Skipped {
        what: what.to_owned(),
        reason: reason.to_owned(),
    }
}

/// One URL check per page.
pub fn generate(collected: &Collected) -> Generated {
    let site = collected.site.clone().unwrap_or_default();
    let path = |url: &Url| match url.query() {
        Some(query) => format!("{}?{query}", url.path()),
        None => url.path().to_owned(),
    };
    let wanted = collected
        .pages
        .iter()
        .map(|url| (ids::slug(&path(url), "home"), url.as_str().to_owned()))
        .collect();
    let items = ids::unique(wanted)
        .into_iter()
        .filter_map(|(key, source)| {
            let url = Url::parse(&source).ok()?;
            let mut fields = Map::new();
            fields.insert("name".into(), Value::String(format!("{site}{}", path(&url))));
            fields.insert("url".into(), Value::String(source));
            Some(Item { key, fields })
        })
        .collect();
    let host = site.split(':').next().unwrap_or_default();
    Generated {
        source: Source::Sitemap,
        title: site.clone(),
        suggested_id: ids::slug(host.strip_prefix("www.").unwrap_or(host), "site"),
        items,
        skipped: collected.skipped.clone(),
        notes: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const INDEX: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <sitemap><loc>https://www.example.com/pages.xml</loc></sitemap>
  <sitemap><loc> https://www.example.com/blog.xml </loc></sitemap>
  <sitemap><loc>https://cdn.other.example/evil.xml</loc></sitemap>
  <sitemap><loc>https://www.example.com/deeper.xml</loc></sitemap>
</sitemapindex>"#;

    fn urlset(locs: &[&str]) -> String {
        let entries: String = locs
            .iter()
            .map(|l| format!("<url><loc>{l}</loc><lastmod>2026-01-01</lastmod></url>"))
            .collect();
        format!(r#"<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{entries}</urlset>"#)
    }

    fn fetcher(url: &Url) -> Result<String, String> {
        match url.path() {
            "/pages.xml" => Ok(urlset(&[
                "https://www.example.com/",
                "https://www.example.com/about#team",
                "https://www.example.com/about",
                "https://www.example.com/search?q=a b",
                "https://elsewhere.example/x",
            ])),
            "/blog.xml" => Ok(urlset(&["https://www.example.com/blog/first-post/"])),
            "/deeper.xml" => Ok(INDEX.replace("pages.xml", "more.xml")),
            "/more.xml" => Ok(urlset(&["https://www.example.com/more"])),
            _ => Err("404 Not Found".into()),
        }
    }

    #[test]
    fn an_index_is_followed_on_its_host_only() {
        let mut fetched = Vec::new();
        let mut fetch = |url: &Url| {
            fetched.push(url.to_string());
            fetcher(url)
        };
        let first = parse(INDEX, "sitemap.xml").unwrap();
        let root = Url::parse("https://www.example.com/sitemap.xml").unwrap();
        let collected = collect(first, Some(&root), &mut fetch, Limits::default());
        assert!(!fetched.iter().any(|u| u.contains("other.example")), "{fetched:?}");
        let g = generate(&collected);
        let rows: Vec<(String, String)> = g
            .items
            .iter()
            .map(|i| (i.key.clone(), i.fields["url"].as_str().unwrap_or_default().to_owned()))
            .collect();
        assert_eq!(
            rows,
            [
                ("about".to_owned(), "https://www.example.com/about".to_owned()),
                (
                    "blog-first-post".to_owned(),
                    "https://www.example.com/blog/first-post/".to_owned()
                ),
                ("home".to_owned(), "https://www.example.com/".to_owned()),
                ("more".to_owned(), "https://www.example.com/more".to_owned()),
                (
                    "search-q-a-20b".to_owned(),
                    "https://www.example.com/search?q=a%20b".to_owned()
                ),
            ]
        );
        assert_eq!(g.suggested_id, "example-com");
        let reasons: Vec<String> = g.skipped.iter().map(|s| format!("{} {}", s.what, s.reason)).collect();
        assert!(
            reasons.contains(&"https://cdn.other.example/evil.xml on another host than www.example.com".to_owned()),
            "{reasons:?}"
        );
        assert!(
            reasons.contains(&"https://elsewhere.example/x on another host than www.example.com".to_owned()),
            "{reasons:?}"
        );
    }

    #[test]
    fn limits_bound_files_and_pages() {
        let first = parse(INDEX, "sitemap.xml").unwrap();
        let limits = Limits {
            depth: 1,
            files: 1,
            pages: 2,
        };
        let collected = collect(first, None, &mut fetcher, limits);
        assert_eq!(collected.files_read, 1);
        assert_eq!(collected.pages.len(), 2);
        assert!(collected.skipped.iter().any(|s| s.reason == "past the first 2 pages"));
        assert!(
            collected
                .skipped
                .iter()
                .any(|s| s.reason == "past the first 1 sitemap files")
        );
        let first = parse(INDEX, "sitemap.xml").unwrap();
        let flat = Limits {
            depth: 0,
            ..Limits::default()
        };
        let collected = collect(first, None, &mut fetcher, flat);
        assert_eq!((collected.files_read, collected.pages.len()), (0, 0));
        assert!(
            collected
                .skipped
                .iter()
                .any(|s| s.reason == "sitemap indexes nested deeper than 0")
        );
    }

    #[test]
    fn what_is_not_a_sitemap() {
        let error = parse("<html><body/></html>", "page.html").unwrap_err();
        assert_eq!(
            error.to_string(),
            "page.html: not a sitemap: the root element is <html>, not <urlset> or <sitemapindex>"
        );
        let entity =
            r#"<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]><urlset><url><loc>&a;</loc></url></urlset>"#;
        assert!(parse(entity, "x.xml").is_err());
        assert!(
            parse("<urlset>", "cut.xml")
                .unwrap_err()
                .to_string()
                .starts_with("cut.xml: not a sitemap")
        );
    }
}
