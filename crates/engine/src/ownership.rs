//! Who owns the objects of kinds without tags (variables, snippets, alert
//! channels, private locations, status pages and their services).
//!
//! Kinds with tags carry `monform:<project>/<id>`. The others cannot, so
//! each project keeps an ownership record in the service itself: one
//! account variable, `MONFORM_OWNER_<PROJECT>`, whose value lists the remote
//! ids of the project's objects of those kinds. The service is the one
//! thing every project shares whatever its state backend, the record is
//! read with the variables every plan lists anyway (no extra request), and
//! each project writes only its own record, under its apply lock, so
//! projects never race on it. Free-text fields were no option: variables,
//! snippets and alert channels have none, and people edit them.
//!
//! An object of these kinds belongs to the project whose record lists it;
//! failing that, to the one project whose tagged objects alone use it (a
//! snippet only another project's checks run); failing that, to nobody when
//! every project seen in the account (by tags or records) has a record, and
//! to an unknown owner otherwise (a project applied before records existed).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use monform_api::Remote;
use monform_model::Kind;
use monform_model::facts::reference_roots;
use monform_model::wire::referenced_ids;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::identity::{remote_owner, uses_tags};
use crate::state::State;

pub const RECORD_PREFIX: &str = "MONFORM_OWNER_";

/// The key of `project`'s record: upper case, `-` as `_` (variable keys are
/// environment variable names). Two names mapping to one key are told
/// apart by the project named inside.
pub fn record_key(project: &str) -> String {
    format!("{RECORD_PREFIX}{}", project.to_ascii_uppercase().replace('-', "_"))
}

/// Whether an object is an ownership record (never a project's resource).
pub fn is_record(kind: Kind, id: &str) -> bool {
    kind == Kind::Variable && id.starts_with(RECORD_PREFIX)
}

/// One project's record: the remote ids of its objects, by section.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    pub project: String,
    pub owns: BTreeMap<String, BTreeSet<String>>,
}

impl Record {
    /// The record a state implies: its entries of kinds without tags.
    pub fn of_state(state: &State) -> Record {
        let mut owns: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (address, entry) in &state.resources {
            let Ok(address) = address.parse::<monform_model::Address>() else {
                continue;
            };
            if !uses_tags(address.kind) {
                // A replaced object not yet confirmed deleted is still ours.
                owns.entry(address.kind.section().to_owned())
                    .or_default()
                    .extend(std::iter::once(&entry.remote_id).chain(&entry.retired).cloned());
            }
        }
        Record {
            project: state.project.clone(),
            owns,
        }
    }

    /// A record variable's record, if its value is one.
    pub fn parse(remote: &Remote) -> Option<Record> {
        if !is_record(remote.kind, &remote.id) {
            return None;
        }
        serde_json::from_str(remote.field("value")?.as_str()?).ok()
    }

    pub fn contains(&self, kind: Kind, id: &str) -> bool {
        self.owns.get(kind.section()).is_some_and(|ids| ids.contains(id))
    }

    /// The variable's create body.
    pub fn body(&self) -> Value {
        serde_json::json!({
            "key": record_key(&self.project),
            "value": serde_json::to_string(self).unwrap_or_default(),
            "locked": false,
            "secret": false,
        })
    }
}

/// Makes `project`'s record in the service say what `state` owns (written
/// only when it differs from `current`, the record as listed); a project
/// owning nothing keeps none. Returns whether anything was written.
pub async fn write_record(
    client: &monform_api::Client,
    state: &State,
    current: Option<&Record>,
) -> Result<bool, monform_api::Error> {
    let record = Record::of_state(state);
    let key = record_key(&state.project);
    if state.resources.is_empty() {
        return match current {
            None => Ok(false),
            Some(_) => match client.delete(Kind::Variable, &key).await {
                Err(e) if e.status() != Some(404) => Err(e),
                _ => Ok(true),
            },
        };
    }
    if current == Some(&record) {
        return Ok(false);
    }
    let body = record.body();
    let created = match current {
        Some(_) => None,
        None => Some(client.create(Kind::Variable, &body).await),
    };
    match created {
        Some(Ok(_)) => {}
        // There, but unreadable or made meanwhile: overwrite it.
        Some(Err(e)) if e.status() == Some(409) => {
            client.update(Kind::Variable, &key, &body).await?;
        }
        Some(Err(e)) => return Err(e),
        None => {
            client.update(Kind::Variable, &key, &body).await?;
        }
    }
    Ok(true)
}

