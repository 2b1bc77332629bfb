//! The route table: every route the emulator serves, with a summary and
//! what `/openapi.json` needs to describe it (body, query parameters,
//! statuses). The router and the document are both built from it, so they
//! cannot disagree.

pub mod admin;
mod agents;
mod alert_channels;
pub(crate) mod checks;
pub mod hooks;
mod meta;
pub mod objects;
pub mod pages;
pub mod params;
mod ping;
mod present;
pub(crate) mod reads;
mod session_bodies;
pub(crate) mod sessions;
mod shapes;
mod status_pages;
mod stored;

use axum::Router;
use axum::http::StatusCode;
use axum::routing::{MethodRouter, delete, get, post, put};
use monform_model::Kind;
use monform_model::resources::CheckType;
use serde_json::{Value, json};

use crate::app::AppState;
use objects::handlers::*;

/// One served route.
pub struct Route {
    pub method: &'static str,
    pub path: String,
    pub summary: String,
    /// The body the route takes, for `/openapi.json`.
    pub body: Option<Body>,
    /// The status of a success.
    pub success: StatusCode,
    /// Statuses the route answers beyond those `/openapi.json` derives
    /// from its method, path and body (409 on a clash, 408 on a wait...).
    pub statuses: Vec<StatusCode>,
    /// Query parameters.
    pub query: Vec<Query>,
    pub router: MethodRouter<AppState>,
}

/// What a route's body is, for `/openapi.json`.
#[derive(Debug, Clone, Copy)]
pub enum Body {
    /// A kind's create body.
    Create(Kind),
    /// A kind's (partial) update body.
    Update(Kind),
    /// `POST /v1/checks/{type}`.
    CheckCreate(CheckType),
    /// `PUT /v1/checks/{type}/{id}`, or the generic `PUT /v1/checks/{id}` (`None`).
    CheckUpdate(Option<CheckType>),
    /// A body the handler checks itself (sessions, subscriptions): its
    /// schema, kept next to the handler, and whether it may be left out.
    Json { schema: fn() -> Value, required: bool },
}

/// A query parameter a route reads, for `/openapi.json`.
pub struct Query {
    pub name: &'static str,
    /// Its JSON Schema (arrays: repeated or comma-separated values).
    pub schema: Value,
    pub required: bool,
}

impl Route {
    fn new(
        method: &'static str,
        path: impl Into<String>,
        summary: impl Into<String>,
        router: MethodRouter<AppState>,
    ) -> Route {
        let success = match method {
            "POST" => StatusCode::CREATED,
            "DELETE" => StatusCode::NO_CONTENT,
            _ => StatusCode::OK,
        };
        Route {
            method,
            path: path.into(),
            summary: summary.into(),
            body: None,
            success,
            statuses: Vec::new(),
            query: Vec::new(),
            router,
        }
    }

    fn taking(mut self, body: Body) -> Route {
        self.body = Some(body);
        self
    }

    fn succeeding(mut self, status: StatusCode) -> Route {
        self.success = status;
        self
    }

    fn answering(mut self, statuses: &[StatusCode]) -> Route {
        self.statuses.extend_from_slice(statuses);
        self
    }

    fn with_query(self, name: &'static str, schema: Value) -> Route {
        self.query_parameter(name, schema, false)
    }

    fn requiring_query(self, name: &'static str, schema: Value) -> Route {
        self.query_parameter(name, schema, true)
    }

    fn query_parameter(mut self, name: &'static str, schema: Value, required: bool) -> Route {
        self.query.push(Query { name, schema, required });
        self
    }

    /// `limit` and `page` (`paging`).
    fn paged(self) -> Route {
        self.with_query(
            "limit",
            json!({ "type": "integer", "minimum": 1, "maximum": params::MAX_LIMIT }),
        )
        .with_query("page", json!({ "type": "integer", "minimum": 1, "maximum": u32::MAX }))
    }

