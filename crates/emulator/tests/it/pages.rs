//! Status pages as HTML: a failing check with `triggerIncident` (loopback
//! target) shows its incident on the page and fixing the target resolves
//! it; custom domains; private pages; and, in Debian's headless Chromium,
//! the theme's light and dark colours and the incident in the DOM.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::targets::*;
use common::*;
use serde_json::{Value, json};

const LIGHT_BODY: &str = "#F4F1EA";
const DARK_BODY: &str = "#14213D";

fn palette(body: &str, text: &str) -> Value {
    json!({
        "bodyBackgroundColor": body, "headerBackgroundColor": body, "headerFontColor": text,
        "titleFontColor": text, "bodyFontColor": text, "bodyFontColorMuted": text,
        "navigationFontColor": text, "linkFontColor": text, "cardBackgroundColor": body,
        "borderColor": text, "primaryButtonBackgroundColor": text, "primaryButtonFontColor": body,
    })
}

struct Shop {
    ts: TestServer,
    target: Steered,
    check: String,
}

/// A service on a page (AUTO theme, custom domain) and a check that opens
/// an incident on it when it fails.
async fn shop(private: bool) -> Shop {
    let ts = emulator().await;
    let target = steered_target().await;
    let service = ts
        .create("/v1/status-pages/services", &json!({ "name": "Checkout" }), 200)
        .await;
    let other = ts
        .create("/v1/status-pages/services", &json!({ "name": "Search" }), 200)
        .await;
    ts.create(
        "/v1/status-pages",
        &json!({
            "name": "Shop status", "url": "shop", "customDomain": "status.shop.test",
            "description": "How the shop is doing",
            "logo": "https://shop.test/logo.png", "favicon": "https://shop.test/favicon.ico",
            "redirectTo": "https://shop.test/",
            "defaultTheme": "AUTO", "isPrivate": private,
            "themeColors": { "light": palette(LIGHT_BODY, "#1B1B1B"), "dark": palette(DARK_BODY, "#FFFFFF") },
            "cards": [{ "name": "Store", "services": [{ "id": service["id"] }, { "id": other["id"] }] }],
        }),
        201,
    )
    .await;
    let check = api_check(
        &ts,
        target.addr,
        "/switch",
        json!({ "doubleCheck": false, "triggerIncident": {
            "serviceId": service["id"], "severity": "MAJOR", "name": "Checkout down",
            "description": "Payments fail", "notifySubscribers": false,
        } }),
    )
    .await;
    Shop { ts, target, check }
}

async fn page(ts: &TestServer, path: &str, host: Option<&str>, key: Option<&str>) -> (u16, String) {
    let mut request = monform_http::client()
        .build()
        .expect("an HTTP client")
        .get(format!("{}{path}", ts.server.url()));
    if let Some(host) = host {
        request = request.header("Host", host);
    }
    if let Some(key) = key {
        request = request.bearer_auth(key);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.text().await.unwrap())
}

