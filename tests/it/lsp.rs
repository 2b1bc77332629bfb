//! `monform lsp` end to end (issue 31): the real binary over stdio, spoken
//! to with lsp-types messages by `common::lsp::Client`.

use std::path::Path;

use lsp_types::{DiagnosticSeverity, NumberOrString};

use crate::common::lsp::{Client, range_of};

/// Checks alerting nobody are fine here: the findings' test turns it on.
const PROJECT: &str = "[project]\nname = \"editor\"\n\n[lint]\nunrouted-checks = \"off\"\n";

const GROUPS: &str = "groups:\n  production:\n    name: Production\n    locations: [eu-west-1]\n";

const CHECKS: &str = "checks:
  homepage:
    checkType: API
    name: Homepage
    group: production
    frequency: 5
    request:
      url: https://example.com
      method: GET
";

/// A project of three files in a fresh folder.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temporary folder");
    write(dir.path(), "monform.toml", PROJECT);
    write(dir.path(), "monitors/groups.yaml", GROUPS);
    write(dir.path(), "monitors/checks.yaml", CHECKS);
    dir
}

fn write(root: &Path, name: &str, text: &str) {
    let path = root.join(name);
    std::fs::create_dir_all(path.parent().expect("a folder")).expect("folder");
    std::fs::write(path, text).expect("write");
}

fn code(diagnostic: &lsp_types::Diagnostic) -> &str {
    match &diagnostic.code {
        Some(NumberOrString::String(code)) => code,
        _ => "",
    }
}

/// Item 1: a mistake typed (not saved) is reported at its range with the
/// code and help `validate` gives; a reference broken by an edit of
/// another file is re-checked; closing that file unsaved clears it.
#[test]
fn typed_mistakes_are_diagnosed_at_their_range() {
    let dir = project();
    let mut client = Client::start(&[]);
    let checks = client.open(&dir.path().join("monitors/checks.yaml"));
    assert!(client.diagnostics_until(&checks, |_| true).is_empty());

    client.edit(&checks, range_of(CHECKS, "frequency", 0), "frequncy");
    let diagnostics = client.diagnostics_until(&checks, |d| !d.is_empty());
    assert_eq!(diagnostics.len(), 1, "{diagnostics:#?}");
    let typo = &diagnostics[0];
    let typed = range_of(CHECKS, "frequency", 0);
    assert_eq!(
        (typo.range.start, typo.range.end.character),
        (typed.start, typed.start.character + 8)
    );
    assert_eq!(code(typo), "monform::invalid");
    assert_eq!(typo.severity, Some(DiagnosticSeverity::ERROR));
    assert!(
        typo.message.contains("help: did you mean `frequency`?"),
        "{}",
        typo.message
    );

    // Across files: the group renamed in the editor leaves the check's reference dangling.
    let groups = client.open(&dir.path().join("monitors/groups.yaml"));
    client.edit(&groups, range_of(GROUPS, "production", 0), "prod");
    let diagnostics = client.diagnostics_until(&checks, |d| d.iter().any(|d| code(d) == "monform::dangling-reference"));
    let dangling = diagnostics
        .iter()
        .find(|d| code(d) == "monform::dangling-reference")
        .expect("a dangling reference");
    assert_eq!(dangling.range, range_of(CHECKS, "production", 0));

    // Closed unsaved: the disk's group again.
    client.close(&groups);
    let diagnostics = client.diagnostics_until(&checks, |d| d.iter().all(|d| code(d) != "monform::dangling-reference"));
    assert_eq!(diagnostics.len(), 1, "{diagnostics:#?}");
}

