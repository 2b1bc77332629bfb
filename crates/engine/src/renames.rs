//! Renames that would lose history: a plan that deletes an object and
//! creates one of the same kind and variant whose managed fields are equal
//! or nearly so suggests a `moved` declaration instead (issue 20, item 3).
//!
//! The rule (ARCHITECTURE.md, "Rename suggestions"): the created object's
//! top-level managed fields, as the files set them, are compared with the
//! deleted object's the way a plan compares (sets as sets, defaults and
//! absent alike, secrets skipped); at most one may differ (usually the
//! name), and one besides the variant tag must be equal. So a check whose
//! request, script or hostname changed as well is not suggested.
//! No per-kind field list: the kind's variant tag and the comparison facts
//! of the model decide.

use std::collections::BTreeSet;

use monform_config::Desired;
use monform_model::facts::{facts, variant_of};
use monform_model::{Address, Segment};

use crate::actual::Actual;
use crate::compare::differences;
use crate::forms::{ActualView, Names, managed};
pub use crate::plan::SuggestedMove;
use crate::plan::{Action, Change};

/// How many top-level fields may differ: the name, usually. Defaults
/// count as set (the files' form has them filled), so a share of the
/// fields would let two checks of one type that probe different targets
/// pass for one.
const MAX_DIFFERING: usize = 1;

/// Pairs each created object with the deleted one most like it, each used once.
pub fn suggest_moves(changes: &[Change], desired: &Desired, actual: &Actual) -> Vec<SuggestedMove> {
    let deleted: Vec<&Change> = changes
        .iter()
        .filter(|c| c.action == Action::Delete && actual.owned.contains_key(&c.address))
        .collect();
    if deleted.is_empty() {
        return Vec::new();
    }
    let names = Names::new(actual);
    let mut candidates: Vec<(usize, Address, Address, String)> = Vec::new();
    for created in changes.iter().filter(|c| c.action == Action::Create) {
        let Some(resource) = desired.resources.get(&created.address) else {
            continue;
        };
        let want = managed(created.address.kind, resource.resource.to_json());
        let Some(fields) = want.as_object().map(|o| o.len()).filter(|&n| n > 0) else {
            continue;
        };
        let variant = variant_of(created.address.kind, &want);
        for gone in deleted.iter().filter(|d| d.address.kind == created.address.kind) {
            let remote = &actual.owned[&gone.address];
            let view = ActualView::new(gone.address.kind, remote, &names);
            if variant_of(gone.address.kind, &remote.body()) != variant {
                continue;
            }
            let differing: BTreeSet<String> =
                differences(&want, &|f| view.get(f), facts(created.address.kind, &want), &[])
                    .into_iter()
                    .filter_map(|d| match d.path.segments().first() {
                        Some(Segment::Key(k)) => Some(k.clone()),
                        _ => None,
                    })
                    .collect();
            let tag = usize::from(!variant.is_empty());
            if differing.len() > MAX_DIFFERING || fields - differing.len() <= tag {
                continue;
            }
            let what = if variant.is_empty() {
                gone.address.kind.to_string()
            } else {
                format!("{variant} {}", gone.address.kind)
            };
            let reason = format!("both {what}, {} of {fields} fields equal", fields - differing.len());
            candidates.push((differing.len(), gone.address.clone(), created.address.clone(), reason));
        }
    }
    // Fewest differences first; ties by address, so the pairing is stable.
    candidates.sort();
    let mut used_from = BTreeSet::new();
    let mut used_to = BTreeSet::new();
    let mut moves = Vec::new();
    for (_, from, to, reason) in candidates {
        if used_from.contains(&from) || used_to.contains(&to) {
            continue;
        }
        used_from.insert(from.clone());
        used_to.insert(to.clone());
        moves.push(SuggestedMove { from, to, reason });
    }
    moves.sort_by(|a, b| a.to.cmp(&b.to));
    moves
}
