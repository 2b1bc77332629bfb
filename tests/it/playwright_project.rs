//! A PLAYWRIGHT check that points at an existing Playwright project (issue
//! 49.3), end to end: `examples/playwright-suite` (TypeScript, two
//! projects, three fixtures files, globalSetup writing a storageState), left
//! as it is, run by `monform test --local` with `@playwright/test` against
//! a shop served on a loopback port, each test reported, a failure's line
//! and trace kept; then bundled by `plan`/`apply` into the emulator, where a
//! changed spec is an update of the checks that run it and nothing else. A
//! generated suite of 50 specs is adopted the same way, with its timing
//! printed. Without Node.js, @playwright/test and Chromium the tests that
//! run the suite skip, unless MONFORM_REQUIRE_BROWSER is set.

use crate::common;

use std::path::Path;
use std::time::Instant;

use common::*;
use monform_testkit::targets::{HttpTarget, Reply, path_of};

/// The shop the example's specs visit: `/` lists two products, `/account`
/// names the customer whose session cookie globalSetup stored.
fn shop() -> HttpTarget {
    HttpTarget::start(|head| {
        let request = head.to_lowercase();
        match path_of(&request) {
            "/" => Reply::new(
                "200 OK",
                "text/html",
                "<html><head><title>Monform Shop</title></head><body><h1>Shop</h1>\
                 <ul><li>Green tea</li><li>Blue mug</li></ul></body></html>",
            ),
            "/account" if request.contains("session=ada-session") => Reply::new(
                "200 OK",
                "text/html",
                "<html><head><title>Account</title></head><body><p id=\"customer\">Ada</p></body></html>",
            ),
            "/account" => Reply::new("401 Unauthorized", "text/html", "<p id=\"customer\">nobody</p>"),
            _ => Reply::new("404 Not Found", "text/plain", "no"),
        }
    })
}

/// Whether Node.js, playwright-core, @playwright/test and Chromium are
/// here (else the test skips, or fails under MONFORM_REQUIRE_BROWSER).
fn browser_ready() -> bool {
    let setup = monform_runner::BrowserSetup::discover(Some(&repo_root()));
    let missing = setup.missing(true).or_else(|| {
        let runner = setup.node_modules.as_ref()?.join("@playwright/test/cli.js");
        (!runner.is_file()).then(|| "@playwright/test (npm ci in node/)".to_owned())
    });
    match missing {
        None => true,
        Some(why) if std::env::var_os("MONFORM_REQUIRE_BROWSER").is_some() => panic!("{why}"),
        Some(why) => {
            monform_testkit::skipped(&format!("{why} (MONFORM_REQUIRE_BROWSER=1 fails instead)"));
            false
        }
    }
}

/// The example, its checks pointed at `shop`.
fn example(shop: &HttpTarget) -> tempfile::TempDir {
    let project = copy_example("playwright-suite");
    let file = project.path().join("monitors/e2e.yaml");
    let text = std::fs::read_to_string(&file).unwrap();
    assert_eq!(text.matches("http://127.0.0.1:8080").count(), 2, "{text}");
    std::fs::write(&file, text.replace("http://127.0.0.1:8080", &shop.url())).unwrap();
    project
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

fn status_of<'a>(out: &'a str, address: &str) -> &'a str {
    out.lines()
        .find(|l| l.split_whitespace().nth(1) == Some(address))
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_else(|| panic!("no line for {address} in\n{out}"))
}

