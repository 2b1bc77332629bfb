//! Export and import: the files' form of remote objects. Objects of the
//! account become a monform project: logical ids derived from names,
//! references as logical ids, only the fields of the file schema, long
//! scripts in files of their own, secrets as `${env:NAME}`. No I/O here:
//! the CLI writes what `export` returns.

use std::collections::{BTreeMap, HashMap, HashSet};

use monform_api::Remote;
use monform_model::facts::{expand, facts, variant_of};
use monform_model::schema::schemas;
use monform_model::{Address, FieldPath, Kind, Segment};
use serde_json::{Map, Value};

mod adopt;
mod fold;
mod folded;
mod prune;
pub use adopt::{adopted_entry, adopted_state};
pub use fold::Fold;
pub use folded::Folded;
use prune::{prune, set_at};

use crate::forms::{Names, lookup};
use crate::identity::{is_ownership_tag, remote_owner, uses_tags};
use crate::ownership::{Owner, Owners, is_record};
use crate::state::State;

/// How resource files are split.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SplitBy {
    /// One file per kind (`checks.yaml`, `groups.yaml`...).
    #[default]
    Kind,
    /// Checks with their group in `groups/<group>.yaml`; the rest per kind.
    Group,
}

/// A secret value written as `${env:NAME}`.
#[derive(Debug, Clone, PartialEq)]
pub struct EnvVar {
    pub name: String,
    pub address: Address,
    /// The field path inside the resource, e.g. `value`.
    pub field: String,
    /// The value the API returned, when it returns one (secret variables: never).
    pub remote_value: Option<Value>,
}

/// A project built from remote objects.
#[derive(Debug, Default)]
pub struct Exported {
    /// Relative path to contents: resource files and script files.
    pub files: BTreeMap<String, String>,
    /// Each object under its address.
    pub objects: BTreeMap<Address, Remote>,
    /// The environment variables the files need.
    pub env: Vec<EnvVar>,
    /// Sensitive fields kept as written, as (address, field): their value
    /// only names the service's own variables (`{{API_TOKEN}}`).
    pub service_references: Vec<(Address, String)>,
    /// Problems worth telling (references to objects not exported...).
    pub warnings: Vec<String>,
    /// The checks' shared values, for monform.toml's `[defaults]` (folding).
    pub defaults: Map<String, Value>,
    /// Header sets and assertion lists several checks' entries share, for
    /// monform.toml's `[vars]` (folding; each entry `${var:NAME}`).
    pub vars: Map<String, Value>,
    /// The `forEach` definitions folding wrote.
    pub folded: Vec<Folded>,
}

impl Exported {
    /// How many entries the resource files hold: a definition counts once
    /// however many objects it holds.
    pub fn definitions(&self) -> usize {
        let items: usize = self.folded.iter().map(|f| f.items).sum();
        self.objects.len() - items + self.folded.len()
    }
}

/// What `import --all-unmanaged` takes, and what it leaves.
#[derive(Debug, Default)]
pub struct Unmanaged {
    /// No project owns them: to adopt.
    pub objects: Vec<Remote>,
    /// Whose owner cannot be told: left out unless included by name.
    pub unknown: Vec<(Remote, Owner)>,
    /// Objects of kinds without tags that other projects own.
    pub others: usize,
}

/// The objects no project owns: no ownership tag (kinds with tags); for
/// the other kinds, in no project's ownership record, used by no single
/// project, not in `state` (the current project's) and, while some project
/// has no record yet, only those `include`d (`section:id`).
pub fn unmanaged(objects: Vec<Remote>, owners: &Owners, state: Option<&State>, include: &[String]) -> Unmanaged {
    let recorded: HashSet<(String, String)> = state
        .map(|s| {
            s.resources
                .iter()
                .filter_map(|(a, e)| Some((a.split_once('.')?.0.to_owned(), e.remote_id.clone())))
                .collect()
        })
        .unwrap_or_default();
    let mut found = Unmanaged::default();
    for remote in objects {
        if uses_tags(remote.kind) {
            if remote_owner(&remote).is_none() {
                found.objects.push(remote);
            }
            continue;
        }
        if is_record(remote.kind, &remote.id) {
            continue;
        }
        if recorded.contains(&(remote.kind.section().to_owned(), remote.id.clone())) {
            found.others += 1;
            continue;
        }
        match owners.owner(remote.kind, &remote.id) {
            Owner::Nobody => found.objects.push(remote),
            Owner::Unknown(_) if include.contains(&include_name(&remote)) => found.objects.push(remote),
            unknown @ Owner::Unknown(_) => found.unknown.push((remote, unknown)),
            Owner::Recorded(_) | Owner::UsedBy(_) => found.others += 1,
        }
    }
    found
}

