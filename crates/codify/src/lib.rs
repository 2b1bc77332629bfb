//! `monform codify` (issue 33): the service's changes written back into the
//! project's files, as a reviewer would have written them. From a plan's
//! drift (`monform_engine::ops::drifted`) and the files as written, each
//! drifted value goes where it comes from: the resource's own line, its
//! `forEach` item's entry, a variable (`--edit-vars`), or a new field on the
//! resource when `[defaults]`, an anchor or the service's default gave it.
//! Only the edited values' text changes; everything else stays byte for
//! byte. What the files cannot say (interpolated text, `forEachFile`) is
//! listed as a hand edit, and secrets are never written.
//!
//! **Architecture invariant:** no network and no terminal: the CLI renders
//! [`Codified`]; [`write`] and [`git`] are the only writes.
//!
//! # Code map
//!
//! `monform codify` (issue 33): a plan's drift (`ops::drifted`) written into
//! the files where each value comes from. It re-reads the file of each
//! drifted resource with the loader's own parsers (`monform_config::tree`,
//! spans on every key and value, `${...}` still text) and walks the
//! definition (`locate.rs`): a value written in the resource is replaced in
//! its span only, in the style it was written (quoting, flow or block at its
//! column: `render.rs`; a YAML collection's end found from its last value or
//! closing bracket: `text.rs`); `${each.value.X}` goes to that `forEach`
//! item's entry (also through `${each.value.X:-default}`: the item's X, or
//! a new X on the item when it had none); `${var:NAME}` becomes a literal
//! with a note, or (`--edit-vars`, the variable used once in the project)
//! the `[vars]` value in monform.toml (with an environment loaded, that
//! environment's `[environments.NAME] vars`, added there if it has none);
//! a field the resource does not write (from `[defaults]`, an
//! anchor's merge or the service's default) becomes a new entry after the
//! resource's last one (YAML block or flow, TOML table or inline table). An
//! edit to a `forEach` definition is shared by its items: made once when
//! every item drifted to the same value, else a hand edit. Hand edits (with
//! why and the service's value): interpolation inside a larger string,
//! `${each.key}`, `forEachFile`, data-file items, `{ file: }` scripts,
//! anchored values (their aliases share them), a field deleted in the
//! service. Every edit is checked by parsing the edited file and reading the
//! value back at its path (alone, then all of a file together); one that
//! does not read back is a hand edit, never written (`apply.rs`, which also
//! settles the edits a `forEach`'s items share). `write` re-reads each
//! file (refusing one changed since) and writes it through
//! `monform_engine::durable`; `git.rs` commits on a new branch with the git
//! CLI (`--branch`). `unmanaged.rs` (`--include-unmanaged`): the objects
//! `ops::find_unmanaged_for` finds (the ownership rules of `import
//! --all-unmanaged`; the project's own objects never; one whose logical id
//! the files already use left out with a note), exported as new files under
//! `unmanaged/` with an `import` entry per object, so the next apply adopts
//! them; an existing file there is never replaced.
//!
//! Issue 45: with an environment loaded (`--env`), an edit is made only
//! where that environment alone reads (a definition whose `environments:`
//! names it alone, its own vars); one in a definition other environments
//! read is a hand edit, the choices said once in a note, unless
//! `--all-environments` (`Scope` in `lib.rs`). A field changed in the
//! files and in the service since the last apply (`DriftedField::conflict`)
//! is listed with its applied, service and files values, and written only
//! with `--take-service`.
//!
//! **Architecture invariant:** secrets are never written nor shown: a field
//! the plan masks, or one holding a non-public `${env:}` value, is listed by
//! address and path only. No network and no terminal: the CLI fetches
//! through `ops::plan` and renders `Codified`.

use std::collections::HashMap;
use std::path::PathBuf;

use monform_config::Loaded;
use monform_config::source::{FileId, Format};
use monform_config::tree::{Node, NodeValue, parse_toml, parse_yaml};
use monform_engine::ops::Drifted;
use monform_model::{Address, FieldPath};
use serde_json::Value;

mod apply;
pub mod git;
mod locate;
mod render;
mod text;
pub mod unmanaged;

use apply::{Planned, apply, settle_shared};
use locate::{Edit, Site, Vars, locate};

/// What to codify.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// A `${var:NAME}` used by this one resource only: change the variable
    /// in monform.toml rather than give the resource a literal.
    pub edit_vars: bool,
    /// With an environment loaded: write a value into a definition every
    /// environment reads (each changes at its next apply) rather than
    /// refuse it.
    pub all_environments: bool,
    /// Write the service's value of a field the files changed too since the
    /// last apply (a conflict), replacing the files' change.
    pub take_service: bool,
}

