//! The validated resources into the desired state: a logical id defined
//! twice reported, references resolved (a resource made from a `forEach`
//! item pointing at the item too), reference cycles reported.

use super::*;

impl Loader<'_> {
    /// The desired state of the items, unlinked: the caller links it
    /// (`Desired::edges` while the linter runs) and reports its cycles;
    /// and every address the items define, valid or not.
    pub(super) fn build_desired(&mut self, mut kept: Vec<Item>) -> (Desired, FxHashSet<Address>) {
        // A logical id defined again is reported (pointing at both places);
        // the first definition is kept. Filtered in place: items are about
        // 1 KB each, not worth a second vector.
        let mut first_seen: FxHashMap<Address, Span> = FxHashMap::default();
        first_seen.reserve(kept.len());
        kept.retain(|item| {
            if let Some(first) = first_seen.get(&item.address) {
                self.diagnostics.push(
                    Diagnostic::new(
                        "monform::duplicate",
                        format!("duplicate logical id: {} is defined twice", item.address),
                    )
                    .at(item.key_span, "defined again here")
                    .help("logical ids must be unique per section across all files")
                    .related(
                        Diagnostic::new("monform::duplicate", format!("{} is first defined here", item.address))
                            .at(*first, "first definition"),
                    ),
                );
                return false;
            }
            first_seen.insert(item.address.clone(), item.key_span);
            true
        });
        // A reference to a resource that exists but is invalid is not dangling:
        // its own diagnostic says what is wrong.
        let defined: FxHashSet<Address> = first_seen.into_keys().collect();
        let resolved: Vec<(Option<DesiredResource>, Vec<Diagnostic>)> = kept
            .into_par_iter()
            .map(|item| {
                let mut diagnostics = item.diagnostics;
                let references = references(
                    &item.address,
                    item.validated.refs,
                    &item.validated.substituted,
                    &defined,
                    &mut diagnostics,
                );
                if let Some(extent) = item.item {
                    for diagnostic in &mut diagnostics {
                        point_at_item(diagnostic, &item.address, item.key_span, extent);
                    }
                }
                let env_reads = item.validated.sensitive;
                let resource = item.validated.resource.map(|resource| DesiredResource {
                    references,
                    address: item.address,
                    resource,
                    span: item.key_span,
                    own_fields: item.own_fields,
                    sensitive: env_reads.iter().map(|(path, _)| path.clone()).collect(),
                    env_reads,
                });
                (resource, diagnostics)
            })
            .collect();
        let mut resources = Vec::with_capacity(resolved.len());
        for (resource, diagnostics) in resolved {
            self.diagnostics.extend(diagnostics);
            resources.extend(resource);
        }
        (Desired::from_resources(resources), defined)
    }

    /// Reports every reference cycle of `desired` (linked).
    pub(super) fn report_cycles(&mut self, desired: &Desired) {
        for cycle in desired.cycles() {
            let names: Vec<String> = cycle.iter().map(ToString::to_string).collect();
            let span = desired.resources.get(&cycle[0]).map(|r| r.span);
            let mut diagnostic = Diagnostic::new("monform::cycle", format!("reference cycle: {}", names.join(" -> ")));
            if let Some(span) = span {
                diagnostic = diagnostic.at(span, "part of the cycle");
            }
            self.diagnostics
                .push(diagnostic.help("break the cycle: a resource cannot depend on itself, even indirectly"));
        }
    }
}

/// A diagnostic of a resource made from a `forEach` item, pointing into
/// the definition, also points at the item (the `orders:` line); one
/// already inside the item needs nothing more.
fn point_at_item(diagnostic: &mut Diagnostic, address: &Address, key: Span, item: Span) {
    let inside = diagnostic
        .span
        .is_some_and(|s| s.file == item.file && item.start <= s.start && s.start < item.start + item.len);
    if !inside {
        diagnostic
            .related
            .push(Diagnostic::new(diagnostic.code, format!("{address} is made from this item")).at(key, "this item"));
    }
}