/// How `--include` names an object: `section:id`.
pub fn include_name(remote: &Remote) -> String {
    format!("{}:{}", remote.kind.section(), remote.id)
}

/// A logical id from a name: lowercased, other characters than
/// `[a-z0-9_-]` as `-`, trimmed, at most 64 characters, starting with a
/// letter or digit.
pub fn slug(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars().flat_map(char::to_lowercase) {
        let c = if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
            c
        } else {
            '-'
        };
        if c == '-' && out.ends_with('-') {
            continue;
        }
        out.push(c);
    }
    let mut out = out.trim_matches('-').to_owned();
    if out.is_empty() {
        out = "x".into();
    }
    if !out.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        out = format!("x{out}");
    }
    out.truncate(64);
    out.trim_end_matches('-').to_owned()
}

/// What an object's logical id is derived from.
/// A name for an object's logical id, from the field that names it, never
/// from a field the state recorded as a secret (`secret`).
fn display_name(remote: &Remote, secret: &[FieldPath]) -> String {
    let body = &remote.body();
    let field = |path: &str| -> Option<String> {
        let path = FieldPath::parse(path);
        if secret.contains(&path) {
            return None;
        }
        path.get(body).and_then(Value::as_str).map(str::to_owned)
    };
    let found = match remote.kind {
        Kind::Variable => Some(remote.id.clone()),
        Kind::Dashboard => field("header"),
        Kind::PrivateLocation => field("slugName"),
        Kind::AlertChannel => {
            let kind = field("type").unwrap_or_default();
            let detail = ["address", "channel", "name", "number", "url", "serviceName"]
                .iter()
                .find_map(|k| field(&format!("config.{k}")));
            Some(format!("{kind}-{}", detail.unwrap_or_default()))
        }
        _ => field("name"),
    };
    found
        .filter(|n| !n.trim().is_empty())
        .unwrap_or_else(|| format!("{}-{}", remote.kind.section(), remote.id))
}

fn assign_ids(objects: &[Remote], recorded: &KnownSecrets) -> Vec<String> {
    let mut taken: HashSet<(Kind, String)> = HashSet::new();
    let mut ids = Vec::with_capacity(objects.len());
    for remote in objects {
        let base = if remote.kind == Kind::Variable && monform_model::is_valid_logical_id(&remote.id) {
            remote.id.clone()
        } else {
            let secret = recorded.get(&(remote.kind, remote.id.clone()));
            slug(&display_name(remote, secret.map_or(&[], Vec::as_slice)))
        };
        let mut id = base.clone();
        let mut n = 2;
        while taken.contains(&(remote.kind, id.clone())) {
            let suffix = format!("-{n}");
            let mut stem = base.clone();
            stem.truncate(64 - suffix.len());
            id = format!("{stem}{suffix}");
            n += 1;
        }
        taken.insert((remote.kind, id.clone()));
        ids.push(id);
    }
    ids
}

/// An environment variable name for a secret.
pub fn env_name(address: &Address, field: &str) -> String {
    let raw = if address.kind == Kind::Variable && field == "value" {
        address.id.clone()
    } else {
        format!("{}_{}_{}", address.kind.section(), address.id, field)
    };
    let mut name: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    while name.contains("__") {
        name = name.replace("__", "_");
    }
    let mut name = name.trim_matches('_').to_owned();
    if !name.starts_with(|c: char| c.is_ascii_alphabetic()) {
        name.insert_str(0, "SECRET_");
    }
    name
}

/// Secret paths of a file-form value (the model's rule: the one every
/// output masks by). The flag says the secret is hidden by the API (a
/// secret variable's value, by its `secret` flag): written as `${env:...}`
/// even when the API returns null.
fn secret_paths(kind: Kind, value: &Value) -> Vec<(FieldPath, bool)> {
    let facts = facts(kind, value);
    monform_model::sensitive::sensitive_paths(kind, value)
        .into_iter()
        .map(|path| {
            let hidden = facts
                .sensitive_if
                .iter()
                .any(|(pattern, _)| monform_model::facts::matches(pattern, &path));
            (path, hidden)
        })
        .collect()
}

