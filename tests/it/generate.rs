//! Issue 49 item 4: `monform generate openapi|sitemap` writes a `forEach`
//! definition and its data file into the project (never objects): the
//! emulator's own `/openapi.json` generated, validated, planned, applied to
//! an empty plan; a changed document a small diff of the data file only; a
//! hand-edited definition left alone; a sitemap index on a loopback server.

use crate::common;

use std::path::Path;

use common::*;
use monform_testkit::targets::{HttpTarget, Reply, path_of};
use serde_json::Value;

/// A project folder with a monform.toml and nothing else.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temporary folder");
    std::fs::write(dir.path().join("monform.toml"), "[project]\nname = \"generated\"\n").expect("monform.toml");
    dir
}

/// `monform --dir DIR ARGS` against `monform serve`.
fn run(served: &Served, dir: &Path, args: &[&str]) -> std::process::Output {
    monform()
        .arg("--dir")
        .arg(dir)
        .args(["--api-url", &served.url, "--color", "never"])
        .env("MONFORM_API_KEY", served.key.as_deref().unwrap_or_default())
        .env("MONFORM_ACCOUNT_ID", &served.account)
        .args(args)
        .output()
        .expect("monform runs")
}

fn ok(output: std::process::Output) -> std::process::Output {
    assert!(output.status.success(), "{}\n{}", stdout(&output), stderr(&output));
    output
}