/// Item 1: lint findings come as warnings, and a file that is not open
/// gets its diagnostics too (the whole project is checked).
#[test]
fn findings_and_closed_files_are_published() {
    let dir = project();
    write(dir.path(), "monform.toml", "[project]\nname = \"editor\"\n");
    write(
        dir.path(),
        "monitors/broken.yaml",
        "checks:\n  other:\n    checkType: HEARTBEAT\n    name: Other\n    heartbeat: { period: 1, periodUnit: hours, grace: 1, graceUnit: hours }\n    colour: red\n",
    );
    let mut client = Client::start(&[]);
    let checks = client.open(&dir.path().join("monitors/checks.yaml"));
    let broken = crate::common::lsp::uri(&dir.path().join("monitors/broken.yaml"));
    let diagnostics = client.diagnostics_until(&broken, |d| !d.is_empty());
    assert!(
        diagnostics.iter().any(|d| d.message.contains("colour")),
        "{diagnostics:#?}"
    );
    // The API check alerts nobody: a lint finding, a warning.
    let own = client.diagnostics_until(&checks, |d| !d.is_empty());
    assert_eq!(own.len(), 1, "{own:#?}");
    assert_eq!(code(&own[0]), "monform::unrouted-check");
    assert_eq!(own[0].severity, Some(DiagnosticSeverity::WARNING));
}

fn at(uri: &lsp_types::Url, position: lsp_types::Position) -> lsp_types::TextDocumentPositionParams {
    lsp_types::TextDocumentPositionParams::new(lsp_types::TextDocumentIdentifier::new(uri.clone()), position)
}

/// Item 4: go to definition across files, find references, the outline and
/// workspace symbols.
#[test]
fn definitions_references_and_symbols_span_files() {
    use crate::common::lsp::position_of;
    let dir = project();
    let mut client = Client::start(&[]);
    let checks = client.open(&dir.path().join("monitors/checks.yaml"));
    let groups = crate::common::lsp::uri(&dir.path().join("monitors/groups.yaml"));
    let found: Option<lsp_types::GotoDefinitionResponse> =
        client.request::<lsp_types::request::GotoDefinition>(lsp_types::GotoDefinitionParams {
            text_document_position_params: at(&checks, position_of(CHECKS, "production", 0, 3)),
            work_done_progress_params: Default::default(),
            partial_result_params: Default::default(),
        });
    let Some(lsp_types::GotoDefinitionResponse::Array(locations)) = found else {
        panic!("no definition: {found:?}");
    };
    assert_eq!(
        locations,
        vec![lsp_types::Location::new(
            groups.clone(),
            range_of(GROUPS, "production", 0)
        )]
    );

    let references = client
        .request::<lsp_types::request::References>(lsp_types::ReferenceParams {
            text_document_position: at(&groups, position_of(GROUPS, "production", 0, 0)),
            work_done_progress_params: Default::default(),
            partial_result_params: Default::default(),
            context: lsp_types::ReferenceContext {
                include_declaration: false,
            },
        })
        .expect("references");
    assert_eq!(
        references,
        vec![lsp_types::Location::new(
            checks.clone(),
            range_of(CHECKS, "production", 0)
        )]
    );

    let outline = client.request::<lsp_types::request::DocumentSymbolRequest>(lsp_types::DocumentSymbolParams {
        text_document: lsp_types::TextDocumentIdentifier::new(checks.clone()),
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
    });
    let Some(lsp_types::DocumentSymbolResponse::Flat(symbols)) = outline else {
        panic!("no outline: {outline:?}");
    };
    let names: Vec<&str> = symbols.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["checks.homepage"]);
    assert_eq!(symbols[0].location.range, range_of(CHECKS, "homepage", 0));

    let everything = client.request::<lsp_types::request::WorkspaceSymbolRequest>(lsp_types::WorkspaceSymbolParams {
        query: "PROD".into(),
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
    });
    let Some(lsp_types::WorkspaceSymbolResponse::Flat(symbols)) = everything else {
        panic!("no symbols: {everything:?}");
    };
    let names: Vec<&str> = symbols.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["groups.production"]);
}