/// The files' form of one object: references as logical ids, no ownership
/// tags, only schema fields.
pub fn file_value(remote: &Remote, names: &Names) -> Value {
    let kind = remote.kind;
    let mut value = crate::forms::file_form(kind, remote, names);
    if let Some(tags) = value.get_mut("tags").and_then(Value::as_array_mut) {
        tags.retain(|t| !t.as_str().is_some_and(is_ownership_tag));
    }
    let schemas = schemas();
    let schema = schemas.variant(kind, &variant_of(kind, &value)).clone();
    prune(schemas, &schema, &mut value, 0);
    value
}

/// Builds the project's files from `objects`.
/// The secrets a state recorded, by object: (kind, remote id) to the paths
/// applied as secrets. The service cannot say which of its values were
/// secrets to monform (a header marked `secret: true`); the state can.
pub type KnownSecrets = HashMap<(Kind, String), Vec<FieldPath>>;

/// The secrets `state` recorded, for [`export`].
pub fn known_secrets(state: &State) -> KnownSecrets {
    state
        .resources
        .iter()
        .filter(|(_, entry)| !entry.secrets.is_empty())
        .filter_map(|(address, entry)| {
            let kind = address.parse::<Address>().ok()?.kind;
            let paths = entry.secrets.keys().map(|p| FieldPath::parse(p)).collect();
            Some(((kind, entry.remote_id.clone()), paths))
        })
        .collect()
}

