//! One resource definition into the resources it stands for: `forEach` (a
//! map, a list of strings, a `${var:NAME}` holding one, or `{ file: PATH }`
//! a data file's rows, `crate::data`) and `forEachFile` (a glob) make one resource
//! per item, addressed `section.id[key]`; `environments` keeps a resource
//! to some environments; then every substitution is made. Spans are kept:
//! the fields point at the definition, substituted values at the item or
//! variable they came from.

use std::path::Path;

use monform_model::{Address, Kind, is_valid_logical_id};
use rustc_hash::FxHashMap;

use crate::budget::{Budget, weight};
use crate::diagnostic::Diagnostic;
use crate::interpolate::{Each, EnvPolicy, Scope, interpolate_node, interpolation_diagnostic};
use crate::paths::Roots;
use crate::source::Span;
use crate::tree::{Entry, Node, NodeValue, Sensitive};

mod files;
use files::files_of;

/// Looks up environment variables for `${env:...}`. `Sync`: files are read
/// in parallel.
pub type EnvLookup<'a> = &'a (dyn Fn(&str) -> Option<String> + Sync);

/// Keys of a definition that are monform's, not the resource's.
pub const FOR_EACH: &str = "forEach";
pub const FOR_EACH_FILE: &str = "forEachFile";
pub const ENVIRONMENTS: &str = "environments";

/// What expansion reads besides the definition.
pub struct Context<'a> {
    pub env: EnvLookup<'a>,
    /// What `${env:}` may read, and which of its values may be shown.
    pub policy: &'a EnvPolicy,
    /// Where `forEachFile` globs may look.
    pub roots: &'a Roots,
    pub vars: &'a [Entry],
    /// Names of the declared environments.
    pub environments: &'a [&'a str],
    /// The environment being loaded, if one is.
    pub environment: Option<&'a str>,
    /// Data files `forEach: { file: }` read, to leave out of the resources.
    pub data_files: &'a crate::data::DataFiles,
}

/// A resource made from a definition.
pub struct Expanded {
    pub address: Address,
    /// Its key: the logical id, or the item's key (or file glob).
    pub key_span: Span,
    pub node: Node,
    /// Strings whose substitution failed (already reported): the shape
    /// check says nothing more about them.
    pub unresolved: Vec<Span>,
    /// The item's text (key and value), for a resource made by `forEach`
    /// or `forEachFile`.
    pub item: Option<Span>,
}

