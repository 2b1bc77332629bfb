//! Stored objects of any kind: what each kind is called in messages, and
//! reading one or answering 404.

use monform_model::Kind;
use serde_json::Value;

use crate::error::{ApiError, ApiResult};
use crate::store::Objects;

/// The name of a kind in messages ("check group 12 not found").
pub fn noun(kind: Kind) -> &'static str {
    match kind {
        Kind::Check => "check",
        Kind::Group => "check group",
        Kind::Snippet => "snippet",
        Kind::Variable => "environment variable",
        Kind::AlertChannel => "alert channel",
        Kind::MaintenanceWindow => "maintenance window",
        Kind::StatusPage => "status page",
        Kind::StatusPageService => "status page service",
        Kind::Dashboard => "dashboard",
        Kind::PrivateLocation => "private location",
        // monform-only (`Kind::is_local`): the service stores none.
        Kind::Slo => "service level objective",
    }
}

/// Reads a stored object or answers 404.
pub fn load(db: &rusqlite::Connection, account: &str, kind: Kind, id: &str) -> ApiResult<Value> {
    db.get(account, kind.section(), id)?
        .ok_or_else(|| ApiError::not_found(noun(kind), id))
}