/// The files edited and what was not done.
#[derive(Debug, Default)]
pub struct Codified {
    /// Each edited file, before and after.
    pub files: Vec<FileChange>,
    /// Each field written, with a note when it went elsewhere than its own line.
    pub fields: Vec<Field>,
    /// Fields the files cannot take as they are: a person edits them.
    pub hand_edits: Vec<HandEdit>,
    /// Secret fields that drifted: listed, never written.
    pub secrets: Vec<Field>,
    /// Fields changed in the files and in the service since the last
    /// apply, not written (without `--take-service`): a person chooses.
    pub conflicts: Vec<ConflictField>,
    /// Objects written with an `import` entry (`--include-unmanaged`):
    /// address and remote id.
    pub adopted: Vec<(Address, String)>,
    /// What else a reviewer should know (objects left out, secrets to set).
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct FileChange {
    /// Relative to the project root, as users see it.
    pub name: String,
    pub path: PathBuf,
    pub before: String,
    pub after: String,
    /// A file that did not exist (`--include-unmanaged`).
    pub new: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    pub address: Address,
    pub path: String,
    pub note: Option<String>,
}

/// A field changed in the files and in the service since the last apply.
#[derive(Debug, Clone, PartialEq)]
pub struct ConflictField {
    pub address: Address,
    pub path: String,
    /// As the plan masks them; `applied` is `None` when the state keeps
    /// only a fingerprint of it, `service` when it is a secret.
    pub applied: Option<Value>,
    pub service: Option<Value>,
    pub files: Value,
}

#[derive(Debug, Clone, PartialEq)]
pub struct HandEdit {
    pub address: Address,
    /// `None`: the whole resource (deleted in the service).
    pub path: Option<String>,
    /// The service's value (never a secret's).
    pub service: Option<Value>,
    pub why: String,
}

impl Codified {
    pub fn has_changes(&self) -> bool {
        !self.files.is_empty()
    }

