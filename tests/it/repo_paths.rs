//! Issue 46, item 1: a project in a subfolder of a git repository (a
//! monorepo). Annotations (`--format github`), SARIF, JUnit and the
//! Markdown plan name files from the repository's root (`shop/monitors/
//! health.yaml`), where GitHub attaches them, not from the project folder;
//! `--path-prefix` overrides what `.git` says. SARIF declares its base
//! (`%SRCROOT%`) and passes the SARIF 2.1.0 schema.

use std::path::Path;

use crate::common;

use common::*;
use monform_testkit::targets::{HttpTarget, Reply};

/// `monitors/health.yaml` line 5: an unknown field (`frequncy`).
const HEALTH: &str = "checks:
  health:
    checkType: URL
    name: Health
    frequncy: 5
    request:
      url: https://shop.example.com/health
";

/// A git repository (`git init`, nothing committed) holding the project
/// in `shop/`, with `health` as given.
fn monorepo(health: &str) -> tempfile::TempDir {
    let repo = tempfile::tempdir().unwrap();
    git(repo.path(), &["init", "--quiet"]);
    let shop = repo.path().join("shop");
    std::fs::create_dir_all(shop.join("monitors")).unwrap();
    std::fs::write(
        shop.join("monform.toml"),
        "[project]\nname = \"shop\"\n\n[defaults]\nlocations = [\"eu-west-1\"]\n",
    )
    .unwrap();
    std::fs::write(shop.join("monitors/health.yaml"), health).unwrap();
    std::fs::write(repo.path().join("README.md"), "other teams' files\n").unwrap();
    repo
}

/// `monform --dir shop ARGS`, run in the repository's root as a CI step is.
fn in_root(repo: &Path, args: &[&str]) -> assert_cmd::Command {
    let mut command = monform();
    command
        .current_dir(repo)
        .env_remove("MONFORM_PATH_PREFIX")
        .args(["--dir", "shop"])
        .args(args);
    command
}

#[test]
fn annotations_name_the_file_from_the_repository_root() {
    let repo = monorepo(HEALTH);
    assert_run!("github", in_root(repo.path(), &["validate", "--format", "github"]));
    // `--path-prefix` wins over `.git` (a checkout of a part of the repository).
    let output = assert_run!(
        "github_prefixed",
        in_root(
            repo.path(),
            &["--path-prefix", "services/shop", "validate", "--format", "github"]
        )
    );
    assert!(stdout(&output).contains("file=services/shop/monitors/health.yaml,line=5"));
    // From inside the project folder, too.
    let inside = monform()
        .current_dir(repo.path().join("shop"))
        .env_remove("MONFORM_PATH_PREFIX")
        .args(["validate", "--format", "github"])
        .output()
        .unwrap();
    assert!(
        stdout(&inside).starts_with("::error file=shop/monitors/health.yaml,line=5,"),
        "{}",
        stdout(&inside)
    );
}

#[test]
fn sarif_declares_its_base_and_passes_the_schema() {
    let repo = monorepo(HEALTH);
    let output = in_root(repo.path(), &["validate", "--format", "sarif"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let sarif: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    // The published schema's `language` pattern has a stray `]`, a literal
    // in ECMA 262 that Rust's regex rejects: escaped, same meaning.
    let text = std::fs::read_to_string(repo_root().join("tests/fixtures/sarif/sarif-2.1.0-rtm.5.json"))
        .unwrap()
        .replace(r#"{2}-[a-zA-Z]{2}]?$""#, r#"{2}-[a-zA-Z]{2}\\]?$""#);
    let schema: serde_json::Value = serde_json::from_str(&text).unwrap();
    let validator = jsonschema::draft4::new(&schema).unwrap_or_else(|e| panic!("the SARIF schema: {e}"));
    let errors: Vec<String> = validator
        .iter_errors(&sarif)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:?}");

    // The base is the repository's root, as a `file:` URI ending in `/`
    // (SARIF 3.14.14), and every location is relative to it.
    let run = &sarif["runs"][0];
    let root = std::fs::canonicalize(repo.path()).unwrap();
    assert_eq!(
        run["originalUriBaseIds"]["%SRCROOT%"]["uri"],
        format!("file://{}/", root.display())
    );
    let location = &run["results"][0]["locations"][0]["physicalLocation"];
    let shown = serde_json::json!({
        "originalUriBaseIds": run["originalUriBaseIds"],
        "physicalLocation": location,
    });
    let shown = serde_json::to_string_pretty(&shown)
        .unwrap()
        .replace(&root.display().to_string(), "[repository]");
    insta::assert_snapshot!("sarif_base", shown);
}

/// The Markdown plan's policy findings and JUnit's test cases name the
/// files from the repository's root too.
#[test]
fn markdown_and_junit_name_the_file_from_the_repository_root() {
    let target = HttpTarget::start(|_| Reply::new("200 OK", "text/plain", "ok"));
    let repo = monorepo(
        &HEALTH
            .replace("frequncy: 5", "frequency: 5")
            .replace("https://shop.example.com/health", &format!("{}/health", target.url())),
    );
    let shop = repo.path().join("shop");
    std::fs::create_dir_all(shop.join("policies")).unwrap();
    std::fs::copy(
        repo_root().join("examples/policies/owner_tag.rego"),
        shop.join("policies/owner_tag.rego"),
    )
    .unwrap();

    let emulator = Emulator::start();
    let plan = emulator
        .monform(&shop)
        .env_remove("MONFORM_PATH_PREFIX")
        .args(["plan", "--format", "markdown"])
        .output()
        .unwrap();
    let markdown = stdout(&plan);
    let policies = tail_from(&markdown, "### Policies");
    insta::assert_snapshot!("markdown_policies", policies);
    assert!(policies.contains("`shop/monitors/health.yaml:2:3`"), "{policies}");
    // In a GitHub Actions run, each place links to the file at the commit.
    let in_actions = emulator
        .monform(&shop)
        .args(["plan", "--format", "markdown"])
        .env("GITHUB_SERVER_URL", "https://github.com")
        .env("GITHUB_REPOSITORY", "acme/monorepo")
        .env("GITHUB_SHA", "4f2c1e0")
        .output()
        .unwrap();
    let linked = stdout(&in_actions);
    insta::assert_snapshot!("markdown_policies_linked", tail_from(&linked, "### Policies"));

    let junit = repo.path().join("junit.xml");
    let tested = in_root(repo.path(), &["test", "--local", "--junit", junit.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(tested.status.code(), Some(0), "{}{}", stdout(&tested), stderr(&tested));
    let xml = std::fs::read_to_string(&junit).unwrap();
    insta::assert_snapshot!("junit", steady_junit(&xml));
    assert!(xml.contains(r#" file="shop/monitors/health.yaml" line="2""#), "{xml}");
}
