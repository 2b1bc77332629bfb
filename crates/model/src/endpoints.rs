//! Where each kind lives in the API (api-contract.md, "Endpoints per kind"):
//! the client calls these paths and the emulator serves them.

use crate::Kind;
use crate::resources::CheckType;

/// How a kind's list is paged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listing {
    /// `limit` + `page`, bare array, `Content-Range`.
    Pages,
    /// `limit` + `nextId`, body `{entries, nextId, length}`.
    Cursor,
}

/// The paths of one kind. `{id}` stands for the object's id.
#[derive(Debug, Clone, Copy)]
pub struct Endpoints {
    pub list: &'static str,
    pub listing: Listing,
    /// Checks are created per type: `{type}` stands for `CheckType::path_segment`.
    pub create: &'static str,
    pub read: &'static str,
    pub update: &'static str,
    pub delete: &'static str,
    /// Create and update take `autoAssignAlerts` (checks and groups).
    pub auto_assign_alerts: bool,
}

impl Kind {
    pub fn endpoints(self) -> Endpoints {
        let simple = |list: &'static str, item: &'static str| Endpoints {
            list,
            listing: Listing::Pages,
            create: list,
            read: item,
            update: item,
            delete: item,
            auto_assign_alerts: false,
        };
        match self {
            Kind::Check => Endpoints {
                create: "/v1/checks/{type}",
                update: "/v1/checks/{type}/{id}",
                auto_assign_alerts: true,
                ..simple("/v1/checks", "/v1/checks/{id}")
            },
            Kind::Group => Endpoints {
                create: "/v2/check-groups",
                update: "/v2/check-groups/{id}",
                auto_assign_alerts: true,
                ..simple("/v1/check-groups", "/v1/check-groups/{id}")
            },
            Kind::Snippet => simple("/v1/snippets", "/v1/snippets/{id}"),
            Kind::Variable => simple("/v1/variables", "/v1/variables/{id}"),
            Kind::AlertChannel => simple("/v1/alert-channels", "/v1/alert-channels/{id}"),
            Kind::MaintenanceWindow => simple("/v1/maintenance-windows", "/v1/maintenance-windows/{id}"),
            Kind::StatusPage => Endpoints {
                listing: Listing::Cursor,
                ..simple("/v1/status-pages", "/v1/status-pages/{id}")
            },
            Kind::StatusPageService => Endpoints {
                listing: Listing::Cursor,
                ..simple("/v1/status-pages/services", "/v1/status-pages/services/{id}")
            },
            Kind::Dashboard => simple("/v1/dashboards", "/v1/dashboards/{id}"),
            Kind::PrivateLocation => simple("/v1/private-locations", "/v1/private-locations/{id}"),
            // Local (`Kind::is_local`): the service has no SLO API; the
            // client never sends these (the fetcher lists `Kind::REMOTE`,
            // the executor records local changes in the state only). A
            // path under no API version, so a slip is a 404, not a write.
            Kind::Slo => simple("/monform-local/slos", "/monform-local/slos/{id}"),
        }
    }
}

/// Fills `{id}` and `{type}` in an endpoint path.
pub fn path(template: &str, id: Option<&str>, check_type: Option<CheckType>) -> String {
    let mut path = template.to_owned();
    if let Some(id) = id {
        path = path.replace("{id}", &encode(id));
    }
    if let Some(t) = check_type {
        path = path.replace("{type}", t.path_segment());
    }
    path
}

/// Percent-encodes an id for a path segment (variable keys are user text).
fn encode(id: &str) -> String {
    id.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_filled() {
        let e = Kind::Check.endpoints();
        assert_eq!(path(e.create, None, Some(CheckType::MultiStep)), "/v1/checks/multistep");
        assert_eq!(
            path(e.update, Some("abc"), Some(CheckType::Icmp)),
            "/v1/checks/icmp/abc"
        );
        assert_eq!(
            path(Kind::Variable.endpoints().read, Some("A B"), None),
            "/v1/variables/A%20B"
        );
    }
}
