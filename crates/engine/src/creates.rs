//! A create's fields, built when asked rather than kept in the plan: they
//! are the whole object again (500 MB held at once by a cold apply of
//! 100,000 checks). The differ leaves a create with the paths of its
//! references to objects also being created (`Change::deferred`).

use std::borrow::Cow;

use monform_config::Desired;
use monform_model::sensitive::redact;
use monform_model::{Address, FieldPath};
use rayon::prelude::*;

use crate::forms::{leaves, managed, sensitive_paths};
use crate::plan::{Change, FieldChange, Plan};

impl Plan {
    /// Builds every create's fields now ([`Change::fields_in`]), for front
    /// ends that show or read the whole plan.
    pub fn fill_create_fields(&mut self, desired: &Desired) {
        self.changes.par_iter_mut().for_each(|change| {
            if change.deferred.is_some() {
                change.fields = change.fields_in(desired).into_owned();
                change.deferred = None;
            }
        });
    }
}

impl Change {
    /// The fields this change sets or clears: a create's built now from
    /// the files (`desired`, those it was planned from).
    pub fn fields_in<'a>(&'a self, desired: &Desired) -> Cow<'a, [FieldChange]> {
        match &self.deferred {
            None => Cow::Borrowed(&self.fields),
            Some(created_refs) => Cow::Owned(create_fields(&self.address, desired, created_refs)),
        }
    }
}

/// A create's fields (`Change::fields_in`): every leaf of the resource as
/// the files will make it, secrets masked; a reference to an object also
/// being created (`created_refs`) is known after apply.
fn create_fields(address: &Address, desired_all: &Desired, created_refs: &[String]) -> Vec<FieldChange> {
    let Some(resource) = desired_all.resources.get(address) else {
        return Vec::new();
    };
    let desired = managed(address.kind, resource.resource.to_json());
    let sensitive = sensitive_paths(address.kind, &desired, &resource.sensitive);
    let leaves = leaves(&desired, &FieldPath::root());
    let mut fields = Vec::with_capacity(leaves.len());
    for (path, value) in leaves {
        let key = path.to_string();
        let secret = sensitive.contains(&path);
        fields.push(FieldChange {
            after: (!secret).then(|| redact(value, &path, &sensitive)),
            // The reference's own path, or an item of it (`alertChannels[0]`
            // under `alertChannels`): compared without a string per pair.
            known_after_apply: created_refs.iter().any(|r| {
                r.strip_prefix(key.as_str())
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with('['))
            }),
            path: key,
            before: None,
            sensitive: secret,
            drift: false,
            cleared: false,
            conflict: None,
        });
    }
    fields
}
