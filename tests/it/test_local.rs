//! `monform test --local` end to end: the real binary runs a never-applied
//! project's checks against loopback targets (an HTTP server with a page
//! and a JSON API, a TCP listener, a UDP name server), browser checks with
//! the real Node.js, playwright-core and Chromium. Where those are missing
//! the browser tests skip, saying why, unless MONFORM_REQUIRE_BROWSER is set
//! (as `.ci/run` does, after installing them).

use crate::common;

use std::path::Path;
use std::str::FromStr;

use common::*;
use hickory_proto::op::{Message, ResponseCode};
use hickory_proto::rr::rdata::A;
use hickory_proto::rr::{Name, RData, Record};
use monform_testkit::targets::{self, HttpTarget, Reply, path_of};

const SECRET: &str = "s3cr3t-value-9f2";

/// `/` an HTML page titled "Monform Shop"; `/api/items` JSON, but 401
/// without the `X-Signed` header the setup snippet adds; `/api/health` JSON.
fn http_target() -> String {
    HttpTarget::start(|head| {
        let request = head.to_lowercase();
        match path_of(&request) {
            "/" => Reply::new(
                "200 OK",
                "text/html",
                "<html><head><title>Monform Shop</title></head><body><h1>Shop</h1></body></html>",
            ),
            "/api/items" if request.contains("x-signed: yes") => {
                Reply::new("200 OK", "application/json", r#"{"items":[1,2]}"#)
            }
            "/api/items" => Reply::new("401 Unauthorized", "application/json", r#"{"error":"unsigned"}"#),
            "/api/health" => Reply::new("200 OK", "application/json", r#"{"ok":true}"#),
            _ => Reply::new("404 Not Found", "text/plain", "no"),
        }
    })
    .url()
}

/// Answers "pong" to anything.
fn tcp_target() -> u16 {
    targets::tcp_target(b"pong")
}

/// A UDP name server: `shop.test` is 10.0.0.1, other names NXDOMAIN.
fn dns_target() -> u16 {
    let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = socket.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut buffer = [0u8; 512];
        while let Ok((n, from)) = socket.recv_from(&mut buffer) {
            let Ok(query) = Message::from_vec(&buffer[..n]) else {
                continue;
            };
            let mut answer = Message::response(query.metadata.id, query.metadata.op_code);
            let question = query.queries[0].clone();
            if question.name() == &Name::from_str("shop.test.").unwrap() {
                answer.answers.push(Record::from_rdata(
                    question.name().clone(),
                    60,
                    RData::A(A::new(10, 0, 0, 1)),
                ));
            } else {
                answer.metadata.response_code = ResponseCode::NXDomain;
            }
            answer.add_query(question);
            let _ = socket.send_to(&answer.to_vec().unwrap(), from);
        }
    });
    port
}

const MONITORS: &str = r#"variables:
  API_TOKEN:
    value: "{SECRET}"
    secret: true
  BASE_URL:
    value: "{BASE}"

snippets:
  sign:
    name: Sign the request
    script: |
      request.headers['X-Signed'] = 'yes';

checks:
  home:
    checkType: URL
    name: Homepage
    tags: [md]
    request:
      url: "{BASE}/"
      assertions:
        - { source: STATUS_CODE, comparison: EQUALS, target: "200" }
  items:
    checkType: API
    name: Items API
    setupSnippet: sign
    request:
      method: GET
      url: "{{BASE_URL}}/api/items"
      assertions:
        - { source: STATUS_CODE, comparison: EQUALS, target: "200" }
        - { source: JSON_BODY, property: "$.items[1]", comparison: EQUALS, target: "2" }
  health-wrong:
    checkType: API
    name: Health expects 201
    tags: [md]
    request:
      method: GET
      url: "{BASE}/api/health"
      assertions:
        - { source: STATUS_CODE, comparison: EQUALS, target: "201" }
  port:
    checkType: TCP
    name: TCP port
    request:
      hostname: 127.0.0.1
      port: {TCP}
      data: ping
      assertions:
        - { source: RESPONSE_DATA, comparison: EQUALS, target: pong }
  dns:
    checkType: DNS
    name: DNS record
    request:
      query: shop.test
      recordType: A
      nameServer: 127.0.0.1
      port: {DNS}
      protocol: UDP
      assertions:
        - { source: RESPONSE_CODE, comparison: EQUALS, target: NOERROR }
  browser:
    checkType: BROWSER
    name: Shop page
    degradedResponseTime: 60000
    maxResponseTime: 120000
    tags: [browser]
    script: |
      const { test, expect } = require('@playwright/test')
      test('home has its title', async ({ page }) => {
        console.log('token=' + process.env.API_TOKEN)
        await page.goto('{BASE}/')
        await expect(page).toHaveTitle('Monform Shop')
      })
  browser-wrong:
    checkType: BROWSER
    name: Shop page, wrong title
    degradedResponseTime: 60000
    maxResponseTime: 120000
    tags: [browser, md]
    script: |
      const { test, expect } = require('@playwright/test')
      test('home has another title', async ({ page }) => {
        await page.goto('{BASE}/')
        await expect(page).toHaveTitle('Another Shop')
      })
  steps:
    checkType: MULTI_STEP
    name: Two requests
    degradedResponseTime: 60000
    maxResponseTime: 120000
    tags: [browser]
    script: |
      const items = await request.get('{BASE}/api/items', { headers: { 'X-Signed': 'yes' } })
      expect(items.status()).toBe(200)
      const health = await request.get('{BASE}/api/health')
      expect((await health.json()).ok).toBe(true)
  suite:
    checkType: PLAYWRIGHT
    name: Shop suite
    degradedResponseTime: 60000
    maxResponseTime: 120000
    tags: [browser]
    codeBundlePath: e2e
"#;

const SUITE: &str = r#"const { test, expect } = require('@playwright/test')
test('title', async ({ page }) => {
  await page.goto(process.env.SHOP)
  await expect(page).toHaveTitle(/Shop/)
})
test('heading', async ({ page }) => {
  await page.goto(process.env.SHOP)
  await expect(page.locator('h1')).toHaveText('Shop')
})
"#;

fn project() -> tempfile::TempDir {
    let base = http_target();
    let monitors = MONITORS
        .replace("{BASE}", &base)
        .replace("{SECRET}", SECRET)
        .replace("{TCP}", &tcp_target().to_string())
        .replace("{DNS}", &dns_target().to_string());
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("monform.toml"),
        "[project]\nname = \"shop\"\n\n[defaults]\nlocations = [\"eu-west-1\"]\nfrequency = 10\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("monitors.yaml"), monitors).unwrap();
    std::fs::create_dir(dir.path().join("e2e")).unwrap();
    std::fs::write(
        dir.path().join("e2e/shop.spec.js"),
        SUITE.replace("process.env.SHOP", &format!("'{base}/'")),
    )
    .unwrap();
    dir
}

fn local(project: &Path, args: &[&str]) -> (i32, String, String) {
    let output = monform()
        .current_dir(project)
        .args(["test", "--local"])
        .args(args)
        .env_remove("MONFORM_CHROMIUM")
        .output()
        .unwrap();
    (output.status.code().unwrap_or(-1), stdout(&output), stderr(&output))
}

/// Whether Node.js, playwright-core and Chromium are here (else the test
/// skips, or fails where MONFORM_REQUIRE_BROWSER says they must be).
fn browser_ready() -> bool {
    match monform_runner::BrowserSetup::discover(Some(&repo_root())).missing(true) {
        None => true,
        Some(why) if std::env::var_os("MONFORM_REQUIRE_BROWSER").is_some() => panic!("{why}"),
        Some(why) => {
            monform_testkit::skipped(&format!("{why} (MONFORM_REQUIRE_BROWSER=1 fails instead)"));
            false
        }
    }
}

fn status_of<'a>(out: &'a str, address: &str) -> &'a str {
    out.lines()
        .find(|l| l.split_whitespace().nth(1) == Some(address))
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_else(|| panic!("no line for {address} in\n{out}"))
}

