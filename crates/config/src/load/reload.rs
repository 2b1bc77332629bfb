//! One file of a load read again (issue 48: the language server's
//! keystroke at 100,000 checks): the file's resources read, validated and
//! resolved as a load does it (the same functions), put in place of the
//! old ones, and the cross-file rules re-run only where the file can
//! change what they say. A load of the whole project gives the same
//! diagnostics; where this cannot be sure of it, it says so (`None`) and
//! the caller loads the whole project.
//!
//! What the other files' diagnostics read of this one, and why each is
//! kept or re-run:
//! - the addresses it defines: a duplicate (none in the load before, none
//!   made now), a dangling reference elsewhere (its did-you-mean lists the
//!   ids defined), `moved`/`import`/`removed` entries: the set may change
//!   only when no other file has a dangling reference or a declaration,
//!   and no other file references an id that goes;
//! - the references between resources: the graph is linked again when
//!   the file's resources' targets or validity change, and a cycle (none
//!   before) makes it a full load;
//! - the linter (a check and its group and channels, and one note over
//!   every check): re-run on the file's checks and on the checks elsewhere
//!   reading a group or channel of it that changed, the other checks'
//!   findings kept (`lint::Linted`, made at the first reload: a load does
//!   not keep them).
//!
//! The resources of each file are indexed at the first reload
//! (`Loaded::resources_in`), so a reload finds the file's old resources
//! without going through every resource.

use super::desired::{Resolved, merge_items, resolve};
use super::*;

/// What reloading a file found: the file's own diagnostics, and the
/// linter's over the project again.
#[derive(Debug)]
pub struct Reloaded {
    pub file: FileId,
    /// The file's diagnostics but the linter's (reading it, its resources
    /// and their references), in the order a load makes them.
    pub diagnostics: Vec<Diagnostic>,
    /// The linter's warnings and notes, then its errors, over every file.
    pub lint: (Vec<Diagnostic>, Vec<Diagnostic>),
}

/// Whether `code` is one of the linter's (they are all re-run on a reload).
pub fn is_lint_code(code: &str) -> bool {
    crate::lint::CODES.contains(&code)
}

