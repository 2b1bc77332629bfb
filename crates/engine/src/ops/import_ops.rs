//! `monform import ADDRESS REMOTE_ID`: adopting one existing object under
//! a logical id of the files, never one another project owns.

use monform_api::{Client, Remote};
use monform_model::{Address, Kind};

use super::{Refusal, Session};
use crate::export::adopted_entry;
use crate::identity::{ownership_tag, remote_owner, retag_body, uses_tags};
use crate::ownership::{Owners, write_record};

/// Why an object cannot be imported.
#[derive(Debug, thiserror::Error)]
pub enum ImportRefusal {
    #[error("{0} is not in the files: add it first, then import the object under it")]
    NotInFiles(Address),
    #[error("a variable's logical id is its key: import `{0}` as variables.{0}")]
    VariableKey(String),
    #[error("{address} is already in the state (remote id {remote_id}); `monform state rm {address}` first")]
    InState { address: Address, remote_id: String },
    #[error("object {remote_id} is already managed as {other}")]
    Managed { remote_id: String, other: String },
    #[error("no {section} with id {remote_id} in the account")]
    NotFound { section: &'static str, remote_id: String },
    /// Another project owns it (`how`: by tag, record or use).
    #[error(
        "{section} {remote_id} {how}; it stays `{project}`'s (remove it there first: `monform state rm`, then `monform apply`)"
    )]
    OwnedBy {
        section: &'static str,
        remote_id: String,
        how: String,
        project: String,
    },
    #[error(
        "object {remote_id} is owned by project `{project}` as {section}.{id}; remove it there first (`monform state rm`)"
    )]
    Tagged {
        remote_id: String,
        project: String,
        section: &'static str,
        id: String,
    },
}

/// What an import did.
#[derive(Debug)]
pub struct Imported {
    /// Writing the project's ownership record (kinds without tags) failed:
    /// the object is in the state, but other projects may not see it as
    /// this one's until the next apply writes the record.
    pub record_error: Option<monform_api::Error>,
}

/// Writes `project`'s ownership tag for `address` on an object.
pub async fn write_tag(
    client: &Client,
    project: &str,
    address: &Address,
    remote: &Remote,
) -> Result<Remote, monform_api::Error> {
    let tag = ownership_tag(project, &address.id);
    let body = retag_body(address.kind, &remote.body(), project, Some(&tag));
    client.update(address.kind, &remote.id, &body).await
}

/// Every object of the account, every kind listed once.
pub async fn list_everything(client: &Client) -> Result<Vec<Remote>, monform_api::Error> {
    let lists = futures_util::future::try_join_all(Kind::ALL.iter().map(|&kind| client.list_all(kind))).await?;
    Ok(lists.into_iter().flatten().collect())
}

/// Adopts the object `remote_id` as `address` (which the files define):
/// its ownership tag is written (kinds with tags) or the project's
/// ownership record updated (the rest), and the state records it, under
/// the project's lock.
pub async fn import_one(session: &Session<'_>, address: &Address, remote_id: &str) -> Result<Imported, Refusal> {
    super::environment_chosen(session.project)?;
    let refuse = |r| Err(Refusal::Import(r));
    if !session.desired.resources.contains_key(address) {
        return refuse(ImportRefusal::NotInFiles(address.clone()));
    }
    if address.kind == Kind::Variable && address.id != remote_id {
        return refuse(ImportRefusal::VariableKey(remote_id.to_owned()));
    }
    let project = &session.project.name;
    let command = format!("monform import {address} {remote_id}");
    let _lock = session.backend.lock(&command).map_err(Refusal::Lock)?;
    let mut state = session.backend.load(project).map_err(Refusal::State)?;
    if let Some(entry) = state.resources.get(&address.to_string()) {
        return refuse(ImportRefusal::InState {
            address: address.clone(),
            remote_id: entry.remote_id.clone(),
        });
    }
    let section = address.kind.section();
    if let Some((other, _)) = state
        .resources
        .iter()
        .find(|(a, e)| a.starts_with(&format!("{section}.")) && e.remote_id == remote_id)
    {
        return refuse(ImportRefusal::Managed {
            remote_id: remote_id.to_owned(),
            other: other.clone(),
        });
    }
    let client = session.client;
    let object = |doing: &'static str| {
        move |e| Refusal::Object {
            address: address.clone(),
            doing,
            error: Box::new(e),
        }
    };
    let remote = client
        .get(address.kind, remote_id)
        .await
        .map_err(object("read the object to import as"))?
        .ok_or_else(|| {
            Refusal::Import(ImportRefusal::NotFound {
                section,
                remote_id: remote_id.to_owned(),
            })
        })?;
    let (remote, record) = if uses_tags(address.kind) {
        let remote = match remote_owner(&remote) {
            Some((p, id)) if p == *project && id == address.id => remote,
            Some((p, id)) => {
                return refuse(ImportRefusal::Tagged {
                    remote_id: remote_id.to_owned(),
                    project: p.to_owned(),
                    section,
                    id: id.to_owned(),
                });
            }
            None => write_tag(client, project, address, &remote)
                .await
                .map_err(object("write the ownership tag of"))?,
        };
        (remote, None)
    } else {
        let everything = list_everything(client).await.map_err(Refusal::Fetch)?;
        let owners = Owners::new(everything.iter());
        let owner = owners.owner(address.kind, &remote.id);
        if let Some(other) = owner.project().filter(|p| *p != project) {
            return refuse(ImportRefusal::OwnedBy {
                section,
                remote_id: remote_id.to_owned(),
                how: owner.describe(),
                project: other.to_owned(),
            });
        }
        let record = owners.records.get(project).cloned();
        (remote, Some(record))
    };
    let entry = adopted_entry(&state, session.desired, address, &remote);
    state.resources.insert(address.to_string(), entry);
    state.serial += 1;
    session.backend.save(&state).map_err(Refusal::State)?;
    let record_error = match record {
        Some(current) => write_record(client, &state, current.as_ref()).await.err(),
        None => None,
    };
    Ok(Imported { record_error })
}
