//! The differ: compares the files with the account and builds the plan
//! (`plan.rs`), ordered by `differ/order.rs`.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use monform_api::Remote;
use monform_config::{Desired, Target};
use monform_model::facts::variant_tag;
use monform_model::lifecycle::is_ignored;
use monform_model::sensitive::{mask_at, redact};
use monform_model::{Address, AddressPattern, FieldPath};
use petgraph::graph::{DiGraph, NodeIndex};
use rayon::prelude::*;
use serde_json::Value;

use crate::actual::Actual;
use crate::compare::differences_of;
use crate::forms::{
    ActualView, DesiredForm, Names, field_fingerprints, lookup, same_print, secret_to_set, sensitive_paths,
};
use crate::plan::{Action, Change, FieldChange, Plan, Reason};
use crate::state::{Fingerprints, State};

mod conflict;
mod exclude;
mod offline;
mod order;
use order::{order, stable_topological, targeted};

/// What to plan.
#[derive(Debug, Clone, Default)]
pub struct PlanOptions<'a> {
    /// Only these addresses and what they depend on; empty means everything.
    pub targets: Vec<Address>,
    /// Never these addresses, nor what depends on them.
    pub excludes: Vec<AddressPattern>,
    /// The files, for a destroy (planned against no desired resources):
    /// what an excluded resource references must stay, so its deletion is
    /// excluded too.
    pub destroying: Option<&'a Desired>,
}

