//! Quirks of the API that the client works around and the emulator
//! reproduces (api-contract.md, point 1). Users never write these fields.

use crate::Kind;
use crate::resources::CheckType;

/// Free-form fields the API requires in some check bodies even when they
/// mean nothing for the check's type; stored and returned as sent.
pub const FREE_FORM_FIELDS: &[&str] = &["heartbeat", "script"];

/// The check operations whose bodies carry quirks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckOperation {
    /// `POST /v1/checks/{type}`.
    Create(CheckType),
    /// `PUT /v1/checks/{id}`: the generic update.
    GenericUpdate,
    /// `PUT /v1/checks/{type}/{id}`.
    TypedUpdate(CheckType),
}

/// The free-form fields an operation's body must contain.
pub fn required_free_form(operation: CheckOperation) -> &'static [&'static str] {
    match operation {
        CheckOperation::Create(CheckType::Icmp) | CheckOperation::GenericUpdate => FREE_FORM_FIELDS,
        _ => &[],
    }
}

/// Fields an update body must contain although updates are partial: the
/// group update requires `name` (spec 4, `PUT /v2/check-groups/{id}`).
/// The check quirks are `required_free_form`.
pub fn required_on_update(kind: Kind) -> &'static [&'static str] {
    match kind {
        Kind::Group => &["name"],
        _ => &[],
    }
}