/// Reads `name` (relative to `root`, `/`-separated; from `unsaved` when it
/// has it) again into `loaded`, a load of the project at `root` with
/// `env`, whose diagnostics (taken out of it) are `prior`. `None` when
/// only a load of the whole project can say what
/// changed: the file is monform.toml or not one of the resource files,
/// some file is read as data, the load had a duplicate id or a reference
/// cycle, the file declares `moved`/`import`/`removed` entries, or its ids
/// changed where other files read them (see the module's doc); `loaded`
/// is then unchanged, but when the file's new references make a cycle
/// (known only once they are linked): it is to be loaded again.
pub fn reload_file<'d>(
    loaded: &mut Loaded,
    root: &Path,
    env: EnvLookup<'_>,
    unsaved: &Unsaved,
    name: &str,
    prior: impl IntoIterator<Item = &'d Diagnostic>,
) -> Option<Reloaded> {
    let project = loaded.project.as_ref()?;
    if !loaded.reloadable || name == PROJECT_FILE || loaded.read_data || !loaded.desired.declarations.absent.is_empty()
    {
        return None;
    }
    let id = loaded
        .sources
        .iter()
        .position(|f| f.name == name && f.format != Format::Rego)? as FileId;
    if id == 0 {
        return None;
    }
    let in_file = |span: &Span| span.file == id;
    let declarations = &loaded.desired.declarations;
    let declared_here = declarations.moved.iter().any(|m| in_file(&m.span))
        || declarations.imports.iter().any(|i| in_file(&i.span))
        || declarations.removed.iter().any(|r| in_file(&r.span));
    if declared_here {
        return None;
    }
    let mut dangling_elsewhere = false;
    for diagnostic in prior {
        match diagnostic.code {
            "monform::duplicate" | "monform::cycle" => return None,
            "monform::dangling-reference" if !diagnostic.span.is_some_and(|s| in_file(&s)) => {
                dangling_elsewhere = true;
            }
            _ => {}
        }
    }
    // The file read as a load reads it, in the same context.
    let mut roots = Roots::of(root);
    for (folder, _) in &project.allow_paths {
        // Refused ones were reported by the load.
        let _ = roots.allow(folder);
    }
    let environments = project.environment_names();
    let data_files = crate::data::DataFiles::default();
    let context = Context {
        env,
        policy: &project.env_policy,
        roots: &roots,
        vars: &project.vars,
        environments: &environments,
        environment: project.environment.as_deref(),
        data_files: &data_files,
    };
    let path = loaded.sources.get(id).path.clone();
    let (file, items, declared, _) = read_resource_file(root, path, id, unsaved, &project.defaults, &context, None);
    if !data_files.is_empty() || !declared.is_empty() {
        return None;
    }
    // The ids before and after.
    if loaded.by_file.is_none() {
        loaded.by_file = Some(by_file(&loaded.desired, loaded.sources.len()));
    }
    let old_valid: FxHashSet<&Address> = (loaded.by_file.iter())
        .filter_map(|by_file| by_file.get(id as usize))
        .flatten()
        .collect();
    let old_invalid: FxHashSet<&Address> = loaded
        .defined
        .invalid
        .iter()
        .filter(|(_, span)| in_file(span))
        .map(|(address, _)| address)
        .collect();
    let new_ids: FxHashSet<Address> = items.iter().map(|i| i.address.clone()).collect();
    if new_ids.len() != items.len() {
        return None;
    }
    let added: Vec<Address> = new_ids
        .iter()
        .filter(|a| !old_valid.contains(a) && !old_invalid.contains(a))
        .cloned()
        .collect();
    let removed: Vec<Address> = old_valid
        .iter()
        .chain(&old_invalid)
        .filter(|a| !new_ids.contains(**a))
        .map(|a| (*a).clone())
        .collect();
    let ids_changed = !added.is_empty() || !removed.is_empty();
    if ids_changed {
        let declared_anywhere =
            !declarations.moved.is_empty() || !declarations.imports.is_empty() || !declarations.removed.is_empty();
        // Defined in another file: a duplicate now.
        let taken = added.iter().any(|a| loaded.defined.all.contains(a));
        let gone: FxHashSet<&Address> = removed.iter().collect();
        // An invalid resource's references are not kept: one elsewhere
        // might name an id that goes.
        let invalid_elsewhere = loaded.defined.invalid.iter().any(|(_, span)| !in_file(span));
        let referenced_elsewhere = loaded.desired.resources.values().any(|r| {
            !in_file(&r.span)
                && r.references
                    .iter()
                    .any(|reference| matches!(&reference.target, Target::Managed(t) if gone.contains(t)))
        });
        if declared_anywhere || dangling_elsewhere || taken || invalid_elsewhere || referenced_elsewhere {
            return None;
        }
    }
    let mut defined_all = None;
    let defined = if ids_changed {
        let mut all = loaded.defined.all.clone();
        for address in &removed {
            all.remove(address);
        }
        all.extend(added.iter().cloned());
        &*defined_all.insert(all)
    } else {
        &loaded.defined.all
    };
    // Its resources resolved as a load resolves them.
    let mut diagnostics = file.diagnostics;
    let mut resources = Vec::with_capacity(items.len());
    let mut invalid = Vec::new();
    let mut in_definitions = Vec::new();
    for item in items {
        let Resolved {
            resource,
            diagnostics: found,
            in_definition,
        } = resolve(item, defined);
        diagnostics.extend(found);
        in_definitions.extend(in_definition);
        match resource {
            Ok(resource) => resources.push(resource),
            Err(address) => invalid.push(address),
        }
    }
    diagnostics.extend(merge_items(in_definitions));
    let targets = |r: &DesiredResource| -> Vec<Address> {
        r.references
            .iter()
            .filter_map(|reference| match &reference.target {
                Target::Managed(target) => Some(target.clone()),
                Target::Remote(_) => None,
            })
            .collect()
    };
    let relink = ids_changed
        || resources.len() != old_valid.len()
        || resources.iter().any(|r| {
            loaded
                .desired
                .resources
                .get(&r.address)
                .is_none_or(|old| !in_file(&old.span) || targets(old) != targets(r))
        });
    // The checks whose lint findings the edit can change: the file's, and
    // those elsewhere reading a group or channel of it that changed (came,
    // went or differs), found in the graph before and after.
    let is_read = |address: &Address| matches!(address.kind, Kind::Group | Kind::AlertChannel);
    let new_addresses: FxHashSet<&Address> = resources.iter().map(|r| &r.address).collect();
    let mut changed_read: Vec<Address> = (resources.iter())
        .filter(|r| is_read(&r.address))
        .filter(|r| {
            (loaded.desired.resources.get(&r.address))
                .filter(|old| in_file(&old.span))
                .is_none_or(|old| old.resource != r.resource)
        })
        .map(|r| r.address.clone())
        .collect();
    changed_read.extend(
        (old_valid.iter())
            .filter(|a| is_read(a) && !new_addresses.contains(**a))
            .map(|a| (*a).clone()),
    );
    let mut relint: Vec<Address> = (old_valid.iter().chain(&new_addresses))
        .filter(|a| a.kind == Kind::Check)
        .map(|a| (*a).clone())
        .collect();
    drop(new_addresses);
    relint.extend(readers(&loaded.desired, &changed_read));
    // Settled: the load takes the file's new text and resources.
    let removed_valid: Vec<Address> = old_valid.into_iter().cloned().collect();
    let mut addresses: Vec<Address> = resources.iter().map(|r| r.address.clone()).collect();
    addresses.sort_unstable();
    if let Some(list) = (loaded.by_file.as_mut()).and_then(|by_file| by_file.get_mut(id as usize)) {
        *list = addresses;
    }
    let desired = &mut loaded.desired;
    for address in &removed_valid {
        desired.resources.remove(address);
    }
    for resource in resources {
        desired.resources.insert(resource.address.clone(), resource);
    }
    if relink {
        desired.relink();
        if !desired.cycles().is_empty() {
            // The caller loads again: what it had is no longer this load.
            return None;
        }
    }
    if let Some(all) = defined_all {
        loaded.defined.all = all;
    }
    loaded.defined.invalid.retain(|(_, span)| !in_file(span));
    loaded.defined.invalid.extend(invalid);
    loaded.sources.replace(id, file.source);
    relint.extend(readers(&loaded.desired, &changed_read));
    relint.sort_unstable();
    relint.dedup();
    let levels = loaded.project.as_ref().map(|p| p.lint).unwrap_or_default();
    // Kept from the last reload; the first lints every check.
    let linted = match loaded.linted.take() {
        Some(mut linted) if linted.levels_are(levels) => {
            linted.update(&loaded.desired, &relint);
            linted
        }
        _ => crate::lint::Linted::new(&loaded.desired, levels),
    };
    let lint = linted.findings(&loaded.desired);
    loaded.linted = Some(linted);
    Some(Reloaded {
        file: id,
        diagnostics,
        lint,
    })
}