    /// `autoAssignAlerts` of creates and updates.
    fn assigning(self) -> Route {
        self.with_query("autoAssignAlerts", json!({ "type": "boolean" }))
    }
}

/// Every route of the monitoring API.
pub fn table() -> Vec<Route> {
    let mut routes = vec![
        Route::new(
            "GET",
            "/v1/checks",
            "List checks (filters: tag, any of them; checkType, search, status)",
            get(checks::list),
        )
        .paged()
        .with_query("tag", json!({ "type": "array", "items": { "type": "string" } }))
        .with_query(
            "checkType",
            json!({ "type": "string", "enum": CheckType::ALL.iter().map(|t| t.as_str()).collect::<Vec<_>>() }),
        )
        .with_query("search", json!({ "type": "string" }))
        .with_query(
            "status",
            json!({ "type": "string", "enum": ["passing", "failing", "degraded"] }),
        ),
        Route::new(
            "GET",
            "/v1/checks/{id}",
            "Get a check",
            get(|s, c, p| get_h(Kind::Check, s, c, p)),
        ),
        Route::new(
            "PUT",
            "/v1/checks/{id}",
            "Update a check (heartbeat and script required)",
            put(checks::update_generic),
        )
        .taking(Body::CheckUpdate(None))
        .assigning(),
        Route::new(
            "DELETE",
            "/v1/checks/{id}",
            "Delete a check",
            delete(|s, c, p| delete_h(Kind::Check, s, c, p)),
        ),
    ];
    for &check_type in CheckType::ALL {
        let segment = check_type.path_segment();
        routes.push(
            Route::new(
                "POST",
                format!("/v1/checks/{segment}"),
                format!("Create a {} check", check_type.as_str()),
                post(move |s, c, p, b| checks::create(check_type, s, c, p, b)),
            )
            .taking(Body::CheckCreate(check_type))
            .assigning(),
        );
        routes.push(
            Route::new(
                "PUT",
                format!("/v1/checks/{segment}/{{id}}"),
                format!("Update a {} check", check_type.as_str()),
                put(move |s, c, i, p, b| checks::update_typed(check_type, s, c, i, p, b)),
            )
            .taking(Body::CheckUpdate(Some(check_type)))
            .assigning(),
        );
    }
    routes.extend(crud(
        Kind::Group,
        "/v1/check-groups",
        "/v2/check-groups",
        "/v1/check-groups/{id}",
        "/v2/check-groups/{id}",
    ));
    for path in ["/v1/check-groups/{id}/checks", "/v2/check-groups/{id}/checks"] {
        routes.push(
            Route::new(
                "GET",
                path,
                "List a group's checks with its settings applied",
                get(checks::of_group),
            )
            .paged(),
        );
    }
    routes.extend(crud(
        Kind::Snippet,
        "/v1/snippets",
        "/v1/snippets",
        "/v1/snippets/{id}",
        "/v1/snippets/{id}",
    ));
    routes.extend(crud(
        Kind::Variable,
        "/v1/variables",
        "/v1/variables",
        "/v1/variables/{id}",
        "/v1/variables/{id}",
    ));
    routes.extend(crud(
        Kind::AlertChannel,
        "/v1/alert-channels",
        "/v1/alert-channels",
        "/v1/alert-channels/{id}",
        "/v1/alert-channels/{id}",
    ));
    routes.push(
        Route::new(
            "PUT",
            "/v1/alert-channels/{id}/subscriptions",
            "Subscribe a check or group to an alert channel",
            put(alert_channels::subscribe),
        )
        .taking(Body::Json {
            schema: alert_channels::subscription_schema,
            required: true,
        }),
    );
    routes.extend(crud(
        Kind::MaintenanceWindow,
        "/v1/maintenance-windows",
        "/v1/maintenance-windows",
        "/v1/maintenance-windows/{id}",
        "/v1/maintenance-windows/{id}",
    ));
    routes.extend(crud(
        Kind::Dashboard,
        "/v1/dashboards",
        "/v1/dashboards",
        "/v1/dashboards/{id}",
        "/v1/dashboards/{id}",
    ));
    routes.extend(crud(
        Kind::PrivateLocation,
        "/v1/private-locations",
        "/v1/private-locations",
        "/v1/private-locations/{id}",
        "/v1/private-locations/{id}",
    ));
    for (kind, base) in [
        (Kind::StatusPage, "/v1/status-pages"),
        (Kind::StatusPageService, "/v1/status-pages/services"),
    ] {
        let item = format!("{base}/{{id}}");
        routes.push(
            Route::new(
                "GET",
                base,
                format!("List {} (cursor)", kind.section()),
                get(move |s, c, p| status_pages::list(kind, s, c, p)),
            )
            .with_query(
                "limit",
                json!({ "type": "integer", "minimum": 1, "maximum": params::MAX_LIMIT }),
            )
            .with_query("nextId", json!({ "type": "string" })),
        );
        routes.extend(writes(kind, base, &item, &item));
    }
    routes.push(
        Route::new(
            "GET",
            "/v1/status-pages/incidents",
            "List status page incidents opened by checks (cursor, newest first)",
            get(status_pages::list_incidents),
        )
        .with_query(
            "limit",
            json!({ "type": "integer", "minimum": 1, "maximum": params::MAX_LIMIT }),
        )
        .with_query("nextId", json!({ "type": "string" }))
        .with_query("serviceId", json!({ "type": "string" })),
    );
    routes.push(Route::new(
        "GET",
        "/v1/status-pages/incidents/{id}",
        "Get a status page incident",
        get(status_pages::get_incident),
    ));
    routes.extend(meta::routes());
    routes.extend(sessions::routes());
    routes.extend(reads::routes());
    routes.extend(ping::routes());
    routes.extend(agents::routes());
    routes
}