#[test]
fn the_example_project_runs_locally_each_test_reported_a_failure_with_its_line_and_trace() {
    if !browser_ready() {
        return;
    }
    let shop = shop();
    let project = example(&shop);
    let source =
        |file: &str| std::fs::read_to_string(repo_root().join("examples/playwright-suite").join(file)).unwrap();
    let (code, out, err) = local(project.path(), &["--verbose"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(status_of(&out, "checks.shop-e2e"), "PASSED", "{out}");
    assert_eq!(status_of(&out, "checks.shop-smoke"), "PASSED", "{out}");
    // 5 tests in each of the 2 projects; the smoke check: 2 tests, desktop only.
    assert!(out.contains("tests: 10 passed, 0 failed"), "{out}");
    assert!(out.contains("tests: 2 passed, 0 failed"), "{out}");
    for test in [
        "[desktop] tests/home.spec.ts:3 › home page has the shop title @smoke",
        "[mobile] tests/account.spec.ts:3 › the signed-in customer sees their name",
        "[mobile] tests/products.spec.ts:6 › products › lists Blue mug",
    ] {
        assert!(out.contains(&format!("passed  {test}")), "{test}:\n{out}");
    }
    // The project's files were run, not changed: no storageState left in it.
    assert!(!project.path().join("e2e/.auth").exists());

    edit(
        project.path(),
        "e2e/tests/home.spec.ts",
        "toHaveTitle('Monform Shop')",
        "toHaveTitle('Another Shop')",
    );
    // A failed run is made again at once by default (`doubleCheck`): the
    // ten tests a second time, to the same failure (the files an earlier
    // attempt leaves are test_local's failed browser run's to prove).
    edit(
        project.path(),
        "monitors/e2e.yaml",
        "    tags: [e2e]\n",
        "    tags: [e2e]\n    doubleCheck: false\n",
    );
    let artifacts = project.path().join("artifacts");
    // The failure of the whole suite is what is looked at: the smoke check
    // (the same spec, run above) is left out of this run.
    let (code, out, err) = local(
        project.path(),
        &["--artifacts", "artifacts", "--target", "checks.shop-e2e"],
    );
    assert_eq!(code, 1, "{out}\n{err}");
    assert_eq!(status_of(&out, "checks.shop-e2e"), "FAILED", "{out}");
    assert!(
        out.contains("at tests/home.spec.ts:4: await expect(shop.page).toHaveTitle('Another Shop');"),
        "{out}"
    );
    assert!(out.contains("tests: 8 passed, 2 failed"), "{out}");
    assert!(
        out.contains("FAILED  [desktop] tests/home.spec.ts:3 › home page has the shop title @smoke"),
        "{out}"
    );
    let kept: Vec<String> = walk(&artifacts);
    assert!(
        kept.iter()
            .any(|f| f.starts_with("checks.shop-e2e-") && f.ends_with("trace-1.zip")),
        "{kept:?}"
    );
    assert!(out.contains("): artifacts/checks.shop-e2e-local/trace-1.zip"), "{out}");
    // The example itself is untouched by the runs.
    assert!(source("e2e/tests/home.spec.ts").contains("toHaveTitle('Monform Shop')"));
}

/// Files below `dir`, relative, with `/`.
fn walk(dir: &Path) -> Vec<String> {
    fn visit(root: &Path, dir: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                visit(root, &path, out);
            } else {
                out.push(path.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/"));
            }
        }
    }
    let mut out = Vec::new();
    visit(dir, dir, &mut out);
    out.sort();
    out
}

/// Whether a line of a plan's text diff adds (`+`) or removes (`-`) `text`.
fn diff_line(out: &str, sign: char, text: &str) -> bool {
    out.lines()
        .filter_map(|l| l.trim_start().strip_prefix(sign))
        .any(|l| l.trim_start() == text)
}

fn plan(emulator: &Emulator, project: &Path) -> String {
    let output = emulator.monform(project).args(["plan"]).output().unwrap();
    assert!(output.status.success(), "{}\n{}", stdout(&output), stderr(&output));
    stdout(&output)
}

#[test]
fn plan_bundles_the_project_and_a_changed_spec_is_an_update() {
    let emulator = Emulator::start();
    let project = copy_example("playwright-suite");
    let out = plan(&emulator, project.path());
    assert!(out.contains("Plan: 3 to create, 0 to update"), "{out}");
    assert!(out.contains("codeBundle.sha256"), "{out}");
    emulator.applied(project.path());
    let check = check_named(&emulator, "Shop end to end");
    assert_eq!(check["playwright"]["config"], "playwright.config.ts", "{check}");
    let files: Vec<&str> = check["codeBundle"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        files,
        [
            "fixtures/data.ts",
            "fixtures/pages.ts",
            "fixtures/shop.ts",
            "global-setup.ts",
            "package-lock.json",
            "package.json",
            "playwright.config.ts",
            "tests/account.spec.ts",
            "tests/home.spec.ts",
            "tests/products.spec.ts",
        ]
    );
    let out = plan(&emulator, project.path());
    assert!(out.contains("No changes."), "{out}");

    // One spec edited: both checks run it, so both change; the plan shows
    // the bundle's new hash and the spec's lines.
    edit(
        project.path(),
        "e2e/tests/home.spec.ts",
        "toHaveText('Shop')",
        "toHaveText('The Shop')",
    );
    let out = plan(&emulator, project.path());
    assert!(out.contains("Plan: 0 to create, 2 to update, 0 to delete"), "{out}");
    assert!(out.contains("path = \"tests/home.spec.ts\""), "{out}");
    assert!(
        diff_line(&out, '-', "await expect(shop.heading).toHaveText('Shop');"),
        "{out}"
    );
    assert!(
        diff_line(&out, '+', "await expect(shop.heading).toHaveText('The Shop');"),
        "{out}"
    );
    emulator.applied(project.path());
    assert!(plan(&emulator, project.path()).contains("No changes."));

    // A build artefact or a storageState globalSetup wrote is no change.
    std::fs::create_dir_all(project.path().join("e2e/.auth")).unwrap();
    std::fs::write(project.path().join("e2e/.auth/customer.json"), "{}").unwrap();
    std::fs::create_dir_all(project.path().join("e2e/test-results/x")).unwrap();
    std::fs::write(project.path().join("e2e/test-results/x/a.spec.ts"), "").unwrap();
    assert!(plan(&emulator, project.path()).contains("No changes."));
}

#[test]
fn a_config_or_import_outside_the_project_is_refused_with_its_place() {
    let project = copy_example("playwright-suite");
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("steal.ts"), "export const x = 1;\n").unwrap();
    let link = outside.path().join("steal").to_string_lossy().into_owned();
    edit(
        project.path(),
        "e2e/tests/account.spec.ts",
        "import { test, expect } from '../fixtures/shop';",
        &format!(
            "import {{ test, expect }} from '../fixtures/shop';\nimport {{ x }} from '../../../../../../../..{link}';"
        ),
    );
    let output = monform()
        .args(["validate", "--dir"])
        .arg(project.path())
        .output()
        .unwrap();
    let err = stderr(&output);
    assert!(!output.status.success());
    assert!(err.contains("tests/account.spec.ts:2: import"), "{err}");
    assert!(err.contains("is outside the project"), "{err}");
    assert!(err.contains("monitors/e2e.yaml"), "{err}");
}

