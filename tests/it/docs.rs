//! Issue 47: the docs are tested as code. The generated reference pages
//! are current; every YAML and TOML block marked with its file name
//! (`# file: PATH` as its first line) validates; every transcript marked
//! `<!-- transcript ... -->` shows what monform prints; every relative link
//! and `#anchor` resolves; README's set-up commands are the ones CI runs.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::common;

use common::*;

/// Pages of docs/src/reference written by hand, not by `monform docs`.
const HAND_WRITTEN: &[&str] = &["index.md", "api-contract-notes.md"];

#[test]
fn the_committed_reference_pages_are_current() {
    let generated = tempfile::tempdir().unwrap();
    let output = monform()
        .args(["docs", "--out"])
        .arg(generated.path())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let committed = repo_root().join("docs/src/reference");
    let update = std::env::var_os("MONFORM_UPDATE_DOCS").is_some();
    let written = markdown_files(generated.path());
    assert!(written.len() > 10, "{written:?}");
    let mut stale = Vec::new();
    for relative in &written {
        let fresh = std::fs::read_to_string(generated.path().join(relative)).unwrap();
        let path = committed.join(relative);
        if std::fs::read_to_string(&path).ok().as_deref() != Some(fresh.as_str()) {
            if update {
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(&path, &fresh).unwrap();
            } else {
                stale.push(relative.display().to_string());
            }
        }
    }
    for relative in markdown_files(&committed) {
        let hand = HAND_WRITTEN.iter().any(|h| relative == Path::new(h));
        if !hand && !written.contains(&relative) {
            if update {
                std::fs::remove_file(committed.join(&relative)).unwrap();
            } else {
                stale.push(format!("{} (no longer generated)", relative.display()));
            }
        }
    }
    assert!(
        stale.is_empty(),
        "docs/src/reference is stale: {stale:?}\nrun `MONFORM_UPDATE_DOCS=1 cargo test -p monform --test it docs::`"
    );
}

/// Every `*.md` under `root`, relative to it, sorted.
fn markdown_files(root: &Path) -> BTreeSet<PathBuf> {
    let mut found = BTreeSet::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                found.insert(path.strip_prefix(root).unwrap().to_path_buf());
            }
        }
    }
    found
}

/// The Markdown the docs' tests read: the book's pages and the repository's
/// own READMEs and ARCHITECTURE.md.
fn documents() -> Vec<PathBuf> {
    let root = repo_root();
    let mut paths: Vec<PathBuf> = markdown_files(&root.join("docs/src"))
        .into_iter()
        .map(|p| root.join("docs/src").join(p))
        .collect();
    for extra in [
        "README.md",
        "ARCHITECTURE.md",
        "crates/README.md",
        "crates/bench/README.md",
    ] {
        paths.push(root.join(extra));
    }
    paths
}

/// A fenced block: its info string, its text, and the line it starts on.
struct Block {
    info: String,
    text: String,
    line: usize,
    /// The fence's indentation (a block in a list), taken off its lines.
    indent: usize,
    /// The HTML comment just before it, if any.
    comment: Option<String>,
}

fn blocks(markdown: &str) -> Vec<Block> {
    let mut found = Vec::new();
    let mut open: Option<Block> = None;
    let mut comment: Option<String> = None;
    let mut in_comment: Option<String> = None;
    for (n, line) in markdown.lines().enumerate() {
        let trimmed = line.trim_start();
        if let Some(block) = &mut open {
            if trimmed.starts_with("```") {
                found.push(open.take().unwrap());
            } else {
                // Indented blocks (in a list) lose the list's indentation.
                let indent = line.len() - trimmed.len();
                let keep = if indent >= block.indent {
                    &line[block.indent..]
                } else {
                    trimmed
                };
                block.text.push_str(keep);
                block.text.push('\n');
            }
            continue;
        }
        if let Some(text) = &mut in_comment {
            text.push_str(line);
            text.push('\n');
            if trimmed.contains("-->") {
                comment = in_comment.take();
            }
            continue;
        }
        if trimmed.starts_with("<!--") {
            if trimmed.contains("-->") {
                comment = Some(trimmed.to_owned());
            } else {
                in_comment = Some(format!("{trimmed}\n"));
            }
            continue;
        }
        if let Some(info) = trimmed.strip_prefix("```") {
            open = Some(Block {
                info: info.trim().to_owned(),
                text: String::new(),
                line: n + 1,
                indent: line.len() - trimmed.len(),
                comment: comment.take(),
            });
        } else if !trimmed.is_empty() {
            comment = None;
        }
    }
    found
}

