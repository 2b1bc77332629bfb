//! `monform lsp` against the service (issue 31 items 3, 5 and 6): live
//! facts in hover, rename then plan, the code actions the plan feeds.

use crate::common::lsp::{CHECKS, Client, GROUPS, at, code_actions, hover_text, project, range_of, write};

/// Item 3: hover on a field shows its documentation; on an applied check,
/// what the service holds (remote id, drift) once the background refresh
/// has read it; never a secret value nor the API key.
#[test]
fn hover_shows_field_docs_and_live_facts() {
    use crate::common::Monform;
    use crate::common::lsp::position_of;
    const SECRET: &str = "lsp-secret-value-9731";
    let emulator = crate::common::Emulator::start();
    let dir = project();
    write(
        dir.path(),
        "monitors/variables.yaml",
        "variables:\n  API_TOKEN: { value: \"${env:LSP_TOKEN}\", secret: true }\n",
    );
    let applied = emulator
        .monform(dir.path())
        .env("LSP_TOKEN", SECRET)
        .args(["apply", "--auto-approve"])
        .output()
        .expect("apply runs");
    assert!(applied.status.success(), "{}", crate::common::stderr(&applied));
    // Changed outside monform: drift.
    let checks_listed = emulator.call("GET", "/v1/checks?limit=100", None);
    let id = checks_listed[0]["id"].as_str().expect("an id").to_owned();
    emulator.call(
        "PUT",
        &format!("/v1/checks/api/{id}"),
        Some(serde_json::json!({"frequency": 30})),
    );

    let url = emulator.url();
    let key = emulator.server.api_key.clone();
    let account = emulator.server.account_id.clone();
    let mut client = Client::start(&[
        ("MONFORM_API_URL", url.as_str()),
        ("MONFORM_API_KEY", key.as_str()),
        ("MONFORM_ACCOUNT_ID", account.as_str()),
        ("LSP_TOKEN", SECRET),
    ]);
    let checks = client.open(&dir.path().join("monitors/checks.yaml"));

    let field = hover_text(&mut client, &checks, position_of(CHECKS, "frequency", 0, 2));
    insta::assert_snapshot!("hover_field", field);

    let started = std::time::Instant::now();
    let live = loop {
        let text = hover_text(&mut client, &checks, position_of(CHECKS, "homepage", 0, 1));
        if text.contains("In the service") || started.elapsed() > std::time::Duration::from_secs(30) {
            break text;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    };
    // How long ago the service was read varies under load.
    let ago = regex::Regex::new(r"read [0-9]+ s ago").unwrap();
    insta::assert_snapshot!("hover_live", ago.replace(&live.replace(&id, "[id]"), "read [n] s ago"));

    let variables = client.open(&dir.path().join("monitors/variables.yaml"));
    let text = std::fs::read_to_string(dir.path().join("monitors/variables.yaml")).expect("text");
    let variable = hover_text(&mut client, &variables, position_of(&text, "API_TOKEN", 0, 1));
    insta::assert_snapshot!("hover_variable", ago.replace(&variable, "read [n] s ago"));
    for shown in [&live, &variable, &field] {
        assert!(!shown.contains(SECRET), "{shown}");
        assert!(!shown.contains(&key), "{shown}");
    }
}

/// Item 5: renaming a check from its definition and a group from a
/// reference renames every occurrence and appends the `moved` entries;
/// written to disk, the plan moves both objects and deletes nothing.
#[test]
fn rename_edits_every_file_and_plans_a_move() {
    use crate::common::Monform;
    use crate::common::lsp::{apply_edit, position_of};
    let emulator = crate::common::Emulator::start();
    let dir = project();
    emulator.applied(dir.path());

    let mut client = Client::start(&[]);
    let checks = client.open(&dir.path().join("monitors/checks.yaml"));
    let prepared =
        client.request::<lsp_types::request::PrepareRenameRequest>(at(&checks, position_of(CHECKS, "homepage", 0, 2)));
    assert_eq!(
        prepared,
        Some(lsp_types::PrepareRenameResponse::RangeWithPlaceholder {
            range: range_of(CHECKS, "homepage", 0),
            placeholder: "homepage".into()
        })
    );
    let rename = |client: &mut Client, needle: &str, to: &str| {
        client
            .request::<lsp_types::request::Rename>(lsp_types::RenameParams {
                text_document_position: at(&checks, position_of(CHECKS, needle, 0, 1)),
                new_name: to.into(),
                work_done_progress_params: Default::default(),
            })
            .expect("an edit")
    };
    let check_edit = rename(&mut client, "homepage", "home");
    let group_edit = rename(&mut client, "production", "prod");
    let mut files: Vec<String> = group_edit
        .changes
        .iter()
        .flatten()
        .map(|(uri, edits)| format!("{} {}", uri.path().rsplit('/').next().unwrap_or_default(), edits.len()))
        .collect();
    files.sort();
    // groups.yaml: the definition and the moved entry; checks.yaml: the reference.
    assert_eq!(files, ["checks.yaml 1", "groups.yaml 2"]);
    apply_edit(&check_edit);
    apply_edit(&group_edit);
    let groups = std::fs::read_to_string(dir.path().join("monitors/groups.yaml")).expect("groups");
    insta::assert_snapshot!("renamed_groups_yaml", groups);
    let checks_text = std::fs::read_to_string(dir.path().join("monitors/checks.yaml")).expect("checks");
    insta::assert_snapshot!("renamed_checks_yaml", checks_text);

    let planned = emulator
        .monform(dir.path())
        .args(["plan", "--format", "json"])
        .output()
        .expect("plan runs");
    assert!(planned.status.success(), "{}", crate::common::stderr(&planned));
    let plan: serde_json::Value = serde_json::from_slice(&planned.stdout).expect("a JSON plan");
    let mut actions: Vec<String> = plan["changes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            format!(
                "{} {}",
                c["action"].as_str().unwrap_or_default(),
                c["address"].as_str().unwrap_or_default()
            )
        })
        .collect();
    actions.sort();
    assert_eq!(actions, ["move checks.home", "move groups.prod"], "{plan:#}");
}