/// The addresses of the resources of each of `files` files, in order.
fn by_file(desired: &Desired, files: usize) -> Vec<Vec<Address>> {
    let mut by_file = vec![Vec::new(); files];
    for resource in desired.resources.values() {
        if let Some(list) = by_file.get_mut(resource.span.file as usize) {
            list.push(resource.address.clone());
        }
    }
    by_file
}

impl Loaded {
    /// Makes now what `reload_file` keeps from its first reload (the
    /// linter's findings per check, each file's resources): the language
    /// server asks after a whole validation, so that its first keystroke
    /// is as quick as the next (at 100,000 checks the linter over every
    /// check is most of a keystroke).
    pub fn keep_for_reloads(&mut self) {
        let Some(project) = &self.project else {
            return;
        };
        if self.linted.is_none() {
            self.linted = Some(crate::lint::Linted::new(&self.desired, project.lint));
        }
        if self.by_file.is_none() {
            self.by_file = Some(by_file(&self.desired, self.sources.len()));
        }
    }

    /// The resources written in file `file`, in address order: from the
    /// index `reload_file` keeps from its first reload (a keystroke's file
    /// is not looked for among 100,000 resources), else found among all.
    pub fn resources_in(&self, file: FileId) -> Vec<&DesiredResource> {
        match self.by_file.as_ref().and_then(|by_file| by_file.get(file as usize)) {
            Some(addresses) => (addresses.iter())
                .filter_map(|address| self.desired.resources.get(address))
                .collect(),
            None => (self.desired.resources.values())
                .filter(|r| r.span.file == file)
                .collect(),
        }
    }
}

/// The checks reading `targets` (groups and alert channels) in
/// `desired`'s graph: naming them, or in a group naming them.
fn readers(desired: &Desired, targets: &[Address]) -> Vec<Address> {
    let mut found = Vec::new();
    for target in targets {
        for reader in desired.dependents(target) {
            match reader.kind {
                Kind::Check => found.push(reader.clone()),
                Kind::Group if target.kind == Kind::AlertChannel => found.extend(
                    (desired.dependents(reader).into_iter())
                        .filter(|a| a.kind == Kind::Check)
                        .cloned(),
                ),
                _ => {}
            }
        }
    }
    found
}

/// `list`, sorted by place as a load sorts its diagnostics, without those
/// `replaced` says and with `added` (in the order a load makes them): the
/// same list a load of the whole project gives, repeats removed as it does.
pub fn place(list: &mut Vec<Diagnostic>, replaced: impl Fn(&Diagnostic) -> bool, added: Vec<Diagnostic>) {
    list.retain(|d| !replaced(d));
    list.extend(added);
    // Stable: equal places keep the order they were made in.
    list.sort_by_key(|d| d.span.map(|s| (s.file, s.start)));
    dedup(list);
}