/// List, create, get, update and delete of one kind.
fn crud(kind: Kind, list: &str, create: &str, item: &str, update: &str) -> Vec<Route> {
    let mut routes = vec![
        Route::new(
            "GET",
            list,
            format!("List {}", kind.section()),
            get(move |s, c, p| list_h(kind, s, c, p)),
        )
        .paged(),
    ];
    routes.extend(writes(kind, create, item, update));
    routes
}

/// Create, get, update and delete of one kind.
fn writes(kind: Kind, create: &str, item: &str, update: &str) -> Vec<Route> {
    let noun = objects::noun(kind);
    let clash = |route: Route, on: bool| {
        if on {
            route.answering(&[StatusCode::CONFLICT])
        } else {
            route
        }
    };
    vec![
        clash(
            Route::new(
                "POST",
                create,
                format!("Create a {noun}"),
                post(move |s, c, p, b| create_h(kind, s, c, p, b)),
            ),
            hooks::clashes_on_create(kind),
        )
        .taking(Body::Create(kind))
        .succeeding(hooks::create_status(kind))
        .assigning(),
        Route::new(
            "GET",
            item,
            format!("Get a {noun}"),
            get(move |s, c, p| get_h(kind, s, c, p)),
        ),
        clash(
            Route::new(
                "PUT",
                update,
                format!("Update a {noun}"),
                put(move |s, c, i, p, b| update_h(kind, s, c, i, p, b)),
            ),
            hooks::unique_field(kind).is_some(),
        )
        .taking(Body::Update(kind))
        .assigning(),
        clash(
            Route::new(
                "DELETE",
                item,
                format!("Delete a {noun}"),
                delete(move |s, c, p| delete_h(kind, s, c, p)),
            ),
            hooks::refuses_delete_while_used(kind),
        ),
    ]
}

/// The router for `table()`.
pub fn router(routes: Vec<Route>) -> Router<AppState> {
    let mut router = Router::new();
    for route in routes {
        router = router.route(&route.path, route.router);
    }
    router
}