/// Compares the files with the account.
pub fn plan(project: &str, desired: &Desired, actual: &Actual, state: &State, options: &PlanOptions<'_>) -> Plan {
    let mut names = Names::new(actual);
    // An object imported by this plan is already its address to the
    // references of the others (a check whose group is imported too reads
    // that group's logical id, not its remote id: no change).
    for import in &desired.declarations.imports {
        if !actual.owned.contains_key(&import.to) {
            names.insert(
                import.to.kind,
                &serde_json::Value::String(import.id.clone()),
                import.to.id.clone(),
            );
        }
    }
    // The secrets an `import` entry says its object holds (a migration's
    // fingerprints): compared until the first apply records monform's own.
    let held: HashMap<&Address, &BTreeMap<String, String>> = desired
        .declarations
        .imports
        .iter()
        .filter(|i| !i.secret_fingerprints.is_empty())
        .map(|i| (&i.to, &i.secret_fingerprints))
        .collect();
    let being_created: BTreeSet<&Address> = desired
        .resources
        .keys()
        .filter(|a| !actual.owned.contains_key(*a) && !actual.unrefreshed.contains_key(*a))
        .collect();
    // Each resource is compared on its own, so in parallel.
    let mut changes: Vec<Change> = desired
        .resources
        .par_iter()
        .map(|(address, resource)| {
            // Trusted as applied (`--refresh=changed`): nothing to compare.
            if let Some(unrefreshed) = actual.unrefreshed.get(address).filter(|u| !u.edited) {
                return offline::trusted(address, unrefreshed);
            }
            let owned = actual.owned.get(address);
            // Neither listed nor trusted, nor imported: a create, whose
            // fields are built when asked (`creates.rs`), so the files'
            // form is not needed here.
            let import = match owned {
                None if !actual.unrefreshed.contains_key(address) => {
                    match crate::declared::import_target(desired, actual, address) {
                        None => return create(address, desired, &being_created, state),
                        found => found,
                    }
                }
                _ => None,
            };
            // Field by field as texts: the whole value is built only where
            // something differs (`forms/desired.rs`).
            let desired = DesiredForm::new(address.kind, &resource.resource);
            let ignored = desired.lifecycle().ignored_paths();
            let known = Known {
                state,
                held: held.get(address).copied(),
            };
            let compare = |actual: &ActualView<'_>, remote: &Remote| {
                compare(address, &desired, &resource.sensitive, &ignored, actual, remote, &known)
            };
            match (owned, import) {
                (Some(remote), _) => {
                    let actual = ActualView::new(address.kind, remote, &names);
                    compare(&actual, remote)
                }
                (None, Some(remote)) => {
                    let view = ActualView::new(address.kind, remote, &names);
                    let mut change = compare(&view, remote);
                    if change.action != Action::Replace {
                        change.action = Action::Import;
                        change.reason = Reason::Imported;
                    }
                    change
                }
                // Not read (`--refresh`) and edited in the files.
                (None, None) => offline::unread(address, desired.full(), resource, &actual.unrefreshed[address], state),
            }
        })
        .collect();
    // A destroy plans against no files: its deletes are its purpose, not removals.
    let gone = match options.destroying {
        Some(_) => Reason::Destroyed,
        None => Reason::Removed,
    };
    for (address, remote) in &actual.owned {
        if !desired.resources.contains_key(address) {
            let mut change = removal(address, remote, gone);
            if desired.declarations.removed(address).is_some_and(|r| !r.destroy) {
                change.action = Action::Forget;
                change.reason = Reason::Forgotten;
            }
            changes.push(change);
        }
    }
    for (address, remote) in &actual.duplicates {
        changes.push(removal(address, remote, Reason::Duplicate));
    }
    for (address, unrefreshed) in &actual.unrefreshed {
        if !desired.resources.contains_key(address) {
            changes.push(offline::removal(address, unrefreshed, desired));
        }
    }
    reattach_dependents(&mut changes, desired);
    mark_moves(&mut changes, desired, actual, project);
    if !options.targets.is_empty() {
        let keep = targeted(desired, &options.targets);
        changes.retain(|c| keep.contains(&c.address));
    }
    let excluded = match options.destroying {
        Some(files) => exclude::exclude(&mut changes, files, &options.excludes, exclude::Keep::References),
        None => exclude::exclude(&mut changes, desired, &options.excludes, exclude::Keep::Dependents),
    };
    let by_address = |a: &Change, b: &Change| a.address.cmp(&b.address).then(a.remote_id.cmp(&b.remote_id));
    // A plan without removals comes in the files' order already; sorting
    // anyway took a scratch copy of half the changes (8.7 MB at 100,000
    // checks, at the peak of a no-op plan: issue 48).
    if !changes.is_sorted_by(|a, b| by_address(a, b).is_le()) {
        changes.sort_by(by_address);
    }
    let suggested_moves = crate::renames::suggest_moves(&changes, desired, actual);
    let graph = order(&changes, desired, actual, &names);
    // List changes in dependency order (ties by address), so every reader
    // sees them in the order they are applied.
    let (sequence, stuck) = stable_topological(&graph, changes.len());
    let cycle: Vec<Address> = stuck.iter().map(|&i| changes[i].address.clone()).collect();
    let mut position = vec![0; changes.len()];
    for (new, &old) in sequence.iter().enumerate() {
        position[old] = new;
    }
    let mut changes = changes;
    // In place: a second list of the changes was 16 MB of a
    // 100,000-check plan's peak.
    monform_config::desired::permute(&mut changes, &sequence);
    let mut ordered = DiGraph::new();
    let nodes: Vec<NodeIndex> = (0..changes.len()).map(|i| ordered.add_node(i)).collect();
    for edge in graph.raw_edges() {
        ordered.update_edge(
            nodes[position[graph[edge.source()]]],
            nodes[position[graph[edge.target()]]],
            (),
        );
    }
    let foreign = crate::foreign::foreign_objects(&changes, desired, actual);
    Plan {
        project: project.to_owned(),
        foreign,
        changes,
        order: ordered,
        state_serial: state.serial,
        suggested_moves,
        discarded: Default::default(),
        cycle,
        // The mode is the caller's (`ops::plan`); the count is what was not read.
        refreshed: crate::plan::Refreshed {
            mode: crate::refresh::Refresh::All,
            not_refreshed: actual.unrefreshed.len(),
        },
        excluded,
    }
}

