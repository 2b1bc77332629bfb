//! `forEachFile`: the files a glob matches below a resource file's folder,
//! as the items of the resources it makes, keyed by file name.

use std::path::Path;

use globset::GlobBuilder;
use monform_model::Address;

use crate::diagnostic::Diagnostic;
use crate::interpolate::Each;
use crate::paths::{OUTSIDE_HELP, PathError, Roots};
use crate::tree::{Entry, Node, NodeValue};

/// The items of a `forEachFile`: every file matching the glob (relative to
/// the resource file's folder), sorted; key = the file name without its
/// extensions made a logical id, value = the path relative to that folder.
pub(super) fn files_of(
    address: &Address,
    entry: &Entry,
    base: &Path,
    roots: &Roots,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<Each> {
    let NodeValue::Str(pattern) = &entry.value.value else {
        diagnostics.push(
            Diagnostic::new(
                "monform::for-each",
                format!(
                    "{address}.forEachFile: expected a glob pattern, found {}",
                    entry.value.type_name()
                ),
            )
            .at(entry.value.span, "here"),
        );
        return Vec::new();
    };
    let span = entry.value.span;
    let glob = match GlobBuilder::new(pattern).literal_separator(true).build() {
        Ok(glob) => glob.compile_matcher(),
        Err(e) => {
            diagnostics.push(
                Diagnostic::new(
                    "monform::for-each",
                    format!("{address}.forEachFile: invalid pattern `{pattern}`: {}", e.kind()),
                )
                .at(span, "this pattern"),
            );
            return Vec::new();
        }
    };
    // Walk only below the pattern's literal folder (`../e2e` of
    // `../e2e/**/*.js`; of a pattern without wildcards, its file's folder),
    // skipping hidden folders and dependencies as discovery does.
    let parts: Vec<&str> = pattern.split('/').collect();
    let literal = parts
        .iter()
        .take_while(|part| !part.contains(['*', '?', '[', '{']))
        .count();
    let folder = parts[..literal.min(parts.len() - 1)].join("/");
    let start = base.join(&folder);
    // The folder searched, and every symbolic link met below it, must stay
    // inside the project (or an allow-path): `../../../etc/*` reads nothing.
    match roots.resolve(&start) {
        Ok(_) | Err(PathError::NotFound) => {}
        Err(error) => {
            let shown = if folder.is_empty() { "." } else { folder.as_str() };
            diagnostics.push(
                Diagnostic::new(
                    "monform::path",
                    format!("{address}.forEachFile: {}", error.message(shown)),
                )
                .at(span, "this pattern")
                .help(OUTSIDE_HELP),
            );
            return Vec::new();
        }
    }
    let mut outside = Vec::new();
    let mut items = Vec::new();
    for file in walkdir::WalkDir::new(&start)
        .follow_links(true)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            if e.depth() > 0 && e.file_type().is_dir() && crate::discover::is_skipped_dir(e.file_name()) {
                return false;
            }
            if e.depth() > 0 && e.path_is_symlink() && !e.path().canonicalize().is_ok_and(|c| roots.contains(&c)) {
                outside.push(e.path().to_owned());
                return false;
            }
            true
        })
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
    {
        let Ok(relative) = file.path().strip_prefix(base) else {
            continue;
        };
        let relative = relative.to_string_lossy().replace('\\', "/");
        if !glob.is_match(&relative) {
            continue;
        }
        let name = file.file_name().to_string_lossy();
        let key = file_key(&name);
        if key.is_empty() {
            diagnostics.push(
                Diagnostic::new(
                    "monform::for-each",
                    format!("{address}.forEachFile: `{relative}` gives no usable key"),
                )
                .at(span, "matches it")
                .help("the key is the file name without its extensions: it needs a letter or digit"),
            );
            continue;
        }
        items.push(Each {
            key,
            key_span: span,
            value: Node::new(span, NodeValue::Str(relative)),
        });
    }
    for path in outside {
        let shown = path
            .strip_prefix(base)
            .unwrap_or(&path)
            .to_string_lossy()
            .replace('\\', "/");
        if glob.is_match(&shown) || path.is_dir() {
            diagnostics.push(
                Diagnostic::new(
                    "monform::path",
                    format!("{address}.forEachFile: `{shown}` is a symbolic link to outside the project"),
                )
                .at(span, "matches it")
                .help(OUTSIDE_HELP),
            );
        }
    }
    if items.is_empty() && !diagnostics.iter().any(|d| d.span == Some(span)) {
        diagnostics.push(
            Diagnostic::new(
                "monform::for-each",
                format!("{address}.forEachFile: `{pattern}` matches no file"),
            )
            .at(span, "no file matches")
            .help("the pattern is relative to the folder of this file"),
        );
    }
    items
}

/// `login.spec.js` -> `login`; other characters than letters, digits, `-`
/// and `_` become `-`, leading ones are dropped, at most 64 are kept.
fn file_key(name: &str) -> String {
    let stem = name.split('.').next().unwrap_or_default();
    let key: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .skip_while(|c| !c.is_ascii_alphanumeric())
        .take(64)
        .collect();
    key
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expand::FOR_EACH_FILE;
    use crate::source::Span;
    use monform_model::{Kind, is_valid_logical_id};

    #[test]
    fn globs_match_below_their_literal_folder_only() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for file in [
            "e2e/a/login.spec.js",
            "e2e/b.spec.js",
            "e2e/node_modules/x.spec.js",
            "other/c.spec.js",
        ] {
            let path = root.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "x").unwrap();
        }
        std::fs::create_dir_all(root.join("monitors")).unwrap();
        let base = root.join("monitors");
        let keys = |pattern: &str| {
            let entry = Entry {
                key: FOR_EACH_FILE.into(),
                key_span: Span::new(0, 0, 0),
                value: Node::new(Span::new(0, 0, 0), NodeValue::Str(pattern.into())),
            };
            let mut diagnostics = Vec::new();
            let roots = Roots::new(root).unwrap();
            let items = files_of(
                &Address::new(Kind::Check, "e2e"),
                &entry,
                &base,
                &roots,
                &mut diagnostics,
            );
            let found: Vec<(String, String)> = items
                .into_iter()
                .map(|e| (e.key, e.value.to_json().as_str().unwrap_or_default().to_owned()))
                .collect();
            (found, diagnostics.len())
        };
        assert_eq!(
            keys("../e2e/**/*.spec.js"),
            (
                vec![
                    ("login".into(), "../e2e/a/login.spec.js".into()),
                    ("b".into(), "../e2e/b.spec.js".into())
                ],
                0
            )
        );
        assert_eq!(keys("../e2e/b.spec.js").0.len(), 1);
        assert_eq!(keys("../nothing/*.js"), (vec![], 1));
    }

    #[test]
    fn file_keys_are_logical_ids() {
        assert_eq!(file_key("login.spec.js"), "login");
        assert_eq!(file_key("check out!.spec.ts"), "check-out-");
        assert_eq!(file_key("_x.js"), "x");
        assert_eq!(file_key(".hidden.js"), "");
        assert!(is_valid_logical_id(&file_key(&"a".repeat(100))));
    }
}