impl Block {
    fn language(&self) -> &str {
        self.info.split([' ', ',']).next().unwrap_or("")
    }

    /// `PATH` of a first line `# file: PATH`.
    fn file(&self) -> Option<&str> {
        self.text.lines().next()?.strip_prefix("# file: ").map(str::trim)
    }
}

/// Every YAML and TOML block marked `# file: PATH` validates: the marked
/// blocks of one page are one project (its `monform.toml`, or a minimal one),
/// checked by `monform validate` in every environment.
#[test]
fn every_marked_example_validates() {
    let mut checked = 0;
    for document in documents() {
        let markdown = std::fs::read_to_string(&document).unwrap();
        let mut files: BTreeMap<String, (String, usize)> = BTreeMap::new();
        for block in blocks(&markdown) {
            if !matches!(block.language(), "yaml" | "toml") {
                continue;
            }
            let Some(file) = block.file() else { continue };
            let previous = files.insert(file.to_owned(), (block.text.clone(), block.line));
            assert!(
                previous.is_none(),
                "{}:{}: a second block marked `# file: {file}`",
                document.display(),
                block.line
            );
        }
        if files.is_empty() {
            continue;
        }
        let project = tempfile::tempdir().unwrap();
        if !files.contains_key("monform.toml") {
            std::fs::write(project.path().join("monform.toml"), "[project]\nname = \"docs\"\n").unwrap();
        }
        for (file, (text, _)) in &files {
            let path = project.path().join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, text).unwrap();
        }
        let output = monform()
            .args(["validate", "--dir"])
            .arg(project.path())
            .env_remove("MONFORM_ENV")
            .output()
            .unwrap();
        let places: Vec<String> = files
            .iter()
            .map(|(f, (_, line))| format!("{f} (line {line})"))
            .collect();
        assert!(
            output.status.success(),
            "{}: the examples {places:?} do not validate:\n{}",
            document.display(),
            stderr(&output)
        );
        checked += files.len();
    }
    assert!(checked >= 5, "only {checked} marked examples");
}

/// The examples of the diagnostics reference raise the code they illustrate.
#[test]
fn every_diagnostic_example_raises_its_code() {
    let mut wrong = Vec::new();
    for doc in monform_config::diagnostic::codes::CODES {
        let Some((file, text)) = doc.example else { continue };
        let project = tempfile::tempdir().unwrap();
        if file != "monform.toml" {
            std::fs::write(project.path().join("monform.toml"), "[project]\nname = \"docs\"\n").unwrap();
        }
        let path = project.path().join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        let output = monform()
            .args(["validate", "--format", "json", "--dir"])
            .arg(project.path())
            .env_remove("MONFORM_ENV")
            .env_remove("MONFORM_DOCS_UNSET_HOST")
            .output()
            .unwrap();
        let report = stdout(&output);
        let codes: Vec<&str> = report
            .lines()
            .filter_map(|l| l.trim().strip_prefix("\"code\": \""))
            .map(|l| l.trim_end_matches([',', '"']))
            .collect();
        if !codes.contains(&doc.code) {
            wrong.push(format!("{} (raised {codes:?}) {}", doc.code, stderr(&output)));
        }
    }
    assert!(
        wrong.is_empty(),
        "examples that do not raise their code:\n{}",
        wrong.join("\n")
    );
}

/// A transcript: an HTML comment `<!-- transcript` with lines `in: FOLDER`
/// (a copy of it is the working folder), `run: monform ARGS` (set-up,
/// output not shown) and `edit: FILE: "FROM" -> "TO"`, then a `text` block
/// whose `$ monform ARGS` lines run in turn, each followed by its standard
/// output (`...` stands for any lines; ids are compared redacted).
#[test]
fn every_marked_transcript_shows_what_monform_prints() {
    let mut ran = 0;
    for document in documents() {
        let markdown = std::fs::read_to_string(&document).unwrap();
        for block in blocks(&markdown) {
            let Some(comment) = block.comment.as_deref().filter(|c| c.starts_with("<!-- transcript")) else {
                continue;
            };
            let place = format!("{}:{}", document.display(), block.line);
            run_transcript(&place, comment, &block.text);
            ran += 1;
        }
    }
    assert!(ran >= 2, "only {ran} transcripts");
}