/// Item 6 against the service: a group renamed by hand gets "add a moved
/// entry", a field changed outside monform "ignore its drift"; with both
/// written, the plan only moves the group.
#[test]
fn moved_and_ignore_drift_actions_come_from_the_plan() {
    use crate::common::Monform;
    use crate::common::lsp::{apply_edit, position_of};
    let emulator = crate::common::Emulator::start();
    let dir = project();
    emulator.applied(dir.path());
    let listed = emulator.call("GET", "/v1/checks?limit=100", None);
    let id = listed[0]["id"].as_str().expect("an id").to_owned();
    emulator.call(
        "PUT",
        &format!("/v1/checks/api/{id}"),
        Some(serde_json::json!({"frequency": 30})),
    );
    let groups_text = GROUPS.replace("production:", "prod:");
    let checks_text = CHECKS.replace("group: production", "group: prod");
    write(dir.path(), "monitors/groups.yaml", &groups_text);
    write(dir.path(), "monitors/checks.yaml", &checks_text);

    let url = emulator.url();
    let key = emulator.server.api_key.clone();
    let account = emulator.server.account_id.clone();
    let mut client = Client::start(&[
        ("MONFORM_API_URL", url.as_str()),
        ("MONFORM_API_KEY", key.as_str()),
        ("MONFORM_ACCOUNT_ID", account.as_str()),
    ]);
    let checks = client.open(&dir.path().join("monitors/checks.yaml"));
    let groups = client.open(&dir.path().join("monitors/groups.yaml"));
    let started = std::time::Instant::now();
    while !hover_text(&mut client, &checks, position_of(&checks_text, "homepage", 0, 1)).contains("In the service") {
        assert!(started.elapsed() < std::time::Duration::from_secs(30), "no live facts");
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let at_group = range_of(&groups_text, "prod", 0);
    let moved = code_actions(&mut client, &groups, at_group, Vec::new());
    let titles: Vec<&str> = moved.iter().map(|a| a.title.as_str()).collect();
    assert_eq!(
        titles,
        ["Add `moved: { from: groups.production, to: groups.prod }` (keep the object and its results)"]
    );
    let at_frequency = range_of(&checks_text, "frequency", 0);
    let ignore = code_actions(&mut client, &checks, at_frequency, Vec::new());
    let titles: Vec<&str> = ignore.iter().map(|a| a.title.as_str()).collect();
    assert_eq!(titles, ["Ignore drift of `frequency` (lifecycle.ignoreChanges)"]);
    for action in moved.iter().chain(&ignore) {
        apply_edit(action.edit.as_ref().expect("an edit"));
    }
    let planned = emulator
        .monform(dir.path())
        .args(["plan", "--format", "json"])
        .output()
        .expect("plan runs");
    assert!(planned.status.success(), "{}", crate::common::stderr(&planned));
    let plan: serde_json::Value = serde_json::from_slice(&planned.stdout).expect("a JSON plan");
    let actions: Vec<String> = plan["changes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            format!(
                "{} {}",
                c["action"].as_str().unwrap_or_default(),
                c["address"].as_str().unwrap_or_default()
            )
        })
        .collect();
    assert_eq!(actions, ["move groups.prod"], "{plan:#}");
}

/// Issue 44: live facts open the project as the CLI does (`ops::open`),
/// so the editor reads `MONFORM_RATE_LIMIT` too: a malformed one is the
/// reason hover gives, before any request (the language server used to
/// resolve the API itself and ignore it).
#[test]
fn live_facts_read_the_rate_limit_as_the_cli_does() {
    use crate::common::lsp::position_of;
    let dir = project();
    let mut client = Client::start(&[
        ("MONFORM_API_URL", "http://127.0.0.1:9"),
        ("MONFORM_API_KEY", "lsp-test-key"),
        ("MONFORM_RATE_LIMIT", "fast"),
    ]);
    let checks = client.open(&dir.path().join("monitors/checks.yaml"));
    let started = std::time::Instant::now();
    let text = loop {
        let text = hover_text(&mut client, &checks, position_of(CHECKS, "homepage", 0, 1));
        if text.contains("live facts unavailable") || started.elapsed() > std::time::Duration::from_secs(30) {
            break text;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    assert!(
        text.contains("live facts unavailable: MONFORM_RATE_LIMIT: `fast` is not N/SECS"),
        "{text}"
    );
    assert!(!text.contains("lsp-test-key"), "{text}");
}