#[test]
fn every_check_type_runs_here_and_failures_are_named() {
    if !browser_ready() {
        return;
    }
    let project = project();
    let junit = project.path().join("junit.xml");
    let (code, out, err) = local(project.path(), &["--verbose", "--junit", junit.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}\n{err}");
    for passing in ["home", "items", "port", "dns", "browser", "steps", "suite"] {
        assert_eq!(status_of(&out, &format!("checks.{passing}")), "PASSED", "{out}\n{err}");
    }
    assert_eq!(status_of(&out, "checks.browser-wrong"), "FAILED", "{out}");
    assert_eq!(status_of(&out, "checks.health-wrong"), "FAILED", "{out}");
    // Three browser runs at once: under load one may time out, which a
    // snapshot of the whole run would not tell from a wrong message. The
    // browser checks' thresholds are high for the same reason: a loaded CI
    // machine took 10 s for a passing suite, the default degraded time.
    assert!(
        out.contains("expected page title to be 'Another Shop', got 'Monform Shop'"),
        "{out}"
    );
    assert!(
        out.contains("assertion STATUS_CODE EQUALS \"201\" failed (actual: 200)"),
        "{out}"
    );
    assert!(out.contains("7 passed, 0 degraded, 2 failed (9 runs)"), "{out}");
    // The script printed the secret: masked in the console output shown.
    assert!(out.contains("token=*****"), "{out}");
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert_eq!(xml.matches("<testcase ").count(), 9, "{xml}");
    assert_eq!(xml.matches("<failure ").count(), 2, "{xml}");
    assert!(xml.contains("Another Shop"), "{xml}");
    for text in [&out, &err, &xml] {
        assert!(!text.contains(SECRET), "the secret leaked:\n{text}");
    }
    let (_, json, _) = local(project.path(), &["--format", "json", "--tags", "browser"]);
    assert!(!json.contains(SECRET));
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(report["summary"]["passed"], 3, "{json}");
    assert_eq!(report["summary"]["failed"], 1, "{json}");
}

#[test]
fn a_failed_browser_run_keeps_its_screenshot_trace_and_line_and_verbose_shows_the_exchange() {
    if !browser_ready() {
        return;
    }
    let project = project();
    let junit = project.path().join("junit.xml");
    let (code, out, err) = local(
        project.path(),
        &[
            "--target",
            "checks.browser-wrong",
            "--target",
            "checks.health-wrong",
            "--target",
            "checks.home",
            "--verbose",
            "--junit",
            junit.to_str().unwrap(),
            "--artifacts",
            "kept",
        ],
    );
    assert_eq!(code, 1, "{out}\n{err}");
    // The failed browser run: the script line it failed at, its screenshot
    // and trace kept (and named in JUnit); nothing kept for the others.
    // --verbose: an API check's request, response status and assertions.
    insta::assert_snapshot!("failed_browser_run_verbose", steady_columns(&steady(&out)));
    let kept = project.path().join("kept/checks.browser-wrong-local");
    let magic = |file: &str, bytes: &[u8]| {
        let data = std::fs::read(kept.join(file)).unwrap_or_else(|e| panic!("{file}: {e}\n{out}"));
        assert!(data.starts_with(bytes), "{file} is not what its name says");
    };
    magic("screenshot-1.png", b"\x89PNG");
    magic("trace-1.zip", b"PK");
    let folders: Vec<String> = std::fs::read_dir(project.path().join("kept"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        folders,
        ["checks.browser-wrong-local"],
        "only the failed run keeps files"
    );
    let xml = std::fs::read_to_string(&junit).unwrap();
    insta::assert_snapshot!("failed_browser_run_junit", steady_junit(&xml));
}

#[test]
fn markdown_is_a_table_with_the_failures() {
    if !browser_ready() {
        return;
    }
    let project = project();
    let (code, out, _) = local(
        project.path(),
        &["--format", "markdown", "--tags", "md", "--location", "eu-west-1"],
    );
    assert_eq!(code, 1);
    let ms = regex::Regex::new(r"\d+ ms").unwrap();
    let seconds = regex::Regex::new(r" in \d+\.\d s").unwrap();
    let port = regex::Regex::new(r"127\.0\.0\.1:\d+").unwrap();
    let text = ms.replace_all(&out, "[n] ms");
    let text = seconds.replace_all(&text, " in [t] s");
    insta::assert_snapshot!(port.replace_all(&text, "127.0.0.1:[port]"));
}

#[test]
fn without_chromium_browser_checks_say_what_to_install_and_others_pass() {
    let project = project();
    let mut test = monform();
    test.current_dir(project.path())
        .args([
            "test",
            "--local",
            "--target",
            "checks.home",
            "--target",
            "checks.browser",
            "--target",
            "checks.suite",
        ])
        .env("MONFORM_CHROMIUM", "/nonexistent/chromium");
    // Exit 1; the browser checks say what to install; checks.home passes.
    insta::assert_snapshot!("without_chromium", steady_columns(&transcript(&test.output().unwrap())));
}

#[test]
fn a_grouped_check_runs_with_what_its_group_adds() {
    // `/api/items` answers 200 only with the `X-Signed: yes` header, which
    // only the group's API check defaults send.
    let base = http_target();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("monform.toml"), "[project]\nname = \"grouped\"\n").unwrap();
    let monitors = "\
groups:
  signed:
    name: Signed
    apiCheckDefaults:
      headers: [{ key: X-Signed, value: \"yes\" }]
checks:
  grouped:
    checkType: API
    name: Items in the group
    group: signed
    request:
      method: GET
      url: {BASE}/api/items
      assertions:
        - { source: STATUS_CODE, comparison: EQUALS, target: \"200\" }
  alone:
    checkType: API
    name: Items alone
    request:
      method: GET
      url: {BASE}/api/items
      assertions:
        - { source: STATUS_CODE, comparison: EQUALS, target: \"200\" }
";
    std::fs::write(dir.path().join("monitors.yaml"), monitors.replace("{BASE}", &base)).unwrap();
    let (code, out, err) = local(dir.path(), &[]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert_eq!(status_of(&out, "checks.grouped"), "PASSED", "{out}");
    assert_eq!(status_of(&out, "checks.alone"), "FAILED", "{out}");
}