    /// The edits as one unified diff (`a/NAME`, `b/NAME`).
    pub fn diff(&self) -> String {
        self.files
            .iter()
            .map(|file| {
                similar::TextDiff::from_lines(&file.before, &file.after)
                    .unified_diff()
                    .context_radius(3)
                    .header(
                        &if file.new {
                            "/dev/null".to_owned()
                        } else {
                            format!("a/{}", file.name)
                        },
                        &format!("b/{}", file.name),
                    )
                    .to_string()
            })
            .collect()
    }
}

/// Why a file could not be written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("cannot write {name}: {source}")]
    Io {
        name: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{name} changed since it was read: run codify again")]
    Changed { name: String },
}

/// Writes every edited file, each whole or not at all (`durable`), after
/// checking none changed since it was read.
pub fn write(codified: &Codified) -> Result<(), WriteError> {
    for file in &codified.files {
        if file.new {
            if file.path.exists() {
                return Err(WriteError::Changed {
                    name: file.name.clone(),
                });
            }
            continue;
        }
        let now = std::fs::read_to_string(&file.path).map_err(|source| WriteError::Io {
            name: file.name.clone(),
            source,
        })?;
        if now != file.before {
            return Err(WriteError::Changed {
                name: file.name.clone(),
            });
        }
    }
    for file in &codified.files {
        if let Some(parent) = file.path.parent().filter(|_| file.new) {
            std::fs::create_dir_all(parent).map_err(|source| WriteError::Io {
                name: file.name.clone(),
                source,
            })?;
        }
        monform_engine::durable::write(&file.path, file.after.as_bytes()).map_err(|source| WriteError::Io {
            name: file.name.clone(),
            source,
        })?;
    }
    Ok(())
}

/// The edits that write `drifted` into the files of `loaded`.
pub fn codify(loaded: &Loaded, drifted: &[Drifted], options: &Options) -> Codified {
    let mut out = Codified::default();
    let mut trees: HashMap<FileId, Option<Node>> = HashMap::new();
    let text_of = |id: FileId| loaded.sources.get(id).text.clone();
    let project_file = loaded
        .project
        .as_ref()
        .and_then(|p| p.vars.first().or(p.defaults.first()))
        .map(|e| e.value.span.file)
        .or_else(|| (0..loaded.sources.len() as FileId).find(|id| loaded.sources.get(*id).name == "monform.toml"));
    let project_text = project_file.map(text_of);
    let project_tree = project_file
        .zip(project_text.as_deref())
        .and_then(|(id, text)| parse_toml(id, text).ok());
    // With environments declared, the one loaded: an edit made in its
    // service goes where it alone reads (see `Scope`).
    let environment = loaded
        .project
        .as_ref()
        .and_then(|p| p.environment.as_deref().map(|e| (e, p.environment_names())));
    let uses = |name: &str| -> usize {
        let whole = format!("${{var:{name}}}");
        let with_default = format!("${{var:{name}:-");
        // `$${var:NAME}` is text, not a use.
        let count = |text: &str, pattern: &str| {
            text.match_indices(pattern)
                .filter(|(at, _)| !text[..*at].ends_with('$'))
                .count()
        };
        loaded
            .sources
            .iter()
            .map(|f| count(&f.text, &whole) + count(&f.text, &with_default))
            .sum()
    };
    let no_entries = Vec::new();
    let vars = Vars {
        file: project_file.zip(project_text.as_deref()),
        tree: project_tree.as_ref(),
        entries: loaded.project.as_ref().map_or(&no_entries, |p| &p.vars),
        uses: &uses,
        edit: options.edit_vars,
        environment: environment.as_ref().map(|(e, _)| *e),
    };
    let defaults: Vec<String> = loaded
        .project
        .as_ref()
        .map(|p| p.defaults.iter().map(|e| e.key.clone()).collect())
        .unwrap_or_default();
    let mut planned: Vec<Planned> = Vec::new();
    // What to do with an edit refused in a shared definition, said once.
    let mut choices: Option<String> = None;
    for resource in drifted {
        let address = &resource.address;
        let hand = |path: Option<String>, service: Option<Value>, why: String| HandEdit {
            address: address.clone(),
            path,
            service,
            why,
        };
        if resource.deleted {
            out.hand_edits.push(hand(
                None,
                None,
                "deleted in the service: remove it from the files or apply to create it again".into(),
            ));
            continue;
        }
        let Some(desired) = loaded.desired.resources.get(address) else {
            for field in &resource.fields {
                out.hand_edits.push(hand(
                    Some(field.path.clone()),
                    field.service.clone(),
                    "not in the files".into(),
                ));
            }
            continue;
        };
        let (definition_id, item) = match address.id.split_once('[') {
            Some((id, rest)) => (id, Some(rest.trim_end_matches(']'))),
            None => (address.id.as_str(), None),
        };
        let section = address.kind.section();
        let find = |tree: &Option<Node>| -> bool {
            tree.as_ref()
                .and_then(|t| t.get(section))
                .and_then(|s| s.value.get(definition_id))
                .is_some()
        };
        // Its span's file, unless that is where its items came from (a
        // `forEach: "${var:}"` points into monform.toml): then the file
        // that defines it.
        let file = std::iter::once(desired.span.file)
            .chain(0..loaded.sources.len() as FileId)
            .find(|id| {
                let source = loaded.sources.get(*id);
                find(
                    trees
                        .entry(*id)
                        .or_insert_with(|| parse(&source.text, source.format, *id)),
                )
            })
            .unwrap_or(desired.span.file);
        let source = loaded.sources.get(file);
        let definition = trees
            .get(&file)
            .and_then(Option::as_ref)
            .and_then(|t| t.get(section))
            .and_then(|s| s.value.get(definition_id))
            .map(|d| &d.value);
        let scope = environment
            .as_ref()
            .map(|(name, all)| Scope::of(name, all, definition, options.all_environments));
        for field in &resource.fields {
            if let Some(conflict) = field.conflict.as_ref().filter(|_| !options.take_service) {
                out.conflicts.push(ConflictField {
                    address: address.clone(),
                    path: field.path.clone(),
                    applied: conflict.applied.clone(),
                    service: conflict.service.clone(),
                    files: conflict.files.clone(),
                });
                continue;
            }
            let path = FieldPath::parse(&field.path);
            let secret = desired
                .sensitive
                .iter()
                .any(|s| path.0.starts_with(&s.0) || s.0.starts_with(&path.0));
            let Some(service) = field.service.as_ref().filter(|_| !secret) else {
                // Where a person sets it: the environment variables it is read from.
                let names: Vec<String> = desired
                    .env_reads
                    .iter()
                    .filter(|(p, _)| p.0.starts_with(&path.0) || path.0.starts_with(&p.0))
                    .flat_map(|(_, names)| names.iter().map(|n| format!("${{env:{n}}}")))
                    .collect();
                out.secrets.push(Field {
                    address: address.clone(),
                    path: field.path.clone(),
                    note: (!names.is_empty()).then(|| format!("read from {}", names.join(", "))),
                });
                continue;
            };
            let Some(definition) = definition else {
                out.hand_edits.push(hand(
                    Some(field.path.clone()),
                    Some(service.clone()),
                    format!("its definition was not found in {}", source.name),
                ));
                continue;
            };
            let site = Site {
                file,
                text: &source.text,
                format: source.format,
                root: vec![address.kind.section().to_owned(), definition_id.to_owned()],
                definition,
                item,
                vars: &vars,
                defaults: if address.kind == monform_model::Kind::Check {
                    &defaults
                } else {
                    &[]
                },
            };
            match locate(&site, &path, service).and_then(|edit| match &scope {
                Some(scope) => scope.allow(edit).inspect_err(|_| {
                    if choices.is_none() {
                        choices = Some(scope.choices());
                    }
                }),
                None => Ok(edit),
            }) {
                Ok(mut edit) => planned.push(Planned {
                    edit: {
                        if let Some(conflict) = &field.conflict {
                            let files = serde_json::to_string(&conflict.files).unwrap_or_default();
                            let taken =
                                format!("a conflict: the files' change ({files}) is replaced by the service's value");
                            edit.note = Some(match edit.note.take() {
                                Some(note) => format!("{taken}; {note}"),
                                None => taken,
                            });
                        }
                        if let Some(group) = group_note(loaded, &desired.resource, &path) {
                            edit.note = Some(match edit.note.take() {
                                Some(note) => format!("{note}; {group}"),
                                None => group,
                            });
                        }
                        edit
                    },
                    owners: vec![(address.clone(), field.path.clone())],
                    service: service.clone(),
                }),
                Err(why) => out
                    .hand_edits
                    .push(hand(Some(field.path.clone()), Some(service.clone()), why)),
            }
        }
    }
    out.notes.extend(choices);
    let planned = settle_shared(planned, loaded, &mut out.hand_edits);
    apply(planned, loaded, &mut out);
    out
}

/// Where an edit made in one environment's service may go: where that
/// environment alone reads (a definition limited to it by `environments:`,
/// its own `[environments.NAME] vars`), else nowhere without
/// `--all-environments`: the choices are listed instead.
struct Scope<'a> {
    name: &'a str,
    others: Vec<&'a str>,
    /// The definition is read by this environment only.
    own: bool,
    all: bool,
}

