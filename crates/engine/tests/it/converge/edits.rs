//! A whole project (`Spec`), repaired so it loads, and the random edits
//! made to it between applies.

use super::*;

pub(crate) fn spec() -> impl Strategy<Value = Spec> {
    let sections: Vec<BoxedStrategy<Vec<Option<Slot>>>> = SECTIONS
        .iter()
        .map(|&(section, n)| {
            let presence = if section == "checks" { 0.7 } else { 0.6 };
            (0..n)
                .map(|slot| weighted(presence, (resource(section, slot), 0..FILES.len())))
                .collect::<Vec<_>>()
                .prop_map(|slots| {
                    slots
                        .into_iter()
                        .map(|s| s.map(|(body, file)| Slot { body, file }))
                        .collect()
                })
                .boxed()
        })
        .collect();
    let defaults = weighted(
        0.3,
        (maybe(pick(LOCATIONS)), maybe(pick(TAGS)), maybe(any::<bool>())).prop_map(|(locations, tags, muted)| {
            let mut defaults = Map::new();
            set(&mut defaults, "locations", locations);
            set(&mut defaults, "tags", tags);
            set(&mut defaults, "muted", muted);
            Value::Object(defaults)
        }),
    );
    let secrets = prop::collection::vec("[A-Za-z0-9]{4,16}", SECRETS);
    (defaults, secrets, sections).prop_map(|(defaults, secrets, sections)| {
        repair(Spec {
            defaults,
            secrets,
            sections,
        })
    })
}

/// Removes references to slots that are empty.
pub(crate) fn repair(mut spec: Spec) -> Spec {
    let exists: HashMap<&str, Vec<String>> = SECTIONS
        .iter()
        .enumerate()
        .map(|(i, (section, _))| {
            let ids = spec.sections[i]
                .iter()
                .enumerate()
                .filter(|(_, s)| s.is_some())
                .map(|(slot, _)| logical_id(section, slot))
                .collect();
            (*section, ids)
        })
        .collect();
    let has = |section: &str, id: &Value| exists[section].iter().any(|e| Some(e.as_str()) == id.as_str());
    for (i, (section, _)) in SECTIONS.iter().enumerate() {
        for slot in spec.sections[i].iter_mut().flatten() {
            let Some(body) = slot.body.as_object_mut() else {
                continue;
            };
            let fields: &[(&str, &str)] = match *section {
                "checks" => &[
                    ("group", "groups"),
                    ("alertChannels", "alertChannels"),
                    ("privateLocations", "privateLocations"),
                    ("setupSnippet", "snippets"),
                    ("tearDownSnippet", "snippets"),
                ],
                "groups" => &[
                    ("alertChannels", "alertChannels"),
                    ("privateLocations", "privateLocations"),
                    ("setupSnippet", "snippets"),
                ],
                _ => &[],
            };
            for (field, target) in fields {
                match body.get_mut(*field) {
                    Some(Value::Array(ids)) => ids.retain(|id| has(target, id)),
                    Some(id) if !has(target, id) => {
                        body.remove(*field);
                    }
                    _ => {}
                }
            }
            if body
                .get("triggerIncident")
                .is_some_and(|t| !has("statusPageServices", &t["service"]))
            {
                body.remove("triggerIncident");
            }
            if let Some(Value::Array(cards)) = body.get_mut("cards") {
                for card in cards {
                    if let Some(Value::Array(ids)) = card.get_mut("services") {
                        ids.retain(|id| has("statusPageServices", id));
                    }
                }
            }
        }
    }
    spec
}

// ---- mutation ----

#[derive(Debug, Clone, Copy)]
pub(crate) enum Choice {
    /// The resource as it was.
    Keep,
    /// The other version's resource (added when there was none).
    Other,
    /// The resource with one field taken from the other version (set, changed or removed).
    Tweak,
    /// No resource.
    Drop,
}

pub(crate) fn choice() -> impl Strategy<Value = Choice> {
    prop_oneof![4 => Just(Choice::Keep), 3 => Just(Choice::Other), 3 => Just(Choice::Tweak), 2 => Just(Choice::Drop)]
}

/// Fields changed together by a tweak (rules span them).
pub(crate) const COUPLED: &[&[&str]] = &[
    &["frequency", "frequencyOffset"],
    &["degradedPacketLossThreshold", "maxPacketLossThreshold"],
    &["degradedResponseTime", "maxResponseTime"],
];

pub(crate) fn tweak(base: &Value, other: &Value, pick: Index) -> Value {
    let variant = |v: &Value| (v.get("checkType").cloned(), v.get("type").cloned());
    if variant(base) != variant(other) {
        return other.clone();
    }
    let (Some(from), Some(to)) = (base.as_object(), other.as_object()) else {
        return other.clone();
    };
    let mut keys: Vec<&String> = from
        .keys()
        .chain(to.keys())
        .filter(|k| !matches!(k.as_str(), "checkType" | "type" | "slugName"))
        .collect();
    keys.sort();
    keys.dedup();
    if keys.is_empty() {
        return base.clone();
    }
    let key = pick.get(&keys).as_str();
    let together: Vec<&str> = COUPLED
        .iter()
        .find(|c| c.contains(&key))
        .map_or_else(|| vec![key], |c| c.to_vec());
    let mut out = from.clone();
    for key in together {
        match to.get(key) {
            Some(value) => out.insert(key.to_owned(), value.clone()),
            None => out.remove(key),
        };
    }
    Value::Object(out)
}

#[derive(Debug, Clone)]
pub(crate) struct Mutation {
    pub(crate) other: Spec,
    pub(crate) choices: Vec<Choice>,
    pub(crate) picks: Vec<Index>,
}

pub(crate) fn mutation() -> impl Strategy<Value = Mutation> {
    let total: usize = SECTIONS.iter().map(|(_, n)| n).sum::<usize>() + SECRETS + 1;
    (
        spec(),
        prop::collection::vec(choice(), total),
        prop::collection::vec(any::<Index>(), total),
    )
        .prop_map(|(other, choices, picks)| Mutation { other, choices, picks })
}

pub(crate) fn mutate(base: &Spec, mutation: &Mutation) -> Spec {
    let mut next = base.clone();
    let mut n = 0;
    let mut next_choice = || {
        n += 1;
        (mutation.choices[n - 1], mutation.picks[n - 1])
    };
    for (i, slots) in next.sections.iter_mut().enumerate() {
        for (slot, current) in slots.iter_mut().enumerate() {
            let other = &mutation.other.sections[i][slot];
            *current = match (next_choice(), current.take(), other) {
                ((Choice::Keep, _), current, _) => current,
                ((Choice::Drop, _), ..) => None,
                ((Choice::Other, _), _, other) => other.clone(),
                ((Choice::Tweak, pick), Some(current), Some(other)) => Some(Slot {
                    body: tweak(&current.body, &other.body, pick),
                    file: other.file,
                }),
                ((Choice::Tweak, _), current, _) => current,
            };
        }
    }
    for (i, secret) in next.secrets.iter_mut().enumerate() {
        if let (Choice::Other | Choice::Tweak, _) = next_choice() {
            *secret = mutation.other.secrets[i].clone();
        }
    }
    if let (Choice::Other | Choice::Tweak, _) = next_choice() {
        next.defaults = mutation.other.defaults.clone();
    }
    repair(next)
}