fn run_transcript(place: &str, comment: &str, text: &str) {
    let mut folder = None;
    let mut steps = Vec::new();
    for line in comment.lines().skip(1) {
        let line = line.trim();
        if let Some(name) = line.strip_prefix("in: ") {
            folder = Some(copy_dir_of(name.trim()));
        } else if line.starts_with("run: ") || line.starts_with("edit: ") {
            steps.push(line.to_owned());
        }
    }
    let folder = folder.unwrap_or_else(|| panic!("{place}: a transcript names its folder (`in: examples/...`)"));
    for step in steps {
        if let Some(command) = step.strip_prefix("run: ") {
            let output = run_monform(folder.path(), command, place);
            assert!(
                output.status.success(),
                "{place}: `{command}` failed:\n{}",
                stderr(&output)
            );
        } else if let Some(edit) = step.strip_prefix("edit: ") {
            let (file, change) = edit.split_once(": ").unwrap_or_else(|| panic!("{place}: {edit}"));
            let (from, to) = change.split_once(" -> ").unwrap_or_else(|| panic!("{place}: {edit}"));
            let unquote = |s: &str| s.trim().trim_matches('"').to_owned();
            common::edit(folder.path(), file, &unquote(from), &unquote(to));
        }
    }
    // The block: commands and what each printed.
    let mut commands: Vec<(String, Vec<String>)> = Vec::new();
    for line in text.lines() {
        if let Some(command) = line.strip_prefix("$ ") {
            commands.push((command.to_owned(), Vec::new()));
        } else if let Some((_, expected)) = commands.last_mut() {
            expected.push(line.to_owned());
        }
    }
    assert!(!commands.is_empty(), "{place}: a transcript without a `$ monform` line");
    for (command, expected) in commands {
        let output = run_monform(folder.path(), &command, place);
        let actual = redact(&stdout(&output));
        let expected = redact(&expected.join("\n"));
        assert!(
            matches_lines(&expected, &actual),
            "{place}: `{command}` printed\n{actual}\nnot what the docs show:\n{expected}"
        );
    }
}

fn copy_dir_of(name: &str) -> tempfile::TempDir {
    let name = name
        .strip_prefix("examples/")
        .unwrap_or_else(|| panic!("transcripts run in examples/: {name}"));
    let copy = copy_example(name);
    // A checkout where someone ran the example has its state: not the docs'.
    let _ = std::fs::remove_dir_all(copy.path().join(".monform"));
    copy
}

fn run_monform(folder: &Path, command: &str, place: &str) -> std::process::Output {
    let words: Vec<&str> = command.split_whitespace().collect();
    assert_eq!(
        words.first(),
        Some(&"monform"),
        "{place}: transcripts run monform only: {command}"
    );
    monform()
        .args(&words[1..])
        .current_dir(folder)
        .env_remove("MONFORM_ENV")
        .output()
        .unwrap()
}

fn redact(text: &str) -> String {
    let uuid = regex::Regex::new(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}").unwrap();
    let text = uuid.replace_all(text, "[uuid]");
    text.lines()
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join("\n")
        .trim()
        .to_owned()
}

/// Whether `actual` has `expected`'s lines, a `...` line standing for any
/// number of lines.
fn matches_lines(expected: &str, actual: &str) -> bool {
    fn walk(expected: &[&str], actual: &[&str]) -> bool {
        match expected.split_first() {
            None => actual.is_empty(),
            Some((&"...", rest)) => (0..=actual.len()).any(|skip| walk(rest, &actual[skip..])),
            Some((line, rest)) => actual.first() == Some(line) && walk(rest, &actual[1..]),
        }
    }
    let expected: Vec<&str> = expected.lines().collect();
    let actual: Vec<&str> = actual.lines().collect();
    walk(&expected, &actual)
}