/// The changes of objects the files declare moved (their ownership tag
/// still names the old address) say where from; alone, a move is `Move`.
fn mark_moves(changes: &mut [Change], desired: &Desired, actual: &Actual, project: &str) {
    if desired.declarations.moved.is_empty() {
        return;
    }
    let moves = crate::declared::Moves::new(desired);
    for change in changes.iter_mut() {
        let Some(remote) = actual.owned.get(&change.address) else {
            continue;
        };
        let Some((owner_project, id)) = crate::identity::remote_owner(remote) else {
            continue;
        };
        if owner_project != project || id == change.address.id {
            continue;
        }
        let tagged = Address::new(change.address.kind, id);
        change.from = crate::declared::moved_from(&moves, &change.address, &tagged);
        if change.from.is_some() && change.action == Action::Noop {
            change.action = Action::Move;
        }
    }
}

/// A replaced object gets a new remote id, and the service drops what
/// referenced the old one (subscriptions, slugs): every resource that
/// references it is updated to point at the new one.
fn reattach_dependents(changes: &mut [Change], desired: &Desired) {
    let replaced: BTreeSet<Address> = changes
        .iter()
        .filter(|c| c.action == Action::Replace)
        .map(|c| c.address.clone())
        .collect();
    if replaced.is_empty() {
        return;
    }
    for change in changes.iter_mut().filter(|c| c.action == Action::Noop) {
        let Some(resource) = desired.resources.get(&change.address) else {
            continue;
        };
        let json = resource.resource.to_json();
        for reference in &resource.references {
            if let Target::Managed(target) = &reference.target
                && replaced.contains(target)
            {
                let value = lookup(&json, &reference.path).cloned();
                change.fields.push(FieldChange {
                    path: reference.path.to_string(),
                    before: value.clone(),
                    after: value,
                    sensitive: false,
                    drift: false,
                    known_after_apply: true,
                    cleared: false,
                    conflict: None,
                });
                change.action = Action::Update;
                change.reason = Reason::DependencyReplaced;
            }
        }
    }
}

/// Whether the files changed the field at `path` (or anything under it)
/// since it was last applied: its fingerprints now and as recorded differ.
fn edited_in_files(path: &str, now: &Fingerprints, recorded: &Fingerprints, state: &State) -> bool {
    let now: Vec<(&str, &str)> = conflict::under(now, path).collect();
    let recorded: Vec<(&str, &str)> = conflict::under(recorded, path).collect();
    now.len() != recorded.len()
        || now
            .iter()
            .zip(&recorded)
            .any(|((a, x), (b, y))| a != b || !same_print(state, x, y))
}

fn create(address: &Address, desired_all: &Desired, being_created: &BTreeSet<&Address>, state: &State) -> Change {
    let created_refs: Vec<String> = desired_all.resources[address]
        .references
        .iter()
        .filter(|r| matches!(&r.target, Target::Managed(t) if being_created.contains(t)))
        .map(|r| r.path.to_string())
        .collect();
    let reason = if state.resources.contains_key(&address.to_string()) {
        Reason::DeletedRemotely
    } else {
        Reason::New
    };
    Change {
        address: address.clone(),
        action: Action::Create,
        remote_id: None,
        from: None,
        reason,
        fields: Vec::new(),
        deferred: Some(created_refs.into_boxed_slice()),
        unchanged: 0,
        remote_version: None,
    }
}

/// What is known of what the object holds besides the account's listing:
/// the state, and an `import` entry's secret fingerprints.
struct Known<'a> {
    state: &'a State,
    held: Option<&'a BTreeMap<String, String>>,
}