impl<'a> Scope<'a> {
    fn of(name: &'a str, all: &[&'a str], definition: Option<&Node>, write_all: bool) -> Scope<'a> {
        let limited: Option<Vec<&str>> =
            definition
                .and_then(|d| d.get("environments"))
                .and_then(|e| match &e.value.value {
                    NodeValue::Seq(items) => items
                        .iter()
                        .map(|i| match &i.value {
                            NodeValue::Str(name) => Some(name.as_str()),
                            _ => None,
                        })
                        .collect::<Option<Vec<_>>>(),
                    _ => None,
                });
        let readers: Vec<&str> = match &limited {
            Some(names) => all.iter().copied().filter(|e| names.contains(e)).collect(),
            None => all.to_vec(),
        };
        Scope {
            name,
            others: readers.iter().copied().filter(|e| *e != name).collect(),
            own: readers.iter().all(|e| *e == name),
            all: write_all,
        }
    }

    fn allow(&self, mut edit: Edit) -> Result<Edit, String> {
        let env_vars = edit.check.len() >= 2 && edit.check[0] == "environments" && edit.check[1] == self.name;
        if self.own || env_vars {
            return Ok(edit);
        }
        let others = self.others.join(", ");
        let one = self.others.len() == 1;
        if self.all {
            let changes = if one { "changes" } else { "change" };
            let shared = format!("written for every environment: {others} {changes} too at the next apply");
            edit.note = Some(match edit.note.take() {
                Some(note) => format!("{note}; {shared}"),
                None => shared,
            });
            return Ok(edit);
        }
        let (name, verb) = (self.name, if one { "reads" } else { "read" });
        Err(format!(
            "changed in environment {name}, and {others} {verb} the same definition: not written (see the note)"
        ))
    }

    /// What to do instead, said once.
    fn choices(&self) -> String {
        let name = self.name;
        format!(
            "a value changed in environment {name} goes where {name} alone reads it: a definition limited to it \
             (`environments: [{name}]`, the shared one limited to the others), or a `${{var:NAME}}` whose value is \
             in [environments.{name}] vars (--edit-vars writes it there); --all-environments writes the shared \
             definition, for every environment"
        )
    }
}

/// A note when the check's group overrides the field: the files now say
/// the service's value for the check, and the service runs the group's.
fn group_note(loaded: &Loaded, resource: &monform_model::Resource, path: &FieldPath) -> Option<String> {
    let monform_model::Resource::Check(check) = resource else {
        return None;
    };
    let group_id = check.common().group.as_ref()?;
    let group = loaded
        .desired
        .resources
        .get(&Address::new(monform_model::Kind::Group, group_id.as_str()))?;
    let Some(monform_model::Segment::Key(field)) = path.segments().first() else {
        return None;
    };
    monform_model::group_rules::group_overrides(&group.resource.to_json(), field)
        .then(|| format!("group `{group_id}` sets {field} too: the service runs the group's value"))
}

fn parse(text: &str, format: Format, file: FileId) -> Option<Node> {
    match format {
        Format::Yaml => parse_yaml(file, text).ok(),
        Format::Toml => parse_toml(file, text).ok(),
        // Policies hold no resources.
        Format::Rego => None,
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod environment_tests;