/// `fold`: how much look-alike objects are folded into `forEach`
/// definitions (and the checks' shared values into `[defaults]`).
pub fn export(objects: Vec<Remote>, split_by: SplitBy, fold: Fold, recorded: &KnownSecrets) -> Exported {
    let mut objects = objects;
    // Ownership records are monform's bookkeeping, not a project's variables.
    objects.retain(|r| !is_record(r.kind, &r.id));
    objects.sort_by_key(|r| Kind::ALL.iter().position(|k| *k == r.kind));
    let ids = assign_ids(&objects, recorded);
    let mut pairs: Vec<(Kind, Value, String)> = Vec::new();
    for (remote, id) in objects.iter().zip(&ids) {
        pairs.push((remote.kind, Value::String(remote.id.clone()), id.clone()));
        if let Some(number) = remote.field("id").filter(|v| v.is_number()) {
            pairs.push((remote.kind, number, id.clone()));
        }
        if remote.kind == Kind::PrivateLocation
            && let Some(slug) = remote.field("slugName")
        {
            pairs.push((remote.kind, slug, id.clone()));
        }
    }
    let names = Names::from_pairs(pairs.into_iter());
    let known: HashSet<(Kind, String)> = objects.iter().zip(&ids).map(|(r, id)| (r.kind, id.clone())).collect();
    let mut exported = Exported::default();
    // file name -> section -> id -> value
    let mut files: BTreeMap<String, BTreeMap<Kind, Map<String, Value>>> = BTreeMap::new();
    let mut values: Vec<(Address, Value)> = Vec::new();
    // Objects with a field left out: never folded.
    let mut fixed: HashSet<Address> = HashSet::new();
    for (remote, id) in objects.iter().zip(&ids) {
        let kind = remote.kind;
        let address = Address::new(kind, id.clone());
        let mut value = file_value(remote, &names);
        if kind == Kind::Variable && address.id != remote.id {
            exported.warnings.push(format!(
                "variable `{}` is written as {address}: its key is not a valid logical id, and applying the files would use the new key",
                remote.id
            ));
        }
        // A reference to an object not exported (another project's) cannot
        // be written as a logical id: the top-level field holding it is left
        // out, so it stays as it is and unmanaged.
        let mut unknown_roots: Vec<String> = Vec::new();
        for field in &facts(kind, &value).refs {
            if field.soft {
                continue;
            }
            for parent in expand(&field.parent, &value) {
                let path = parent.key(&field.name);
                let referenced: Vec<String> = match lookup(&value, &path) {
                    Some(Value::String(s)) => vec![s.clone()],
                    Some(Value::Array(items)) => items.iter().filter_map(|i| i.as_str().map(str::to_owned)).collect(),
                    _ => Vec::new(),
                };
                for target in referenced {
                    if !known.contains(&(field.target, target.clone())) {
                        let root = match path.segments().first() {
                            Some(Segment::Key(root)) => root.clone(),
                            _ => continue,
                        };
                        exported.warnings.push(format!(
                            "{address}: `{path}` names {} {target}, which is not exported; `{root}` is left out of the files (unmanaged)",
                            field.target.section()
                        ));
                        unknown_roots.push(root);
                    }
                }
            }
        }
        if !unknown_roots.is_empty() {
            fixed.insert(address.clone());
        }
        if let Some(object) = value.as_object_mut() {
            for root in &unknown_roots {
                object.remove(root);
            }
        }
        let unpruned = crate::forms::file_form(kind, remote, &names);
        let mut secrets = secret_paths(kind, &unpruned);
        for path in recorded.get(&(kind, remote.id.clone())).into_iter().flatten() {
            if !secrets.iter().any(|(p, _)| p == path) {
                secrets.push((path.clone(), false));
            }
        }
        // Every string is the service's text: escaped so the loader reads
        // it back as such and substitutes nothing in it (a name holding
        // `${env:GITHUB_TOKEN}`). Before the secrets become placeholders,
        // which are the only substitutions the files may hold.
        monform_config::literal::escape_value(&mut value);
        for (path, hidden) in secrets {
            let remote_value = lookup(&unpruned, &path).cloned().filter(|v| !v.is_null());
            if remote_value.is_none() && !hidden {
                continue;
            }
            // `{{API_TOKEN}}` (or `Bearer {{API_TOKEN}}`) holds no secret:
            // the service puts its variable there when the check runs. Kept
            // as written, not made a variable for the user to set.
            if remote_value
                .as_ref()
                .and_then(Value::as_str)
                .is_some_and(names_service_variables)
            {
                exported.service_references.push((address.clone(), path.to_string()));
                continue;
            }
            let mut name = env_name(&address, &path.to_string());
            let base = name.clone();
            let mut n = 2;
            while exported.env.iter().any(|e| e.name == name) {
                name = format!("{base}_{n}");
                n += 1;
            }
            set_at(&mut value, &path, Value::String(format!("${{env:{name}}}")));
            exported.env.push(EnvVar {
                name,
                address: address.clone(),
                field: path.to_string(),
                remote_value,
            });
        }
        values.push((address.clone(), value));
        exported.objects.insert(address, remote.clone());
    }
    exported.folded = folded::fold_values(&mut values, &mut exported, &fixed, fold);
    if fold != Fold::None {
        exported.vars = folded::hoist_lists(&mut values);
    }
    // A group folded into a definition: its checks go to the definition's file.
    let groups: HashSet<&str> = exported
        .objects
        .keys()
        .filter(|a| a.kind == Kind::Group)
        .map(|a| a.id.as_str())
        .collect();
    let group_file = |group: &str| {
        groups
            .contains(group)
            .then(|| group.split('[').next().unwrap_or(group).to_owned())
    };
    for (address, mut value) in values {
        let kind = address.kind;
        let file = match (split_by, kind) {
            (SplitBy::Group, Kind::Check) => match value.get("group").and_then(Value::as_str).and_then(group_file) {
                Some(group) => format!("groups/{group}.yaml"),
                _ => "checks.yaml".to_owned(),
            },
            (SplitBy::Group, Kind::Group) => format!("groups/{}.yaml", address.id),
            _ => format!("{}.yaml", kind.section()),
        };
        let depth = file.matches('/').count();
        let up = "../".repeat(depth);
        let scripts: Vec<FieldPath> = facts(kind, &value)
            .scripts
            .iter()
            .flat_map(|p| expand(p, &value))
            .collect();
        for path in scripts {
            let Some(Value::String(text)) = lookup(&value, &path).cloned() else {
                continue;
            };
            if !text.contains('\n') {
                continue;
            }
            let field = path.to_string();
            let extension = if field.to_lowercase().contains("script") || field.contains("content") {
                "js"
            } else {
                "txt"
            };
            let stem = if field == "script" {
                address.id.clone()
            } else {
                format!("{}.{}", address.id, slug(&field))
            };
            let script_path = format!("scripts/{}/{stem}.{extension}", kind.section());
            set_at(
                &mut value,
                &path,
                serde_json::json!({ "file": format!("{up}{script_path}") }),
            );
            // The loader reads the file as is; the text was escaped above only
            // in the YAML form.
            exported
                .files
                .insert(script_path, monform_config::literal::unescape(&text).into_owned());
        }
        files
            .entry(file)
            .or_default()
            .entry(kind)
            .or_default()
            .insert(address.id.clone(), value);
    }
    for (file, sections) in files {
        let mut document = Map::new();
        for (kind, entries) in sections {
            document.insert(kind.section().to_owned(), Value::Object(entries));
        }
        // The schema the project holds (an `$id` URL is a name, not a
        // place an editor can fetch it from), relative to this file.
        let up = "../".repeat(file.matches('/').count());
        let header = format!(
            "# yaml-language-server: $schema={up}{RESOURCE_SCHEMA_FILE}\n# Written by `monform export` / `monform import`.\n"
        );
        let body = serde_saphyr::to_string(&Value::Object(document)).unwrap_or_default();
        exported.files.insert(file, format!("{header}{body}"));
    }
    exported
}