/// What the account says of an object's owner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Owner {
    /// Listed in this project's record.
    Recorded(String),
    /// In no record, used by this project's tagged objects alone.
    UsedBy(String),
    /// Cannot be told: why.
    Unknown(String),
    /// Made by hand: no project claims or uses it, and every project has a record.
    Nobody,
}

impl Owner {
    /// The project it belongs to, if one is known.
    pub fn project(&self) -> Option<&str> {
        match self {
            Owner::Recorded(p) | Owner::UsedBy(p) => Some(p),
            _ => None,
        }
    }

    /// In words, for messages.
    pub fn describe(&self) -> String {
        match self {
            Owner::Recorded(p) => format!("belongs to project `{p}` (its ownership record {})", record_key(p)),
            Owner::UsedBy(p) => format!("is used only by project `{p}`'s objects, so taken as `{p}`'s"),
            Owner::Unknown(why) => format!("has an owner that cannot be told: {why}"),
            Owner::Nobody => "belongs to no project".to_owned(),
        }
    }
}

/// Owners of the account's objects of kinds without tags.
#[derive(Debug, Default)]
pub struct Owners {
    pub records: BTreeMap<String, Record>,
    /// (kind, remote id) to the project whose record lists it.
    recorded: HashMap<(Kind, String), String>,
    /// Projects whose tags appear on objects.
    tagged: BTreeSet<String>,
    /// (kind without tags, remote id) to the projects of the objects using
    /// it (`None`: an object of no project).
    used_by: HashMap<(Kind, String), BTreeSet<Option<String>>>,
}