/// The completion list at `|` in `text` (written to `name` in the project
/// first), one `label  detail` line per item.
fn completions(client: &mut Client, root: &Path, name: &str, text: &str) -> String {
    let offset = text.find('|').expect("a cursor");
    let clean = text.replace('|', "");
    write(root, name, &clean);
    let uri = client.open(&root.join(name));
    let position = crate::common::lsp::position_of(text, "|", 0, 0);
    let answer = client.request::<lsp_types::request::Completion>(lsp_types::CompletionParams {
        text_document_position: at(&uri, position),
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
        context: None,
    });
    let items = match answer {
        Some(lsp_types::CompletionResponse::Array(items)) => items,
        Some(lsp_types::CompletionResponse::List(list)) => list.items,
        None => Vec::new(),
    };
    assert!(offset <= clean.len());
    items
        .iter()
        .map(|item| {
            let insert = item
                .insert_text
                .as_ref()
                .map(|t| format!(" (inserts {t})"))
                .unwrap_or_default();
            format!("{}{insert}  {}", item.label, item.detail.clone().unwrap_or_default())
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Item 2: completion at six places: an API check's fields, the check
/// types, a group reference, a TOML URL request's fields, a method enum
/// in TOML, a `${var:` name.
#[test]
fn completion_lists_follow_the_model() {
    let dir = project();
    write(
        dir.path(),
        "monform.toml",
        &format!("{PROJECT}\n[vars]\nbase = \"https://example.com\"\nregion = \"eu-west-1\"\n"),
    );
    let root = dir.path();
    let mut client = Client::start(&[]);
    insta::assert_snapshot!(
        "completion_api_check_fields",
        completions(
            &mut client,
            root,
            "monitors/new.yaml",
            "checks:\n  api:\n    checkType: API\n    name: Api\n    |\n"
        )
    );
    insta::assert_snapshot!(
        "completion_check_types",
        completions(
            &mut client,
            root,
            "monitors/new.yaml",
            "checks:\n  api:\n    checkType: |\n"
        )
    );
    insta::assert_snapshot!(
        "completion_group_reference",
        completions(
            &mut client,
            root,
            "monitors/new.yaml",
            "checks:\n  api:\n    checkType: HEARTBEAT\n    group: |\n"
        )
    );
    insta::assert_snapshot!(
        "completion_toml_url_request_fields",
        completions(
            &mut client,
            root,
            "monitors/new.toml",
            "[checks.site]\ncheckType = \"URL\"\nname = \"Site\"\n\n[checks.site.request]\n|\n"
        )
    );
    insta::assert_snapshot!(
        "completion_toml_method_values",
        completions(
            &mut client,
            root,
            "monitors/new.toml",
            "[checks.site]\ncheckType = \"API\"\nname = \"Site\"\n\n[checks.site.request]\nmethod = |\n"
        )
    );
    insta::assert_snapshot!(
        "completion_var_names",
        completions(
            &mut client,
            root,
            "monitors/new.yaml",
            "checks:\n  api:\n    checkType: API\n    request: { url: \"${var:|\" }\n"
        )
    );
}

fn hover_text(client: &mut Client, uri: &lsp_types::Url, position: lsp_types::Position) -> String {
    let answer = client.request::<lsp_types::request::HoverRequest>(lsp_types::HoverParams {
        text_document_position_params: at(uri, position),
        work_done_progress_params: Default::default(),
    });
    match answer.map(|h| h.contents) {
        Some(lsp_types::HoverContents::Markup(markup)) => markup.value,
        other => format!("{other:?}"),
    }
}

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
    assert!(field.contains("**frequency**"), "{field}");
    assert!(field.contains("Minutes between runs"), "{field}");
    assert!(field.contains("default: `10`"), "{field}");

    let started = std::time::Instant::now();
    let live = loop {
        let text = hover_text(&mut client, &checks, position_of(CHECKS, "homepage", 0, 1));
        if text.contains("In the service") || started.elapsed() > std::time::Duration::from_secs(30) {
            break text;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    };
    assert!(live.contains("**checks.homepage** (API)"), "{live}");
    assert!(live.contains(&format!("remote id: {id}")), "{live}");
    assert!(live.contains("drifted: frequency"), "{live}");

    let variables = client.open(&dir.path().join("monitors/variables.yaml"));
    let text = std::fs::read_to_string(dir.path().join("monitors/variables.yaml")).expect("text");
    let variable = hover_text(&mut client, &variables, position_of(&text, "API_TOKEN", 0, 1));
    assert!(variable.contains("variables.API_TOKEN"), "{variable}");
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
    let applied = emulator
        .monform(dir.path())
        .args(["apply", "--auto-approve"])
        .output()
        .expect("apply runs");
    assert!(applied.status.success(), "{}", crate::common::stderr(&applied));

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
    assert!(groups.contains("  prod:\n"), "{groups}");
    assert!(
        groups.contains("moved:\n  - { from: \"groups.production\", to: \"groups.prod\" }\n"),
        "{groups}"
    );
    let checks_text = std::fs::read_to_string(dir.path().join("monitors/checks.yaml")).expect("checks");
    assert!(
        checks_text.contains("  home:\n") && checks_text.contains("group: prod\n"),
        "{checks_text}"
    );

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

fn code_actions(
    client: &mut Client,
    uri: &lsp_types::Url,
    range: lsp_types::Range,
    diagnostics: Vec<lsp_types::Diagnostic>,
) -> Vec<lsp_types::CodeAction> {
    let answer = client.request::<lsp_types::request::CodeActionRequest>(lsp_types::CodeActionParams {
        text_document: lsp_types::TextDocumentIdentifier::new(uri.clone()),
        range,
        context: lsp_types::CodeActionContext {
            diagnostics,
            only: None,
            trigger_kind: None,
        },
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
    });
    answer
        .into_iter()
        .flatten()
        .filter_map(|a| match a {
            lsp_types::CodeActionOrCommand::CodeAction(action) => Some(action),
            lsp_types::CodeActionOrCommand::Command(_) => None,
        })
        .collect()
}

/// Item 6: a typo's diagnostic comes with its did-you-mean fix.
#[test]
fn did_you_mean_is_a_quick_fix() {
    let dir = project();
    let mut client = Client::start(&[]);
    let checks = client.open(&dir.path().join("monitors/checks.yaml"));
    client.edit(&checks, range_of(CHECKS, "frequency", 0), "frequncy");
    let diagnostics = client.diagnostics_until(&checks, |d| !d.is_empty());
    let range = diagnostics[0].range;
    let actions = code_actions(&mut client, &checks, range, diagnostics);
    let titles: Vec<&str> = actions.iter().map(|a| a.title.as_str()).collect();
    assert_eq!(titles, ["Change to `frequency`"]);
    let edits = &actions[0]
        .edit
        .as_ref()
        .and_then(|e| e.changes.as_ref())
        .expect("changes")[&checks];
    assert_eq!(edits, &vec![lsp_types::TextEdit::new(range, "frequency".into())]);
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
    let applied = emulator
        .monform(dir.path())
        .args(["apply", "--auto-approve"])
        .output()
        .expect("apply runs");
    assert!(applied.status.success(), "{}", crate::common::stderr(&applied));
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

/// Item 4: `${var:NAME}` goes to its `[vars]` entry, `{ file: }` to the script.
#[test]
fn variables_and_scripts_have_definitions() {
    use crate::common::lsp::position_of;
    let dir = project();
    let toml = format!("{PROJECT}\n[vars]\nbase = \"https://example.com\"\n");
    write(dir.path(), "monform.toml", &toml);
    write(dir.path(), "scripts/setup.js", "// setup\n");
    let snippets = "snippets:\n  setup: { name: Setup, script: { file: ../scripts/setup.js } }\nchecks:\n  site:\n    checkType: API\n    name: Site\n    request: { url: \"${var:base}/health\", method: GET }\n";
    write(dir.path(), "monitors/more.yaml", snippets);
    let mut client = Client::start(&[]);
    let more = client.open(&dir.path().join("monitors/more.yaml"));
    let definition = |client: &mut Client, position| match client.request::<lsp_types::request::GotoDefinition>(
        lsp_types::GotoDefinitionParams {
            text_document_position_params: at(&more, position),
            work_done_progress_params: Default::default(),
            partial_result_params: Default::default(),
        },
    ) {
        Some(lsp_types::GotoDefinitionResponse::Array(locations)) => locations,
        other => panic!("no definition: {other:?}"),
    };
    let var = definition(&mut client, position_of(snippets, "base}", 0, 2));
    let project_file = crate::common::lsp::uri(&dir.path().join("monform.toml"));
    assert_eq!(
        var,
        vec![lsp_types::Location::new(project_file, range_of(&toml, "base", 0))]
    );
    let script = definition(&mut client, position_of(snippets, "setup.js", 0, 1));
    let script_file = crate::common::lsp::uri(&dir.path().join("scripts/setup.js"));
    assert_eq!(script.len(), 1, "{script:?}");
    assert_eq!(
        script[0].uri.to_file_path().ok().and_then(|p| p.canonicalize().ok()),
        script_file.to_file_path().ok().and_then(|p| p.canonicalize().ok())
    );
}