fn compare(
    address: &Address,
    form: &DesiredForm<'_>,
    extra: &[FieldPath],
    ignored: &[FieldPath],
    actual: &ActualView<'_>,
    remote: &Remote,
    known: &Known<'_>,
) -> Change {
    let state = known.state;
    let kind = address.kind;
    let facts = form.facts();
    // What the secret rule reads: a few fields, not the whole value, which
    // is built (`form.full()`) only where something differs.
    let secret_tree = form.secret_fields(extra);
    // `lifecycle.ignoreChanges`: never compared, so never a change or drift.
    let mut sensitive = sensitive_paths(kind, &secret_tree, extra);
    sensitive.retain(|p| !is_ignored(p, ignored));
    let skip: Vec<FieldPath> = sensitive.iter().chain(ignored).cloned().collect();
    // The account's value is masked by what it holds too (a header it has
    // that the files do not), and where the files' value is secret.
    let old = |path: &FieldPath, value: &Value| mask_at(kind, form.variant_object(), path, value, &sensitive);
    let key = address.to_string();
    let mut fields: Vec<FieldChange> = differences_of(
        form,
        &|field| actual.get(field),
        &|field| actual.text(field),
        facts,
        &skip,
    )
    .into_iter()
    .filter(|d| !is_ignored(&d.path, ignored))
    // The service's own form of what was written is no difference.
    .filter(|d| !crate::normal::is_normal_form(state, &key, &d.path.to_string(), &d.after, &d.before))
    .map(|d| FieldChange {
        path: d.path.to_string(),
        before: Some(old(&d.path, &d.before)),
        after: Some(redact(&d.after, &d.path, &sensitive)),
        sensitive: false,
        drift: false,
        known_after_apply: false,
        cleared: false,
        conflict: None,
    })
    .collect();
    let recorded = state.resources.get(&key);
    for name in recorded.map(|r| &r.managed[..]).unwrap_or_default() {
        // The files' fields first: the account's is read (parsed) only
        // for a field the files no longer set.
        if form.has(name) || is_ignored(&FieldPath::root().key(name), ignored) {
            continue;
        }
        let before = actual
            .get(name)
            .filter(|v| !matches!(v, Value::Null) && v.as_array().is_none_or(|a| !a.is_empty()));
        if let Some(before) = before {
            fields.push(FieldChange {
                path: name.clone(),
                before: Some(old(&FieldPath::root().key(name), before)),
                after: Some(Value::Null),
                sensitive: false,
                drift: false,
                known_after_apply: false,
                cleared: true,
                conflict: None,
            });
        }
    }
    for path in &sensitive {
        let Some(value) = lookup(&secret_tree, path) else {
            continue;
        };
        if secret_to_set(path, value, recorded, known.held, state) {
            fields.push(FieldChange {
                path: path.to_string(),
                before: None,
                after: None,
                sensitive: true,
                drift: false,
                known_after_apply: false,
                cleared: false,
                conflict: None,
            });
        }
    }
    let version = actual.version();
    let version_changed = recorded
        .and_then(|r| r.version.as_deref())
        .is_some_and(|v| Some(v) != version.as_deref());
    let drifted = match recorded.map(|r| &r.fields).filter(|f| !f.is_empty()) {
        // Field by field: a field the files did not change since it was
        // applied, yet differs from the account, was changed outside.
        // (Hashed only when something differs: a no-op plan hashes nothing.)
        Some(_) if fields.is_empty() => false,
        Some(applied) => {
            let desired = form.full();
            let now = field_fingerprints(kind, desired, extra, state);
            let service = conflict::Service {
                actual,
                applied,
                recorded: recorded.and_then(|r| r.version.as_deref()),
                state,
                address: &key,
                sensitive: &sensitive,
                kind,
                desired,
            };
            // A secret the files changed (its fingerprint moved) inside a
            // field makes that field the files' edit, though its print
            // leaves the secret out (a list of variables, one of them secret).
            // So does a secret applied last time that the files no longer have.
            let removed_secrets = recorded
                .into_iter()
                .flat_map(|r| r.secrets.keys())
                .filter(|path| lookup(desired, &FieldPath::parse(path)).is_none())
                .cloned();
            let secret_edits: Vec<String> = fields
                .iter()
                .filter(|f| f.sensitive)
                .map(|f| f.path.clone())
                .chain(removed_secrets)
                .collect();
            for field in fields.iter_mut().filter(|f| !f.sensitive) {
                // Taken out of the files: their edit, and a conflict when
                // the service changed it too since the last apply.
                if field.cleared {
                    field.conflict = service.conflict(field);
                    continue;
                }
                let holds_secret_edit = secret_edits.iter().any(|s| {
                    s.strip_prefix(field.path.as_str())
                        .is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '[']))
                });
                field.drift = !holds_secret_edit && !edited_in_files(&field.path, &now, applied, state);
                // Edited in the files: changed in the service as well is a conflict.
                if !field.drift {
                    field.conflict = service.conflict(field);
                }
            }
            fields.iter().any(|f| f.drift)
        }
        // A state from before field fingerprints: the object's version tells.
        None => {
            for field in &mut fields {
                field.drift = version_changed && !field.sensitive && !field.cleared;
            }
            version_changed
        }
    };
    // A secret variable's value, which the service never returns, set in
    // the service since. (Only variables: other objects' versions also
    // move when monform changes what refers to them.)
    if kind == monform_model::Kind::Variable && version_changed && !fields.iter().any(|f| f.drift) {
        conflict::Secrets {
            sensitive: &sensitive,
            desired: form.full(),
            actual,
            recorded,
            state,
        }
        .rotated(&mut fields);
    }
    // Lists changed only inside what is masked: the items the service changed.
    if !fields.is_empty() {
        let secrets = conflict::Secrets {
            sensitive: &sensitive,
            desired: form.full(),
            actual,
            recorded,
            state,
        };
        let secret_fields: Vec<String> = fields.iter().filter(|f| f.sensitive).map(|f| f.path.clone()).collect();
        fields.retain_mut(|field| {
            let masked_alike = !field.sensitive && field.before.is_some() && field.before == field.after;
            !masked_alike || secrets.changed_items(field, &secret_fields)
        });
    }
    let drifted = drifted || fields.iter().any(|f| f.drift);
    let actual_variant = variant_tag(kind).and_then(|tag| actual.get(tag)?.as_str());
    let type_changed = form.variant() != actual_variant.unwrap_or_default();
    let replace = type_changed
        || fields.iter().any(|f| {
            let root = FieldPath::parse(&f.path);
            facts.replace.iter().any(|p| monform_model::facts::matches(p, &root))
        });
    let action = match (fields.is_empty() && !type_changed, replace) {
        (true, _) => Action::Noop,
        (false, true) => Action::Replace,
        (false, false) => Action::Update,
    };
    // A change only inside what is masked (a URL's `?apikey=`) would show
    // the same text twice: shown as a secret's change, drift kept.
    for field in &mut fields {
        if !field.sensitive && field.before.is_some() && field.before == field.after {
            field.sensitive = true;
            field.before = None;
            field.after = None;
        }
    }
    let reason = match action {
        Action::Noop => Reason::UpToDate,
        _ if fields.iter().any(|f| f.conflict.is_some()) => Reason::Conflict,
        _ if drifted => Reason::Drift,
        _ => Reason::ConfigChanged,
    };
    let managed_fields = form.len();
    let changed_roots: BTreeSet<String> = fields
        .iter()
        .map(|f| f.path.split(['.', '[']).next().unwrap_or("").to_owned())
        .collect();
    Change {
        address: address.clone(),
        action,
        remote_id: Some(remote.id.clone()),
        from: None,
        reason,
        fields,
        unchanged: managed_fields.saturating_sub(changed_roots.len()),
        remote_version: version,
        deferred: None,
    }
}

fn removal(address: &Address, remote: &Remote, reason: Reason) -> Change {
    Change {
        address: address.clone(),
        action: Action::Delete,
        remote_id: Some(remote.id.clone()),
        from: None,
        reason,
        fields: Vec::new(),
        unchanged: 0,
        remote_version: remote.version(),
        deferred: None,
    }
}

#[cfg(test)]
pub(crate) mod tests;