impl Owners {
    pub fn new<'a>(objects: impl Iterator<Item = &'a Remote>) -> Owners {
        let objects: Vec<&Remote> = objects.collect();
        let mut owners = Owners::default();
        let mut slugs: HashMap<String, String> = HashMap::new();
        for remote in &objects {
            if let Some(record) = Record::parse(remote) {
                for (section, ids) in &record.owns {
                    let Some(kind) = Kind::ALL.iter().copied().find(|k| k.section() == section) else {
                        continue;
                    };
                    for id in ids {
                        owners.recorded.insert((kind, id.clone()), record.project.clone());
                    }
                }
                owners.records.insert(record.project.clone(), record);
            } else if uses_tags(remote.kind)
                && let Some((project, _)) = remote_owner(remote)
            {
                owners.tagged.insert(project);
            }
            if remote.kind == Kind::PrivateLocation
                && let Some(Value::String(slug)) = remote.field("slugName")
            {
                slugs.insert(slug, remote.id.clone());
            }
        }
        // Users matter only for an object no record lists (`owner` is asked
        // of listed objects): when every one is recorded, as after an
        // apply of every project, nothing is read.
        let unrecorded = objects.iter().any(|r| {
            !uses_tags(r.kind) && !is_record(r.kind, &r.id) && !owners.recorded.contains_key(&(r.kind, r.id.clone()))
        });
        if !unrecorded {
            return owners;
        }
        // The objects without tags each object references, in parallel and
        // from the fields that can hold one (at 100,000 checks whole bodies
        // parsed here were a tenth of a no-op plan's CPU).
        let references: Vec<Vec<(Kind, String)>> = objects
            .par_iter()
            .map(|remote| {
                let roots = Value::Object(remote.fields(reference_roots(remote.kind)));
                referenced_ids(remote.kind, &roots)
                    .into_iter()
                    .filter(|(_, kind, _)| !uses_tags(*kind))
                    .map(|(_, kind, id)| match id {
                        Value::String(s) => (kind, s),
                        other => (kind, other.to_string()),
                    })
                    .collect()
            })
            .collect();
        for (remote, references) in objects.iter().zip(references) {
            let user = if uses_tags(remote.kind) {
                remote_owner(remote).map(|(p, _)| p)
            } else {
                owners.recorded.get(&(remote.kind, remote.id.clone())).cloned()
            };
            for (kind, id) in references {
                let id = if kind == Kind::PrivateLocation {
                    slugs.get(&id).cloned().unwrap_or(id)
                } else {
                    id
                };
                owners.used_by.entry((kind, id)).or_default().insert(user.clone());
            }
        }
        owners
    }

    /// The owner of a listed object of a kind without tags.
    pub fn owner(&self, kind: Kind, id: &str) -> Owner {
        let key = (kind, id.to_owned());
        if let Some(project) = self.recorded.get(&key) {
            return Owner::Recorded(project.clone());
        }
        let users = self.used_by.get(&key);
        let projects: BTreeSet<&String> = users.into_iter().flatten().flatten().collect();
        match projects.len() {
            0 => {}
            1 if users.is_some_and(|u| !u.contains(&None)) => {
                return Owner::UsedBy(projects.into_iter().next().cloned().unwrap_or_default());
            }
            _ => {
                let names: Vec<String> = projects.iter().map(|p| format!("`{p}`")).collect();
                return Owner::Unknown(format!("used by objects of {} and others", names.join(", ")));
            }
        }
        let unrecorded: Vec<String> = self
            .tagged
            .iter()
            .filter(|p| !self.records.contains_key(*p))
            .map(|p| format!("`{p}`"))
            .collect();
        if unrecorded.is_empty() {
            Owner::Nobody
        } else {
            Owner::Unknown(format!(
                "project {} has no ownership record yet (run `monform apply` in it once)",
                unrecorded.join(", ")
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn remote(kind: Kind, id: &str, body: Value) -> Remote {
        Remote::with_id(kind, id, &body)
    }

    #[test]
    fn owners_come_from_records_then_use_then_nobody() {
        let record = Record {
            project: "a".into(),
            owns: BTreeMap::from([("snippets".to_owned(), BTreeSet::from(["1".to_owned()]))]),
        };
        let mut objects = vec![
            remote(Kind::Variable, &record_key("a"), record.body()),
            remote(Kind::Snippet, "1", json!({"name": "Recorded"})),
            remote(Kind::AlertChannel, "7", json!({"type": "EMAIL"})),
            remote(Kind::AlertChannel, "8", json!({"type": "EMAIL"})),
            remote(
                Kind::Check,
                "c",
                json!({"checkType": "API", "tags": ["monform:a/c"],
                    "alertChannelSubscriptions": [{"alertChannelId": 7, "activated": true}]}),
            ),
        ];
        let owners = Owners::new(objects.iter());
        assert_eq!(owners.owner(Kind::Snippet, "1"), Owner::Recorded("a".into()));
        assert_eq!(owners.owner(Kind::AlertChannel, "7"), Owner::UsedBy("a".into()));
        assert_eq!(owners.owner(Kind::AlertChannel, "8"), Owner::Nobody);
        // A project seen by its tags but without a record: nothing unclaimed can be told.
        objects.push(remote(Kind::Group, "g", json!({"tags": ["monform:old/g"]})));
        let owners = Owners::new(objects.iter());
        assert!(matches!(owners.owner(Kind::AlertChannel, "8"), Owner::Unknown(why) if why.contains("`old`")));
        assert_eq!(owners.owner(Kind::Snippet, "1"), Owner::Recorded("a".into()));
    }

    #[test]
    fn record_keys_are_variable_names() {
        assert_eq!(record_key("shop-web_2"), "MONFORM_OWNER_SHOP_WEB_2");
        assert!(is_record(Kind::Variable, "MONFORM_OWNER_SHOP"));
        assert!(!is_record(Kind::Snippet, "MONFORM_OWNER_SHOP"));
    }
}
