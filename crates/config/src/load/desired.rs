//! The validated resources into the desired state: a logical id defined
//! twice reported, references resolved (a resource made from a `forEach`
//! item pointing at the item too), reference cycles reported. A mistake
//! in a `forEach` definition is reported once, naming the items it is in.

use super::*;

impl Loader<'_> {
    /// The desired state of the items, unlinked: the caller links it
    /// (`Desired::edges` while the linter runs) and reports its cycles;
    /// and every address the items define, valid or not.
    pub(super) fn build_desired(&mut self, mut kept: Vec<Vec<Item>>) -> (Desired, Defined) {
        // A logical id defined again is reported (pointing at both places);
        // the first definition is kept. The set of every address defined
        // is built in the same pass (a map to each first place, then the
        // set of its keys, hashed every address twice on the load's main
        // thread), from addresses copied in parallel; the first places are
        // looked up only for ids defined again.
        let addresses: Vec<Address> = kept
            .par_iter()
            .flat_map_iter(|items| items.iter().map(|item| item.address.clone()))
            .collect();
        let mut defined: FxHashSet<Address> = FxHashSet::default();
        defined.reserve(addresses.len());
        let mut again = Vec::new();
        for (i, address) in addresses.into_iter().enumerate() {
            if !defined.insert(address) {
                again.push(i);
            }
        }
        if !again.is_empty() {
            let mut all: Vec<Item> = kept.into_iter().flatten().collect();
            self.report_duplicates(&mut all, &again);
            kept = vec![all];
        }
        // A reference to a resource that exists but is invalid is not dangling:
        // its own diagnostic says what is wrong.
        let resolved: Vec<Resolved> = kept
            .into_par_iter()
            .flat_map_iter(|items| items.into_iter().map(|item| resolve(item, &defined)))
            .collect();
        let mut resources = Vec::with_capacity(resolved.len());
        let mut in_definitions = Vec::new();
        let mut invalid = Vec::new();
        for resolved in resolved {
            self.diagnostics.extend(resolved.diagnostics);
            in_definitions.extend(resolved.in_definition);
            match resolved.resource {
                Ok(resource) => resources.push(resource),
                Err(address) => invalid.push(address),
            }
        }
        self.diagnostics.extend(merge_items(in_definitions));
        (Desired::from_resources(resources), Defined { all: defined, invalid })
    }

    /// Reports the items at `again` (positions in `kept`, in order), each
    /// defining an address an earlier item defines, and removes them.
    fn report_duplicates(&mut self, kept: &mut Vec<Item>, again: &[usize]) {
        let repeated: FxHashSet<&Address> = again.iter().map(|&i| &kept[i].address).collect();
        let mut first: FxHashMap<&Address, Span> = FxHashMap::default();
        for item in kept.iter().filter(|item| repeated.contains(&item.address)) {
            first.entry(&item.address).or_insert(item.key_span);
        }
        for &i in again {
            let item = &kept[i];
            // Always there: an earlier item defines it.
            let Some(&first) = first.get(&item.address) else {
                continue;
            };
            self.diagnostics.push(
                Diagnostic::new(
                    "monform::duplicate",
                    format!("duplicate logical id: {} is defined twice", item.address),
                )
                .at(item.key_span, "defined again here")
                .help("logical ids must be unique per section across all files")
                .related(
                    Diagnostic::new("monform::duplicate", format!("{} is first defined here", item.address))
                        .at(first, "first definition"),
                ),
            );
        }
        drop((repeated, first));
        let mut position = 0;
        let mut again = again.iter().peekable();
        kept.retain(|_| {
            let repeated = again.next_if_eq(&&position).is_some();
            position += 1;
            !repeated
        });
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

/// Every address the items define, valid or not (a reference to an
/// invalid resource is not dangling: its own diagnostic says what is
/// wrong), and those whose resource is invalid (not in the desired state),
/// with their key: what reloading one file compares (`reload.rs`).
#[derive(Debug, Default)]
pub(crate) struct Defined {
    pub all: FxHashSet<Address>,
    pub invalid: Vec<(Address, Span)>,
}

/// One item made a resource: its references resolved against `defined`.
pub(super) struct Resolved {
    /// The resource, or the address and key of an invalid one.
    pub resource: Result<DesiredResource, (Address, Span)>,
    pub diagnostics: Vec<Diagnostic>,
    /// Those pointing into a `forEach` definition, merged over its items
    /// (`merge_items`).
    pub in_definition: Vec<FromItem>,
}

/// Resolves one item's references and makes it a resource (when valid).
pub(super) fn resolve(item: Item, defined: &FxHashSet<Address>) -> Resolved {
    let mut diagnostics = item.diagnostics;
    let references = references(
        &item.address,
        item.validated.refs,
        &item.validated.substituted,
        defined,
        &mut diagnostics,
    );
    // Those in the definition, not the item, are the same in
    // every item: merged below.
    let mut in_definition = Vec::new();
    if let Some(extent) = item.item {
        let (outside, inside) = diagnostics.into_iter().partition(|d| !is_inside(d, extent));
        diagnostics = inside;
        in_definition = outside
            .into_iter()
            .map(|diagnostic| FromItem {
                diagnostic,
                address: item.address.clone(),
                key: item.key_span,
            })
            .collect();
    }
    let env_reads = item.validated.sensitive;
    let resource = match item.validated.resource {
        Some(resource) => Ok(DesiredResource {
            references,
            address: item.address,
            resource,
            span: item.key_span,
            own_fields: item.own_fields,
            sensitive: env_reads.iter().map(|(path, _)| path.clone()).collect(),
            env_reads,
        }),
        None => Err((item.address, item.key_span)),
    };
    Resolved {
        resource,
        diagnostics,
        in_definition,
    }
}

/// Whether `diagnostic` points inside a `forEach` item's own text.
fn is_inside(diagnostic: &Diagnostic, item: Span) -> bool {
    diagnostic
        .span
        .is_some_and(|s| s.file == item.file && item.start <= s.start && s.start < item.start + item.len)
}

/// A diagnostic of a resource made from a `forEach` item that points into
/// the definition, with the item it was found in.
pub(super) struct FromItem {
    diagnostic: Diagnostic,
    address: Address,
    /// The item's key (the `orders:` line).
    key: Span,
}

/// Items named in a merged diagnostic before "and N more".
const ITEMS_NAMED: usize = 5;

/// One diagnostic per mistake in a definition: those of its items that say
/// the same but for the item's address become one, addressed
/// `section.id[*]` and naming the items; one found in a single item points
/// at that item too (the `orders:` line).
pub(super) fn merge_items(found: Vec<FromItem>) -> Vec<Diagnostic> {
    type Key = (Address, &'static str, String, Option<Span>, String);
    let mut groups: Vec<(Diagnostic, Vec<FromItem>)> = Vec::new();
    // Keyed, not compared pairwise: a mistake in a forEach of 10,000 items
    // is 10,000 diagnostics.
    let mut index: FxHashMap<Key, Vec<usize>> = FxHashMap::default();
    for from in found {
        let definition = split_item(&from.address).0;
        let general = generalised(&from.diagnostic, &from.address, &definition.to_string());
        let key = (
            definition,
            general.code,
            general.message.clone(),
            general.span,
            general.label.clone(),
        );
        let candidates = index.entry(key).or_default();
        // Same key but not equal (other help or related places): kept apart.
        match candidates.iter().find(|&&i| groups[i].0 == general) {
            Some(&i) => groups[i].1.push(from),
            None => {
                candidates.push(groups.len());
                groups.push((general, vec![from]));
            }
        }
    }
    groups
        .into_iter()
        .map(|(mut general, mut items)| {
            if items.len() == 1 {
                let FromItem {
                    mut diagnostic,
                    address,
                    key,
                } = items.remove(0);
                diagnostic.related.push(
                    Diagnostic::new(diagnostic.code, format!("{address} is made from this item")).at(key, "this item"),
                );
                return diagnostic;
            }
            let keys: Vec<&str> = items.iter().map(|i| split_item(&i.address).1).collect();
            let named = keys.iter().take(ITEMS_NAMED).copied().collect::<Vec<_>>().join(", ");
            general.message = match keys.len() - keys.len().min(ITEMS_NAMED) {
                0 => format!("{}\nin {} items of the forEach: {named}", general.message, keys.len()),
                more => format!(
                    "{}\nin {} items of the forEach: {named} and {more} more",
                    general.message,
                    keys.len()
                ),
            };
            general
        })
        .collect()
}

/// `checks.api[users]` as its definition's address for every item,
/// `checks.api[*]`, and its key, `users`.
fn split_item(address: &Address) -> (Address, &str) {
    let (id, key) = address
        .id
        .split_once('[')
        .map_or((address.id.as_str(), ""), |(id, rest)| (id, rest.trim_end_matches(']')));
    (Address::new(address.kind, format!("{id}[*]")), key)
}

/// `diagnostic` with `address` written as `every` (`checks.api[*]`)
/// wherever it says it.
fn generalised(diagnostic: &Diagnostic, address: &Address, every: &str) -> Diagnostic {
    let name = address.to_string();
    let mut general = diagnostic.clone();
    general.message = general.message.replace(&name, every);
    general.label = general.label.replace(&name, every);
    general.help = general.help.map(|h| h.replace(&name, every));
    for related in &mut general.related {
        *related = generalised(related, address, every);
    }
    general
}