/// A Playwright project of 50 specs sharing 3 fixtures files, as a team
/// has it: one check adopts it with no edit of its files.
fn fifty_specs(root: &Path) {
    let write = |path: &str, text: String| {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        "monform.toml",
        "[project]\nname = \"fifty\"\n\n[defaults]\nlocations = [\"eu-west-1\"]\nfrequency = 10\n".into(),
    );
    write(
        "monitors/suite.yaml",
        "checks:\n  suite:\n    checkType: PLAYWRIGHT\n    name: Fifty specs\n    maxResponseTime: 300000\n    \
         degradedResponseTime: 240000\n    environmentVariables:\n      - key: SHOP_URL\n        value: SHOP\n    \
         playwright:\n      config: ../web/playwright.config.ts\n      project: chromium\n"
            .into(),
    );
    write(
        "web/playwright.config.ts",
        "import { defineConfig, devices } from '@playwright/test';\nexport default defineConfig({\n  testDir: './e2e',\n  \
         fullyParallel: true,\n  use: { baseURL: process.env.SHOP_URL },\n  projects: [\n    \
         { name: 'chromium', use: { ...devices['Desktop Chrome'] } },\n    \
         { name: 'firefox', use: { ...devices['Desktop Firefox'] } },\n  ],\n});\n"
            .into(),
    );
    write(
        "web/support/data.ts",
        "export const titles = { home: 'Monform Shop' };\n".into(),
    );
    write(
        "web/support/pages.ts",
        "import type { Page } from '@playwright/test';\nexport const home = (page: Page) => page.goto('/');\n".into(),
    );
    write(
        "web/support/fixtures.ts",
        "import { test as base, expect } from '@playwright/test';\nimport { home } from './pages';\n\
         export const test = base.extend<{ opened: void }>({ opened: async ({ page }, use) => { await home(page); await use(); } });\n\
         export { expect };\n"
            .into(),
    );
    for n in 1..=50 {
        write(
            &format!("web/e2e/area{}/page-{n:02}.spec.ts", n % 5),
            format!(
                "import {{ test, expect }} from '../../support/fixtures';\nimport {{ titles }} from '../../support/data';\n\n\
                 test('page {n} shows the shop', async ({{ page, opened }}) => {{\n  await expect(page).toHaveTitle(titles.home);\n}});\n"
            ),
        );
    }
    write(
        "web/package.json",
        "{ \"devDependencies\": { \"@playwright/test\": \"1.65.1\" } }\n".into(),
    );
}

