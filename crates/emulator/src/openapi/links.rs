//! OpenAPI links (issue 28): from each create to the reads, updates and
//! deletes of what it created (a heartbeat check's to its ping, a key's to
//! its revocation), from session triggers to the session's reads,
//! completion, cancel and results, and from the listings of what no API
//! call creates (runtimes, maintenances, incidents) to their items. Stateful tools (Schemathesis' stateful phase, generated
//! workflows) follow them to reach the operations that need an id, which
//! they cannot make up.

use monform_model::Kind;
use monform_model::resources::CheckType;
use serde_json::{Map, Value, json};

use crate::routes::{Body, Route};

/// Where the ids of `kind` appear in paths: the path up to the id's
/// parameter. A route whose path continues there with a parameter (and
/// maybe more segments) takes that kind's id.
fn prefixes(kind: Kind) -> &'static [&'static str] {
    match kind {
        Kind::Check => &[
            "/v1/checks/",
            "/v1/check-results/",
            "/v2/check-results/",
            "/v1/error-groups/checks/",
        ],
        Kind::Group => &["/v1/check-groups/", "/v2/check-groups/"],
        Kind::Snippet => &["/v1/snippets/"],
        Kind::Variable => &["/v1/variables/"],
        Kind::AlertChannel => &["/v1/alert-channels/"],
        Kind::MaintenanceWindow => &["/v1/maintenance-windows/"],
        Kind::StatusPage => &["/v1/status-pages/"],
        Kind::StatusPageService => &["/v1/status-pages/services/"],
        Kind::Dashboard => &["/v1/dashboards/"],
        Kind::PrivateLocation => &["/v1/private-locations/"],
        // monform-only: the service has no SLO API.
        Kind::Slo => &[],
    }
}

/// The path parameters of `path`, in order.
fn parameters(path: &str) -> Vec<&str> {
    path.split('/')
        .filter_map(|s| s.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
        .collect()
}

/// Whether `route` takes one id of `kind` (of `check_type`, for the
/// routes of one check type: typed updates, analytics), and by which
/// parameter.
fn takes(route: &Route, kind: Kind, check_type: Option<CheckType>) -> Option<&str> {
    let params = parameters(&route.path);
    let [param] = params.as_slice() else {
        return None;
    };
    if kind == Kind::Check {
        if let Some(Body::CheckUpdate(Some(typed))) = route.body {
            return (Some(typed) == check_type).then_some(param);
        }
        let analytics = check_type.and_then(monform_model::reports::analytics_endpoint);
        if analytics.is_some_and(|a| route.path.starts_with(&format!("/v1/analytics/{a}/"))) {
            return Some(param);
        }
    }
    prefixes(kind)
        .iter()
        .any(|prefix| {
            route
                .path
                .strip_prefix(prefix)
                .is_some_and(|rest| rest.starts_with(&format!("{{{param}}}")))
        })
        .then_some(param)
}

/// One link per target, named by its operation id.
fn link_to(links: &mut Map<String, Value>, target: &str, parameters: Value) {
    links.insert(
        target.to_owned(),
        json!({ "operationId": target, "parameters": parameters }),
    );
}

/// The links of `route`'s success response (`ids[i]` is the operation id
/// of `routes[i]`).
pub fn links(route: &Route, routes: &[Route], ids: &[String]) -> Map<String, Value> {
    let mut links = Map::new();
    let all = || routes.iter().zip(ids);
    // A create: everything that takes the created object's id.
    let created = match (route.method, route.body) {
        ("POST", Some(Body::Create(kind))) => Some((kind, None)),
        ("POST", Some(Body::CheckCreate(t))) => Some((Kind::Check, Some(t))),
        _ => None,
    };
    if let Some((kind, check_type)) = created {
        for (target, id) in all() {
            if let Some(param) = takes(target, kind, check_type) {
                let value = format!("$response.body#/{}", kind.id_field());
                link_to(&mut links, id, json!({ param: value }));
            }
        }
    }
    match route.path.as_str() {
        "/v2/check-sessions/trigger" => {
            for (target, id) in all() {
                let session = parameters(&target.path) == ["checkSessionId"];
                if session {
                    let value = "$response.body#/sessions/0/checkSessionId";
                    link_to(&mut links, id, json!({ "checkSessionId": value }));
                } else if let Some(param) = takes(target, Kind::Check, None).filter(|_| target.method == "GET") {
                    link_to(&mut links, id, json!({ param: "$response.body#/sessions/0/checkId" }));
                }
            }
        }
        "/v1/test-sessions/trigger" => {
            for (target, id) in all() {
                if parameters(&target.path) == ["testSessionId"] {
                    link_to(
                        &mut links,
                        id,
                        json!({ "testSessionId": "$response.body#/testSessionId" }),
                    );
                }
            }
        }
        "/v1/maintenance-windows/{id}/maintenances" => {
            for (target, id) in all() {
                if target.path == "/v1/maintenance-windows/{id}/maintenances/{maintenanceId}" {
                    let values = json!({ "id": "$request.path.id", "maintenanceId": "$response.body#/0/id" });
                    link_to(&mut links, id, values);
                }
            }
        }
        "/v1/private-locations/{id}/keys" if route.method == "POST" => {
            for (target, id) in all() {
                if target.path == "/v1/private-locations/{id}/keys/{keyId}" {
                    let values = json!({ "id": "$request.path.id", "keyId": "$response.body#/id" });
                    link_to(&mut links, id, values);
                }
            }
        }
        "/v1/runtimes" => {
            for (target, id) in all() {
                if target.path == "/v1/runtimes/{id}" {
                    link_to(&mut links, id, json!({ "id": "$response.body#/0/name" }));
                }
            }
        }
        "/v1/checks/heartbeat" => {
            for (target, id) in all() {
                if target.path == "/ping/{token}" {
                    link_to(
                        &mut links,
                        id,
                        json!({ "token": "$response.body#/heartbeat/pingToken" }),
                    );
                }
            }
        }
        "/v1/status-pages/incidents" => {
            for (target, id) in all() {
                if target.path == "/v1/status-pages/incidents/{id}" {
                    link_to(&mut links, id, json!({ "id": "$response.body#/entries/0/id" }));
                }
            }
        }
        _ => {}
    }
    links
}