/// The page's HTML with what changes between runs (ids, times, ports) named.
fn filtered(html: &str) -> String {
    let ids = regex_lite("incident-[0-9a-f-]{8,}", "incident-[id]", html);
    let times = regex_lite(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", "[time]", &ids);
    let times = regex_lite(r"\d{1,2} [A-Z][a-z]{2} \d{4}, \d\d:\d\d UTC", "[date]", &times);
    regex_lite(r"resolved after \d+ s", "resolved after [n] s", &times)
}

fn regex_lite(pattern: &str, with: &str, text: &str) -> String {
    regex::Regex::new(pattern).unwrap().replace_all(text, with).into_owned()
}

#[tokio::test]
async fn a_failing_check_shows_its_incident_on_the_page_until_it_recovers() {
    let shop = shop(false).await;
    let ts = &shop.ts;
    let (status, before) = page(ts, "/status/shop", None, None).await;
    assert_eq!(status, 200, "{before}");
    assert!(
        before.contains(r#"<p class="summary operational" role="status">All systems operational</p>"#),
        "{before}"
    );
    assert!(!before.contains("Checkout down"));

    shop.target.failing.store(true, std::sync::atomic::Ordering::SeqCst);
    assert_eq!(run_session(ts, &shop.check).await["status"], "FAILED");
    let (_, open) = page(ts, "/status/shop", None, None).await;
    assert!(
        open.contains("<h3><span class=\"state major\">Major outage</span> Checkout down</h3>"),
        "{open}"
    );
    assert!(open.contains("Payments fail"), "{open}");
    assert!(
        open.contains(r#"<p class="summary major" role="status">Major outage: 1 open incident</p>"#),
        "the banner in the severity's colour, counted in words: {open}"
    );
    assert!(open.contains("UTC (just now)</time>"), "times read as dates: {open}");
    insta::assert_snapshot!("status_page_with_an_open_incident", filtered(&open));
    // The same page by its custom domain; other hosts get the API's 404.
    let (status, by_domain) = page(ts, "/", Some("status.shop.test"), None).await;
    assert_eq!(status, 200);
    assert_eq!(filtered(&by_domain), filtered(&open));
    assert_eq!(page(ts, "/", Some("elsewhere.test"), None).await.0, 404);
    assert_eq!(page(ts, "/status/nope", None, None).await.0, 404);

    shop.target.failing.store(false, std::sync::atomic::Ordering::SeqCst);
    assert_eq!(run_session(ts, &shop.check).await["status"], "PASSED");
    let (_, after) = page(ts, "/status/shop", None, None).await;
    assert!(after.contains("All systems operational"), "{after}");
    assert!(!after.contains("Open incidents"), "{after}");
    assert!(
        after.contains("<h3>Checkout down</h3>"),
        "listed among past incidents: {after}"
    );
}

#[tokio::test]
async fn a_private_page_needs_a_key_of_its_account() {
    let shop = shop(true).await;
    let ts = &shop.ts;
    let (status, body) = page(ts, "/status/shop", None, None).await;
    assert_eq!(status, 401, "{body}");
    assert!(!body.contains("Checkout"), "{body}");
    assert_eq!(page(ts, "/status/shop", None, Some("not-a-key")).await.0, 401);
    let (status, body) = page(ts, "/status/shop", None, Some(&ts.server.api_key)).await;
    assert_eq!(status, 200);
    assert!(body.contains("Checkout"));
}

#[tokio::test]
async fn another_account_cannot_take_a_page_url_custom_domain_or_dashboard_url() {
    let shop = shop(false).await;
    let ts = &shop.ts;
    ts.create("/v1/dashboards", &json!({ "header": "Wall", "customUrl": "wall" }), 201)
        .await;
    ts.server.app.store.ensure_key("rival-account", "rival-key").unwrap();
    let as_rival = |path: &str, body: Value| ts.client.post(ts.url(path)).bearer_auth("rival-key").json(&body).send();
    let rival_page = |url: &str, domain: Option<&str>| json!({ "name": "Rival", "url": url, "customDomain": domain });
    for (path, body, field) in [
        ("/v1/status-pages", rival_page("shop", None), "url shop"),
        (
            "/v1/status-pages",
            rival_page("rival", Some("STATUS.shop.test")),
            "customDomain STATUS.shop.test",
        ),
        (
            "/v1/dashboards",
            json!({ "header": "Rival", "customUrl": "wall" }),
            "customUrl wall",
        ),
    ] {
        let response = as_rival(path, body).await.unwrap();
        let (status, body) = parts(response).await;
        assert_eq!(status, 409, "{path}: {body}");
        let message = body["message"].as_str().unwrap();
        assert_eq!(message, format!("{field} is already taken"));
    }
    // A name nobody holds is the rival's; updating it onto the shop's is refused too.
    let response = as_rival("/v1/status-pages", rival_page("rival", None)).await.unwrap();
    let (status, rival) = parts(response).await;
    assert_eq!(status, 201, "{rival}");
    let moved = ts
        .client
        .put(ts.url(&format!("/v1/status-pages/{}", rival["id"].as_str().unwrap())))
        .bearer_auth("rival-key")
        .json(&rival_page("shop", None))
        .send()
        .await
        .unwrap();
    assert_eq!(moved.status().as_u16(), 409);
    // The shop's page is still the shop's.
    let (status, html) = page(ts, "/status/shop", None, None).await;
    assert_eq!(status, 200);
    assert!(html.contains("Shop status") && !html.contains("Rival"), "{html}");
    // An account's own update keeps its names.
    let ours = ts
        .create("/v1/status-pages", &json!({ "name": "Ours", "url": "ours" }), 201)
        .await;
    let kept = ts
        .put(
            &format!("/v1/status-pages/{}", ours["id"].as_str().unwrap()),
            &json!({ "name": "Still ours", "url": "ours" }),
        )
        .await;
    assert_eq!(kept.status().as_u16(), 200, "{}", kept.text().await.unwrap());
}

/// Debian's Chromium, or `None` (the browser test is skipped) unless
/// `MONFORM_REQUIRE_BROWSER=1` says it must run.
fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("MONFORM_CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    if path.is_file() {
        return Some(path);
    }
    assert!(
        std::env::var("MONFORM_REQUIRE_BROWSER").as_deref() != Ok("1"),
        "MONFORM_REQUIRE_BROWSER=1 but there is no Chromium at {}",
        path.display()
    );
    monform_testkit::skipped(&format!(
        "no Chromium at {} (MONFORM_REQUIRE_BROWSER=1 fails instead)",
        path.display()
    ));
    None
}

/// Runs headless Chromium on `url` with `flags`; its standard output.
pub fn headless(chromium: &Path, flags: &[&str], url: &str) -> String {
    let output = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--window-size=900,700",
        ])
        .args(flags)
        .arg(url)
        .output()
        .expect("chromium runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The colour of the screenshot's pixel at (x, y), as `#RRGGBB`.
fn pixel(png_file: &Path, x: usize, y: usize) -> String {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(png_file).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buffer = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buffer).unwrap();
    let channels = info.color_type.samples();
    let at = y * info.line_size + x * channels;
    format!("#{:02X}{:02X}{:02X}", buffer[at], buffer[at + 1], buffer[at + 2])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_renders_in_chromium_light_and_dark_with_its_incident() {
    let Some(chromium) = chromium() else { return };
    let shop = shop(false).await;
    shop.target.failing.store(true, std::sync::atomic::Ordering::SeqCst);
    assert_eq!(run_session(&shop.ts, &shop.check).await["status"], "FAILED");
    let url = format!("{}/status/shop", shop.ts.server.url());
    let dir = tempfile::tempdir().unwrap();
    // Chromium 156 ignores `--force-prefers-color-scheme`; its Blink setting
    // (0 dark, 1 light) is what sets `prefers-color-scheme`.
    for (scheme, setting, body) in [("light", "1", LIGHT_BODY), ("dark", "0", DARK_BODY)] {
        let shot = dir.path().join(format!("{scheme}.png"));
        let chromium = chromium.clone();
        let url = url.clone();
        let shot_flag = format!("--screenshot={}", shot.display());
        let blink = format!("--blink-settings=preferredColorScheme={setting}");
        tokio::task::spawn_blocking(move || headless(&chromium, &[&shot_flag, &blink], &url))
            .await
            .unwrap();
        // Bottom left: the page's body, below its content.
        assert_eq!(pixel(&shot, 3, 690), body, "{scheme} theme");
    }
    let chromium2 = chromium.clone();
    let dom = tokio::task::spawn_blocking(move || headless(&chromium2, &["--dump-dom"], &url))
        .await
        .unwrap();
    assert!(dom.contains("Checkout down"), "{dom}");
    assert!(dom.contains("alt=\"Shop status logo\""), "{dom}");
}