/// Expands the definition `id` of `kind` found in a file of folder `base`;
/// every copy and substitution is charged to the file's `budget`. `None`
/// when its `environments` leave out the environment loaded: `moved` and
/// `import` entries about it apply elsewhere (`declare::check`).
#[allow(clippy::too_many_arguments)]
pub fn expand(
    kind: Kind,
    id: &str,
    key_span: Span,
    mut node: Node,
    base: &Path,
    context: &Context<'_>,
    budget: &Budget,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<Vec<Expanded>> {
    let mut for_each = None;
    let mut for_each_file = None;
    let mut environments = None;
    if let NodeValue::Map(entries) = &mut node.value
        && entries.iter().any(|e| is_meta(&e.key))
    {
        let (meta, fields): (Vec<Entry>, Vec<Entry>) =
            std::mem::take(entries).into_iter().partition(|e| is_meta(&e.key));
        *entries = fields;
        for entry in meta {
            match entry.key.as_str() {
                FOR_EACH => for_each = Some(entry),
                FOR_EACH_FILE => for_each_file = Some(entry),
                _ => environments = Some(entry),
            }
        }
    }
    let address = Address::new(kind, id);
    if let Some(environments) = environments
        && !in_environment(
            &format!("{address}.{ENVIRONMENTS}"),
            &environments.value,
            context,
            diagnostics,
        )
    {
        return None;
    }
    if kind == Kind::Variable
        && let Some(entry) = for_each.as_ref().or(for_each_file.as_ref())
    {
        // A variable's logical id is its key in the API: `KEY[item]` is none.
        diagnostics.push(
            Diagnostic::new(
                "monform::for-each",
                format!("{address}: variables cannot use {}", entry.key),
            )
            .at(entry.key_span, "not for variables")
            .help("a variable's logical id is its key; write each variable out"),
        );
        return Some(Vec::new());
    }
    let items = match (for_each, for_each_file) {
        (None, None) => {
            let mut node = node;
            let unresolved = substitute(&mut node, None, context, budget, diagnostics);
            return Some(vec![Expanded {
                address,
                key_span,
                node,
                unresolved,
                item: None,
            }]);
        }
        (Some(mut list), None) => {
            // `forEach: "${var:NAME}"`: the items of `[vars]` (of the
            // environment loaded), a list or a map, or `{ file: PATH }`.
            if matches!(list.value.value, NodeValue::Str(_))
                && !substitute(&mut list.value, None, context, budget, diagnostics).is_empty()
            {
                return Some(Vec::new());
            }
            match crate::data::file_of(&list.value) {
                Some(file) => crate::data::items(
                    &address,
                    file,
                    base,
                    context.roots,
                    context.data_files,
                    budget,
                    diagnostics,
                ),
                None => items_of(&address, &list, diagnostics),
            }
        }
        (None, Some(glob)) => files_of(&address, &glob, base, context.roots, diagnostics),
        (Some(list), Some(glob)) => {
            diagnostics.push(
                Diagnostic::new(
                    "monform::for-each",
                    format!("{address}: forEach and forEachFile cannot be used together"),
                )
                .at(glob.key_span, "second expansion")
                .help("keep one: forEach for a list or map of items, forEachFile for one resource per file")
                .related(Diagnostic::new("monform::for-each", "forEach is here").at(list.key_span, "first expansion")),
            );
            return Some(Vec::new());
        }
    };
    let mut expanded = Vec::with_capacity(items.len());
    let mut seen: FxHashMap<&str, &Each> = FxHashMap::default();
    let copy = weight(&node);
    for each in &items {
        if let Some(first) = seen.get(each.key.as_str()) {
            let files = match (&first.value.value, &each.value.value) {
                (NodeValue::Str(a), NodeValue::Str(b)) if a != &first.key => format!(" (from `{a}` and `{b}`)"),
                _ => String::new(),
            };
            diagnostics.push(
                Diagnostic::new(
                    "monform::duplicate",
                    format!(
                        "duplicate logical id: {} is made twice{files}",
                        Address::item(kind, id, &each.key)
                    ),
                )
                .at(each.key_span, "made again here")
                .help("item keys must be unique in a forEach or forEachFile")
                .related(Diagnostic::new("monform::duplicate", "first made here").at(first.key_span, "first item")),
            );
            continue;
        }
        seen.insert(&each.key, each);
        if let Err(exceeded) = budget.charge(copy) {
            diagnostics.push(
                Diagnostic::new("monform::too-large", format!("{address}: {}", exceeded.message()))
                    .at(each.key_span, "this item went over")
                    .help("split the forEach, or the file, into several"),
            );
            break;
        }
        let mut item = node.clone();
        let unresolved = substitute(&mut item, Some(each), context, budget, diagnostics);
        expanded.push(Expanded {
            address: Address::item(kind, id, &each.key),
            key_span: each.key_span,
            node: item,
            unresolved,
            item: Some(extent(each)),
        });
    }
    Some(expanded)
}

/// The text an item spans: from its key to the end of its value.
fn extent(each: &Each) -> Span {
    fn end(node: &Node) -> usize {
        let own = node.span.start + node.span.len;
        match &node.value {
            NodeValue::Seq(items) => items.iter().map(end).fold(own, usize::max),
            NodeValue::Map(entries) => entries.iter().map(|e| end(&e.value)).fold(own, usize::max),
            _ => own,
        }
    }
    let start = each.key_span.start.min(each.value.span.start);
    let end = end(&each.value).max(each.key_span.start + each.key_span.len);
    Span::new(each.key_span.file, start, end - start)
}

fn is_meta(key: &str) -> bool {
    matches!(key, FOR_EACH | FOR_EACH_FILE | ENVIRONMENTS)
}

/// Whether what `field` (`checks.home.environments`, ``import: `environments` ``)
/// belongs to exists in the environment loaded (always, when none is);
/// reports what is not a list of declared environment names.
pub(crate) fn in_environment(
    field: &str,
    list: &Node,
    context: &Context<'_>,
    diagnostics: &mut Vec<Diagnostic>,
) -> bool {
    let NodeValue::Seq(items) = &list.value else {
        diagnostics.push(
            Diagnostic::new(
                "monform::type",
                format!(
                    "{field}: expected a list of environment names, found {}",
                    list.type_name()
                ),
            )
            .at(list.span, "here"),
        );
        return true;
    };
    let mut names = Vec::new();
    for item in items {
        match &item.value {
            NodeValue::Str(name) if context.environments.contains(&name.as_str()) => names.push(name.as_str()),
            NodeValue::Str(name) => {
                let diagnostic =
                    Diagnostic::new("monform::environment", format!("{field}: unknown environment `{name}`"))
                        .at(item.span, "not declared in monform.toml");
                diagnostics.push(match crate::suggest(name, context.environments.iter().copied()) {
                    Some(s) => diagnostic.help(format!("did you mean `{s}`?")),
                    None if context.environments.is_empty() => {
                        diagnostic.help("declare it in monform.toml: [environments.NAME]")
                    }
                    None => diagnostic.help(format!("environments are {}", context.environments.join(", "))),
                });
            }
            _ => diagnostics.push(
                Diagnostic::new(
                    "monform::type",
                    format!("{field}[]: expected an environment name, found {}", item.type_name()),
                )
                .at(item.span, "here"),
            ),
        }
    }
    context.environment.is_none_or(|selected| names.contains(&selected))
}

/// The items of a `forEach`: a map (key and value) or a list of strings
/// (key = value = the string).
fn items_of(address: &Address, entry: &Entry, diagnostics: &mut Vec<Diagnostic>) -> Vec<Each> {
    let mut items = Vec::new();
    match &entry.value.value {
        NodeValue::Map(entries) => {
            for item in entries {
                if valid_key(address, &item.key, item.key_span, diagnostics) {
                    items.push(Each {
                        key: item.key.clone(),
                        key_span: item.key_span,
                        value: item.value.clone(),
                    });
                }
            }
        }
        NodeValue::Seq(list) => {
            for (i, item) in list.iter().enumerate() {
                if let Some(sensitive) = &item.sensitive {
                    diagnostics.push(sensitive_key(address, entry, i, item.span, sensitive));
                    continue;
                }
                match &item.value {
                    NodeValue::Str(key) if valid_key(address, key, item.span, diagnostics) => items.push(Each {
                        key: key.clone(),
                        key_span: item.span,
                        value: item.clone(),
                    }),
                    NodeValue::Str(_) => {}
                    _ => diagnostics.push(
                        Diagnostic::new(
                            "monform::for-each",
                            format!(
                                "{address}.forEach[]: a list item must be a string, found {}",
                                item.type_name()
                            ),
                        )
                        .at(item.span, "here")
                        .help("for items with several values, write forEach as a map: key: { ... }"),
                    ),
                }
            }
        }
        _ => diagnostics.push(
            Diagnostic::new(
                "monform::for-each",
                format!(
                    "{address}.forEach: expected a map or a list of strings, found {}",
                    entry.value.type_name()
                ),
            )
            .at(entry.value.span, "here")
            .help("or `${var:NAME}` naming such a list or map in [vars], or `{ file: data.csv }` (CSV, JSON or YAML rows)"),
        ),
    }
    items
}

/// A list item holding text of a non-public `${env:}`: a key would put it
/// in addresses, names and every plan (issue 43). Named by its variable.
fn sensitive_key(address: &Address, entry: &Entry, index: usize, item: Span, sensitive: &Sensitive) -> Diagnostic {
    let hidden = monform_model::sensitive::word(&serde_json::Value::Null, Some(&sensitive.hidden()));
    Diagnostic::new(
        "monform::sensitive-key",
        format!("{address}.forEach[{index}]: {hidden} cannot be an item key: it is sensitive"),
    )
    .at(entry.key_span, "a sensitive item")
    .help("an item's key goes into its address and everything that shows it; write the keys out, as a map whose values may read the environment: `key: \"${env:NAME}\"` stays sensitive through ${each.value}")
    .related(Diagnostic::new("monform::sensitive-key", format!("{hidden} is read here")).at(item, "not shown: sensitive"))
}

fn valid_key(address: &Address, key: &str, span: Span, diagnostics: &mut Vec<Diagnostic>) -> bool {
    if is_valid_logical_id(key) {
        return true;
    }
    diagnostics.push(
        Diagnostic::new(
            "monform::logical-id",
            format!("{address}.forEach: `{key}` is not a valid item key"),
        )
        .at(span, "invalid key")
        .help("item keys follow the logical-id rules: letters, digits, - and _, starting with a letter or digit, at most 64"),
    );
    false
}

/// Makes every substitution in a resource, reporting each failure; returns
/// the spans of the strings that failed.
fn substitute(
    node: &mut Node,
    each: Option<&Each>,
    context: &Context<'_>,
    budget: &Budget,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<Span> {
    let scope = Scope {
        env: context.env,
        policy: context.policy,
        vars: Some(context.vars),
        each,
        budget,
    };
    let mut errors = Vec::new();
    interpolate_node(node, &scope, &mut errors);
    errors
        .into_iter()
        .map(|(error, span)| {
            diagnostics.push(interpolation_diagnostic(error, span));
            span
        })
        .collect()
}