#[test]
fn fifty_specs_are_adopted_unedited_and_one_changed_spec_is_one_update() {
    let emulator = Emulator::start();
    let dir = tempfile::tempdir().unwrap();
    fifty_specs(dir.path());
    let started = Instant::now();
    let out = plan(&emulator, dir.path());
    let planned = started.elapsed();
    assert!(out.contains("Plan: 1 to create, 0 to update"), "{out}");
    let started = Instant::now();
    emulator.applied(dir.path());
    let applied = started.elapsed();
    let check = check_named(&emulator, "Fifty specs");
    // 50 specs, 3 fixtures files, the config, package.json.
    assert_eq!(
        check["codeBundle"]["files"].as_array().map(Vec::len),
        Some(55),
        "{check}"
    );
    let started = Instant::now();
    assert!(plan(&emulator, dir.path()).contains("No changes."));
    let replanned = started.elapsed();

    edit(
        dir.path(),
        "web/e2e/area2/page-17.spec.ts",
        "page 17 shows",
        "page 17 still shows",
    );
    let out = plan(&emulator, dir.path());
    assert!(out.contains("Plan: 0 to create, 1 to update, 0 to delete"), "{out}");
    assert!(out.contains("path = \"e2e/area2/page-17.spec.ts\""), "{out}");
    assert!(
        diff_line(
            &out,
            '+',
            "test('page 17 still shows the shop', async ({ page, opened }) => {"
        ),
        "{out}"
    );
    assert!(
        diff_line(
            &out,
            '-',
            "test('page 17 shows the shop', async ({ page, opened }) => {"
        ),
        "{out}"
    );
    assert!(
        out.contains("(54 unchanged items hidden)"),
        "only the changed spec is shown:\n{out}"
    );
    eprintln!(
        "50 specs adopted: plan {} ms, apply {} ms, plan after apply {} ms",
        planned.as_millis(),
        applied.as_millis(),
        replanned.as_millis()
    );

    if !browser_ready() {
        return;
    }
    let shop = shop();
    edit(
        dir.path(),
        "monitors/suite.yaml",
        "value: SHOP",
        &format!("value: {}", shop.url()),
    );
    let started = Instant::now();
    let (code, out, err) = local(dir.path(), &["--verbose"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("tests: 50 passed, 0 failed"), "{out}");
    // The config's Firefox project is left out: only Chromium is here.
    assert!(!out.contains("[firefox]"), "{out}");
    eprintln!("50 specs run by test --local in {} ms", started.elapsed().as_millis());
}

/// An ES-module project (`"type": "module"`, an `.mjs` config, specs that
/// `import` `@playwright/test`) runs unmodified, two workers; `--format
/// json` gives each Playwright test as a result of its own, a failed one
/// with the `file:line` where it failed.
#[test]
fn an_es_module_project_runs_and_json_reports_each_test() {
    if !browser_ready() {
        return;
    }
    let shop = shop();
    let project = tempfile::tempdir().unwrap();
    let files = [
        ("monform.toml", "[project]\nname = \"esm\"\n".to_owned()),
        (
            "monitors/suite.yaml",
            format!(
                "checks:\n  esm-suite:\n    checkType: PLAYWRIGHT\n    name: ESM suite\n    degradedResponseTime: 60000\n    maxResponseTime: 120000\n    environmentVariables:\n      - {{ key: SHOP_URL, value: \"{}\" }}\n    playwright:\n      config: ../suite/playwright.config.mjs\n",
                shop.url()
            ),
        ),
        ("suite/package.json", "{ \"name\": \"esm-suite\", \"private\": true, \"type\": \"module\" }\n".to_owned()),
        (
            "suite/playwright.config.mjs",
            "import { defineConfig } from '@playwright/test';\n\nexport default defineConfig({\n  testDir: './tests',\n  workers: 2,\n  use: { baseURL: process.env.SHOP_URL },\n});\n".to_owned(),
        ),
        (
            "suite/tests/shop.spec.js",
            "import { test, expect } from '@playwright/test';\n\ntest('the shop has its title', async ({ page }) => {\n  await page.goto('/');\n  await expect(page).toHaveTitle('Monform Shop');\n});\n\ntest('the shop lists a teapot', async ({ page }) => {\n  await page.goto('/');\n  await expect(page.getByText('Teapot')).toBeVisible({ timeout: 500 });\n});\n".to_owned(),
        ),
    ];
    for (path, text) in files {
        let path = project.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let (code, out, err) = local(project.path(), &["--format", "json"]);
    assert_eq!(code, 1, "one test fails: {out}\n{err}");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}\n{err}"));
    let run = &report["runs"][0];
    assert_eq!(run["address"], "checks.esm-suite", "{report:#}");
    let tests = run["tests"]
        .as_array()
        .unwrap_or_else(|| panic!("no tests: {report:#}"));
    let brief: Vec<(String, String, String, String)> = tests
        .iter()
        .map(|t| {
            assert!(t["durationMs"].as_f64().is_some(), "{t}");
            (
                t["name"].as_str().unwrap_or_default().to_owned(),
                t["status"].as_str().unwrap_or_default().to_owned(),
                format!("{}:{}", t["file"].as_str().unwrap_or_default(), t["line"]),
                t["failedAt"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    let expected = [
        ("the shop has its title", "passed", "tests/shop.spec.js:3", ""),
        (
            "the shop lists a teapot",
            "failed",
            "tests/shop.spec.js:8",
            "tests/shop.spec.js:10",
        ),
    ]
    .map(|(a, b, c, d)| (a.to_owned(), b.to_owned(), c.to_owned(), d.to_owned()));
    assert_eq!(brief, expected, "{report:#}");
    assert!(
        tests[1]["error"].as_str().is_some_and(|e| e.contains("toBeVisible")),
        "{report:#}"
    );
}
