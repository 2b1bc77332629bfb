//! The linter's findings kept per check (issue 48: a keystroke in the
//! language server at 100,000 checks), so that a file read again re-lints
//! only the checks the edit can affect: each rule reads a check, its group
//! and its alert channels, nothing else, so those are the checks in the
//! file and the checks elsewhere reading a group or channel of it that
//! changed (`reload_file` says which). [`Linted::findings`] gives what
//! [`super::lint`] gives over the whole desired state, in its order.

use std::collections::{BTreeMap, BTreeSet};

use monform_model::{Address, Kind};

use super::{Reader, Route, global_settings_note, leveled, of_kind, unrouted};
use crate::desired::{Desired, DesiredResource};
use crate::diagnostic::Diagnostic;
use crate::project::Lint;

/// Every check's findings, before their levels.
#[derive(Debug)]
pub struct Linted {
    levels: Lint,
    /// The checks with a finding (most have none), by address: the
    /// linter's order.
    checks: BTreeMap<Address, Found>,
    /// The routed checks alerting by the account's global settings (most
    /// checks: the note counts them and names the first three).
    global: BTreeSet<Address>,
}

/// One check's findings.
#[derive(Debug, Default)]
struct Found {
    ignored: Vec<Diagnostic>,
    unrouted: Option<Diagnostic>,
}

impl Linted {
    /// Every check of `desired` linted (both rules at once, as
    /// [`super::lint`] runs them).
    pub fn new(desired: &Desired, levels: Lint) -> Linted {
        let (routes, ignored) = rayon::join(
            || {
                let mut reader = Reader::new(desired);
                let mut global = Vec::new();
                let mut unrouted_checks = Vec::new();
                for resource in of_kind(desired, Kind::Check) {
                    match reader.route(resource) {
                        Route::Unrouted => unrouted_checks.push((resource.address.clone(), unrouted(resource))),
                        Route::Global => global.push(resource.address.clone()),
                        Route::Silent | Route::Own => {}
                    }
                }
                (global, unrouted_checks)
            },
            || {
                let mut reader = Reader::new(desired);
                let mut ignored = Vec::new();
                for resource in of_kind(desired, Kind::Check) {
                    let mut found = Vec::new();
                    reader.ignored(resource, &mut found);
                    if !found.is_empty() {
                        ignored.push((resource.address.clone(), found));
                    }
                }
                ignored
            },
        );
        let (global, unrouted_checks) = routes;
        // Collected in order: the trees are built full, not half empty.
        let mut checks: BTreeMap<Address, Found> = ignored
            .into_iter()
            .map(|(address, ignored)| {
                (
                    address,
                    Found {
                        ignored,
                        unrouted: None,
                    },
                )
            })
            .collect();
        for (address, finding) in unrouted_checks {
            checks.entry(address).or_default().unrouted = Some(finding);
        }
        Linted {
            levels,
            checks,
            global: global.into_iter().collect(),
        }
    }

    /// Whether these are findings at `levels`.
    pub fn levels_are(&self, levels: Lint) -> bool {
        self.levels == levels
    }

    /// The checks at `addresses` linted again over `desired` (a check no
    /// longer in it, or not a check, is forgotten).
    pub fn update<'a>(&mut self, desired: &Desired, addresses: impl IntoIterator<Item = &'a Address>) {
        let mut reader = Reader::new(desired);
        for address in addresses {
            self.checks.remove(address);
            self.global.remove(address);
            let Some(resource) = desired.resources.get(address).filter(|_| address.kind == Kind::Check) else {
                continue;
            };
            let mut found = Found::default();
            reader.ignored(resource, &mut found.ignored);
            match reader.route(resource) {
                Route::Unrouted => found.unrouted = Some(unrouted(resource)),
                Route::Global => {
                    self.global.insert(address.clone());
                }
                Route::Silent | Route::Own => {}
            }
            if !found.ignored.is_empty() || found.unrouted.is_some() {
                self.checks.insert(address.clone(), found);
            }
        }
    }

    /// The findings at their levels, as [`super::lint`] gives them over
    /// `desired` (the desired state these were found in).
    pub fn findings(&self, desired: &Desired) -> (Vec<Diagnostic>, Vec<Diagnostic>) {
        let first: Vec<&DesiredResource> = (self.global.iter().take(3))
            .filter_map(|address| desired.resources.get(address))
            .collect();
        let note = global_settings_note(self.global.len(), &first);
        let ignored = (self.checks.values())
            .flat_map(|found| found.ignored.iter().cloned())
            .collect();
        let unrouted_checks = self
            .checks
            .values()
            .filter_map(|found| found.unrouted.clone())
            .collect();
        leveled(self.levels, note, ignored, unrouted_checks)
    }
}
