//! `monform lsp` end to end (issue 31): the real binary over stdio, spoken
//! to with lsp-types messages by `common::lsp::Client`. Those against the
//! service are in `lsp_live.rs`.

mod frames;

use std::path::Path;

use lsp_types::DiagnosticSeverity;

use crate::common::lsp::{CHECKS, Client, GROUPS, PROJECT, at, code, code_actions, project, range_of, write};

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
    insta::assert_snapshot!("typo_message", typo.message);

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
    let mut messages: Vec<&str> = diagnostics.iter().map(|d| d.message.as_str()).collect();
    messages.sort_unstable();
    insta::assert_snapshot!("broken_file_messages", messages.join("\n---\n"));
    // The API check alerts nobody: a lint finding, a warning.
    let own = client.diagnostics_until(&checks, |d| !d.is_empty());
    assert_eq!(own.len(), 1, "{own:#?}");
    assert_eq!(code(&own[0]), "monform::unrouted-check");
    assert_eq!(own[0].severity, Some(DiagnosticSeverity::WARNING));
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