/// Every relative link of the docs resolves to a file of the repository,
/// and every `#anchor` to a heading of its page (as mdBook makes ids).
#[test]
fn every_relative_link_and_anchor_resolves() {
    let link = regex::Regex::new(r"\]\(([^)\s]+)\)").unwrap();
    let mut broken = Vec::new();
    let mut checked = 0;
    for document in documents() {
        let markdown = std::fs::read_to_string(&document).unwrap();
        for (n, line) in prose_lines(&markdown) {
            for captures in link.captures_iter(&line) {
                let target = &captures[1];
                if target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                checked += 1;
                let (path, anchor) = target.split_once('#').unwrap_or((target, ""));
                let file = if path.is_empty() {
                    document.clone()
                } else {
                    document.parent().unwrap().join(path)
                };
                if !file.exists() {
                    broken.push(format!("{}:{}: {target}: no such file", document.display(), n));
                    continue;
                }
                if !anchor.is_empty() && file.extension().is_some_and(|e| e == "md") {
                    let page = std::fs::read_to_string(&file).unwrap();
                    if !anchors(&page).contains(anchor) {
                        broken.push(format!(
                            "{}:{}: {target}: no heading with that id",
                            document.display(),
                            n
                        ));
                    }
                }
            }
        }
    }
    assert!(checked > 50, "only {checked} links");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// The lines outside fenced blocks, inline code removed, with their numbers.
fn prose_lines(markdown: &str) -> Vec<(usize, String)> {
    let code = regex::Regex::new(r"`[^`]*`").unwrap();
    let mut fenced = false;
    let mut lines = Vec::new();
    for (n, line) in markdown.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            lines.push((n + 1, code.replace_all(line, "").into_owned()));
        }
    }
    lines
}

/// The ids mdBook gives a page's headings (lower case, spaces as `-`,
/// other punctuation dropped; a repeated one gets `-1`, `-2`...).
fn anchors(markdown: &str) -> BTreeSet<String> {
    let mut ids = BTreeSet::new();
    let mut fenced = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        let Some(heading) = line.strip_prefix('#') else {
            continue;
        };
        if fenced {
            continue;
        }
        let text = heading.trim_start_matches('#').trim();
        let mut id: String = text
            .chars()
            .filter_map(|c| match c {
                c if c.is_alphanumeric() || c == '_' || c == '-' => Some(c.to_ascii_lowercase()),
                ' ' => Some('-'),
                _ => None,
            })
            .collect();
        if ids.contains(&id) {
            let base = id.clone();
            let mut n = 1;
            while ids.contains(&format!("{base}-{n}")) {
                n += 1;
            }
            id = format!("{base}-{n}");
        }
        ids.insert(id);
    }
    ids
}

/// README's two set-up commands are the ones `.ci/run` runs, word for word.
#[test]
fn readme_set_up_commands_are_the_ones_ci_runs() {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).unwrap();
    let ci = std::fs::read_to_string(repo_root().join(".ci/run")).unwrap();
    let after = readme
        .split_once("The two set-up\ncommands")
        .map(|(_, rest)| rest)
        .expect("README names its two set-up commands");
    let block = blocks(after).into_iter().next().expect("a block of set-up commands");
    let commands: Vec<&str> = block.text.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(commands.len(), 2, "{commands:?}");
    for command in commands {
        assert!(ci.contains(command), ".ci/run does not run README's `{command}`");
    }
}

/// README's test command is the one `.ci/run` runs, word for word: what a
/// contributor runs is what CI runs.
#[test]
fn readme_test_command_is_the_one_ci_runs() {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).unwrap();
    let ci = std::fs::read_to_string(repo_root().join(".ci/run")).unwrap();
    let after = readme
        .split_once("Run the whole test suite")
        .map(|(_, rest)| rest)
        .expect("README says how to run the whole test suite");
    let block = blocks(after).into_iter().next().expect("a block with the test command");
    let command = block.text.trim();
    assert_eq!(command.lines().count(), 1, "one command line: {command:?}");
    assert!(
        ci.contains(command),
        ".ci/run does not run README's test command `{command}`"
    );
}

/// Every command's help is a line, and names the guide page that explains
/// it at length (a page of the book).
#[test]
fn every_command_help_is_a_line_and_names_its_guide() {
    let output = monform().arg("--help").output().unwrap();
    let help = stdout(&output);
    let commands: Vec<(String, String)> = help
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| {
            l.trim()
                .split_once(' ')
                .map(|(c, about)| (c.to_owned(), about.trim().to_owned()))
        })
        .filter(|(c, _)| c != "help")
        .collect();
    assert!(commands.len() > 15, "{help}");
    for (command, about) in commands {
        assert!(
            about.len() <= 100,
            "`monform {command}`'s help is longer than a line: {about}"
        );
        let output = monform().args([command.as_str(), "--help"]).output().unwrap();
        let text = stdout(&output);
        let guide = text
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .and_then(|l| l.strip_prefix("Guide: "))
            .unwrap_or_else(|| panic!("`monform {command} --help` names no guide page:\n{text}"));
        assert!(
            repo_root().join(guide).is_file(),
            "`monform {command} --help` names {guide}, which is missing"
        );
    }
}