/// The plan's changes as `(action, address)`, sorted.
fn changes(served: &Served, dir: &Path) -> Vec<(String, String)> {
    let output = ok(run(served, dir, &["plan", "--format", "json"]));
    let plan: Value = serde_json::from_slice(&output.stdout).expect("plan JSON");
    let mut found: Vec<(String, String)> = plan["changes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            (
                c["action"].as_str().unwrap_or_default().to_owned(),
                c["address"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    found.sort();
    found
}

/// The keys of a data file's rows.
fn keys(dir: &Path, data: &str) -> Vec<String> {
    let text = std::fs::read_to_string(dir.join(data)).expect("the data file");
    let rows: Value = serde_saphyr::from_str(&text).expect("the data file reads");
    rows.as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["key"].as_str().map(str::to_owned))
        .collect()
}

const DEFINITION: &str = "generated/monitoring-api-monform-emulator.yaml";
const DATA: &str = "generated/data/monitoring-api-monform-emulator.yaml";

#[test]
fn the_emulators_openapi_document_becomes_checks_with_an_empty_plan_after_apply() {
    let db = tempfile::tempdir().expect("a folder for the database");
    let (served, _) = serve(&db.path().join("service.db"), &[]);
    let project = project();
    let dir = project.path();
    let document = format!("{}/openapi.json", served.url);

    let output = ok(run(&served, dir, &["generate", "openapi", &document]));
    let said = stderr(&output);
    assert!(said.contains(&format!("  {DEFINITION}: written")), "{said}");
    let generated = keys(dir, DATA);
    assert!(generated.len() >= 10, "{generated:?}");
    // Operations with path parameters have no example in this document.
    assert!(said.contains("path parameter `id` has no example"), "{said}");
    let data = std::fs::read_to_string(dir.join(DATA)).expect("data");
    assert!(data.contains(&format!("url: \"{}/v1/checks\"", served.url)), "{data}");

    ok(run(&served, dir, &["validate"]));
    let planned = changes(&served, dir);
    let expected: Vec<(String, String)> = generated
        .iter()
        .map(|k| {
            (
                "create".to_owned(),
                format!("checks.monitoring-api-monform-emulator[{k}]"),
            )
        })
        .collect();
    let mut expected = expected;
    expected.sort();
    assert_eq!(planned, expected);
    ok(run(&served, dir, &["apply", "--auto-approve"]));
    assert_eq!(changes(&served, dir), Vec::<(String, String)>::new());

    // The document changes: one path parameter gets an example, one
    // response a JSON Schema. Generating again from a saved copy touches
    // the data file only: one row added, one changed.
    let mut spec: Value = monform_http::blocking()
        .build()
        .expect("an HTTP client")
        .get(&document)
        .send()
        .and_then(|r| r.json())
        .expect("the document");
    let get_check = &mut spec["paths"]["/v1/checks/{id}"]["get"];
    let id = get_check["parameters"]
        .as_array_mut()
        .and_then(|ps| ps.iter_mut().find(|p| p["name"] == "id"))
        .expect("the id parameter");
    id["example"] = Value::from("1");
    let added = get_check["operationId"].as_str().expect("an operationId").to_owned();
    let locations = &mut spec["paths"]["/v1/locations"]["get"];
    let changed = locations["operationId"].as_str().expect("an operationId").to_owned();
    locations["responses"]["200"]["content"] = serde_json::json!({ "application/json": { "schema": {
        "type": "array", "minItems": 1, "items": { "type": "object" } } } });
    std::fs::write(dir.join("openapi.json"), spec.to_string()).expect("the saved copy");
    let definition = std::fs::read_to_string(dir.join(DEFINITION)).expect("definition");
    let before = std::fs::read_to_string(dir.join(DATA)).expect("data");

    let output = ok(run(
        &served,
        dir,
        &["generate", "openapi", "openapi.json", "--base-url", &served.url],
    ));
    let said = stderr(&output);
    assert!(
        said.contains(&format!("  {DATA}: updated: 1 added ({added}), 1 changed ({changed})")),
        "{said}"
    );
    assert!(said.contains(&format!("  {DEFINITION}: unchanged")), "{said}");
    assert_eq!(
        std::fs::read_to_string(dir.join(DEFINITION)).expect("definition"),
        definition
    );
    let after = std::fs::read_to_string(dir.join(DATA)).expect("data");
    let diff = similar::TextDiff::from_lines(&before, &after);
    let lines = diff
        .iter_all_changes()
        .filter(|c| c.tag() != similar::ChangeTag::Equal)
        .count();
    // The new row (5 lines and its assertion), the changed row's new
    // assertion, the skipped line gone.
    assert!(lines <= 10, "a large diff:\n{}", diff.unified_diff());
    assert_eq!(
        changes(&served, dir),
        [
            (
                "create".to_owned(),
                format!("checks.monitoring-api-monform-emulator[{added}]")
            ),
            (
                "update".to_owned(),
                format!("checks.monitoring-api-monform-emulator[{changed}]")
            ),
        ]
    );
}

/// A document of this test's own: its output snapshotted (the emulator's
/// document changes with its routes).
const SHOP: &str = r##"
openapi: 3.1.0
info: { title: Shop API, version: "1.0" }
servers: [{ url: "https://shop.example/api" }]
security: [{ bearer: [] }]
paths:
  /orders:
    get:
      operationId: listOrders
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema:
                type: object
                required: [orders, total]
                properties:
                  orders: { type: array, items: { $ref: "#/components/schemas/Order" } }
                  total: { type: integer, minimum: 0 }
  /orders/{id}:
    get:
      operationId: getOrder
      parameters: [{ name: id, in: path, required: true, schema: { type: string } }]
      responses: { "200": { description: ok } }
  /health:
    get:
      responses: { "204": { description: up } }
components:
  schemas:
    Order: { type: object }
"##;

#[test]
fn generate_says_what_it_wrote_and_leaves_an_edited_definition_alone() {
    let project = project();
    let dir = project.path();
    // Outside the project: a YAML file inside it would be read as a resource file.
    let documents = tempfile::tempdir().expect("a folder for the document");
    let shop = documents.path().join("shop.yaml");
    std::fs::write(&shop, SHOP).expect("the document");
    let spec = shop.to_str().expect("a UTF-8 path");
    let first = assert_run!(
        "openapi_first",
        monform().arg("--dir").arg(dir).args(["generate", "openapi", spec])
    );
    assert!(first.status.success());
    insta::assert_snapshot!(
        "openapi_data",
        std::fs::read_to_string(dir.join("generated/data/shop-api.yaml")).expect("data")
    );
    insta::assert_snapshot!(
        "openapi_definition",
        std::fs::read_to_string(dir.join("generated/shop-api.yaml")).expect("definition")
    );
    ok(monform()
        .arg("--dir")
        .arg(dir)
        .arg("validate")
        .output()
        .expect("validate"));

    // The user edits the definition; the document gains an example.
    edit(
        dir,
        "generated/shop-api.yaml",
        "    checkType: API\n",
        "    checkType: API\n    frequency: 1\n",
    );
    let edited = std::fs::read_to_string(dir.join("generated/shop-api.yaml")).expect("definition");
    let changed = SHOP.replace("required: true, schema:", "required: true, example: o-1, schema:");
    std::fs::write(&shop, changed).expect("the document");
    let again = assert_run!(
        "openapi_again",
        monform().arg("--dir").arg(dir).args(["generate", "openapi", spec])
    );
    assert!(again.status.success());
    assert_eq!(
        std::fs::read_to_string(dir.join("generated/shop-api.yaml")).expect("definition"),
        edited
    );
    assert_eq!(
        keys(dir, "generated/data/shop-api.yaml"),
        ["get-health", "getOrder", "listOrders"]
    );
}

#[test]
fn a_sitemap_index_on_a_loopback_server_becomes_url_checks() {
    let site = HttpTarget::start(|head| {
        let port = head
            .lines()
            .find_map(|l| l.strip_prefix("Host: ").or_else(|| l.strip_prefix("host: ")))
            .and_then(|h| h.trim().rsplit(':').next())
            .unwrap_or_default()
            .to_owned();
        let base = format!("http://127.0.0.1:{port}");
        let xml = |body: String| Reply::new("200 OK", "application/xml", body);
        match path_of(head) {
            "/sitemap.xml" => xml(format!(
                r#"<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
                <sitemap><loc>{base}/pages.xml</loc></sitemap>
                <sitemap><loc>http://other.example/elsewhere.xml</loc></sitemap>
                </sitemapindex>"#
            )),
            "/pages.xml" => xml(format!(
                r#"<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
                <url><loc>{base}/</loc></url><url><loc>{base}/about</loc></url>
                <url><loc>{base}/blog/first-post/</loc></url><url><loc>http://other.example/x</loc></url>
                </urlset>"#
            )),
            _ => Reply::new("200 OK", "text/html", "<html>page</html>"),
        }
    });
    let emulator = Emulator::start();
    let project = project();
    let dir = project.path();
    let url = format!("{}/sitemap.xml", site.url());
    let output = assert_run!("sitemap", emulator.monform(dir).args(["generate", "sitemap", &url]));
    assert!(output.status.success());
    assert!(
        !site.requests().iter().any(|r| path_of(r) == "/elsewhere.xml"),
        "followed to another host"
    );
    assert_eq!(
        keys(dir, "generated/data/127-0-0-1.yaml"),
        ["about", "blog-first-post", "home"]
    );
    ok(emulator.monform(dir).arg("validate").output().expect("validate"));
    let plan = ok(emulator
        .monform(dir)
        .args(["plan", "--format", "json"])
        .output()
        .expect("plan"));
    let plan: Value = serde_json::from_slice(&plan.stdout).expect("plan JSON");
    let created: Vec<&str> = plan["changes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["action"] == "create")
        .filter_map(|c| c["address"].as_str())
        .collect();
    assert_eq!(
        created,
        [
            "checks.127-0-0-1[about]",
            "checks.127-0-0-1[blog-first-post]",
            "checks.127-0-0-1[home]"
        ]
    );
    emulator.applied(dir);
    let again = ok(emulator
        .monform(dir)
        .args(["plan", "--detailed-exitcode"])
        .output()
        .expect("plan"));
    assert_eq!(again.status.code(), Some(0), "{}", stdout(&again));
}