/// Whether `text` is only references to the service's variables
/// (`{{NAME}}`), after at most an authorization scheme word (`Bearer`).
pub fn names_service_variables(text: &str) -> bool {
    let text = text.trim();
    let rest = match text.split_once(char::is_whitespace) {
        Some((scheme, rest)) if !scheme.starts_with("{{") && scheme.chars().all(|c| c.is_ascii_alphabetic()) => rest,
        _ => text,
    };
    let mut rest = rest.trim();
    if rest.is_empty() {
        return false;
    }
    while !rest.is_empty() {
        let Some(after) = rest.strip_prefix("{{") else {
            return false;
        };
        let Some((name, next)) = after.split_once("}}") else {
            return false;
        };
        let name = name.trim();
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return false;
        }
        rest = next.trim_start();
    }
    true
}

/// Where an exported project keeps the JSON Schemas its files name for
/// editors: written beside them (as `monform schema` and `monform schema
/// --project` print them), so the comments work offline and match the
/// monform that wrote the files.
pub const RESOURCE_SCHEMA_FILE: &str = "schema/resource-file.schema.json";
pub const PROJECT_SCHEMA_FILE: &str = "schema/monform.schema.json";

/// `ENVIRONMENT.md`: the environment variables the files need.
pub fn environment_markdown(env: &[EnvVar]) -> String {
    let mut text = String::from(
        "# Environment variables\n\nThe exported files name these secrets as `${env:NAME}`; set them before `monform validate`, `plan` or `apply`.\n\n| variable | resource | field |\n|---|---|---|\n",
    );
    for var in env {
        text.push_str(&format!("| `{}` | `{}` | `{}` |\n", var.name, var.address, var.field));
    }
    if env.is_empty() {
        text.push_str("| (none) | | |\n");
    }
    text
}

/// `monform.toml` of an exported project (`defaults`: the checks' shared
/// values, `vars`: their shared header sets and assertions, from folding).
pub fn project_toml(
    project: &str,
    api_url: Option<&str>,
    defaults: &Map<String, Value>,
    vars: &Map<String, Value>,
) -> String {
    let mut text = format!(
        "#:schema {PROJECT_SCHEMA_FILE}\n[project]\nname = \"{}\"\n",
        project.replace(['"', '\\'], "")
    );
    if let Some(url) = api_url {
        text.push_str(&format!("\n[api]\nurl = \"{}\"\n", url.replace(['"', '\\'], "")));
    }
    if !defaults.is_empty() {
        let mut table = toml::Table::new();
        // Values TOML cannot say (a null) were never made defaults.
        if let Ok(toml::Value::Table(values)) = toml::Value::try_from(Value::Object(defaults.clone())) {
            table.insert("defaults".to_owned(), toml::Value::Table(values));
        }
        if let Ok(written) = toml::to_string(&table) {
            text.push_str("\n# Merged into every check that does not set the field (written by folding).\n");
            text.push_str(&written);
        }
    }
    if !vars.is_empty() {
        let mut table = toml::Table::new();
        if let Ok(toml::Value::Table(values)) = toml::Value::try_from(Value::Object(vars.clone())) {
            table.insert("vars".to_owned(), toml::Value::Table(values));
        }
        if let Ok(written) = toml::to_string(&table) {
            text.push_str(
                "\n# Header sets and assertions several checks share, as `${var:NAME}` (written by folding).\n",
            );
            text.push_str(&written);
        }
    }
    text
}

#[cfg(test)]
mod tests;
