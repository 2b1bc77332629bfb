//! The route table: every route the emulator serves, with a summary. The
//! router and `/openapi.json` are both built from it, so they cannot disagree.

mod alert_channels;
pub(crate) mod checks;
pub mod hooks;
mod meta;
pub mod objects;
pub mod params;
mod ping;
pub(crate) mod reads;
mod session_bodies;
pub(crate) mod sessions;
mod status_pages;

use axum::Router;
use axum::routing::{MethodRouter, delete, get, post, put};
use monform_model::Kind;
use monform_model::resources::CheckType;

use crate::app::AppState;
use objects::handlers::*;

/// One served route.
pub struct Route {
    pub method: &'static str,
    pub path: String,
    pub summary: String,
    /// The kind whose body the route takes, for `/openapi.json`.
    pub body: Option<Kind>,
    pub router: MethodRouter<AppState>,
}

impl Route {
    fn new(
        method: &'static str,
        path: impl Into<String>,
        summary: impl Into<String>,
        router: MethodRouter<AppState>,
    ) -> Route {
        Route {
            method,
            path: path.into(),
            summary: summary.into(),
            body: None,
            router,
        }
    }

    fn taking(mut self, kind: Kind) -> Route {
        self.body = Some(kind);
        self
    }
}

/// Every route of the monitoring API.
pub fn table() -> Vec<Route> {
    let mut routes = vec![
        Route::new(
            "GET",
            "/v1/checks",
            "List checks (filters: tag, checkType, search)",
            get(checks::list),
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
        .taking(Kind::Check),
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
            .taking(Kind::Check),
        );
        routes.push(
            Route::new(
                "PUT",
                format!("/v1/checks/{segment}/{{id}}"),
                format!("Update a {} check", check_type.as_str()),
                put(move |s, c, i, p, b| checks::update_typed(check_type, s, c, i, p, b)),
            )
            .taking(Kind::Check),
        );
    }
    routes.extend(crud(
        Kind::Group,
        "/v1/check-groups",
        "/v2/check-groups",
        "/v1/check-groups/{id}",
        "/v2/check-groups/{id}",
    ));
    routes.push(Route::new(
        "GET",
        "/v1/check-groups/{id}/checks",
        "List a group's checks with its settings applied",
        get(checks::of_group),
    ));
    routes.push(Route::new(
        "GET",
        "/v2/check-groups/{id}/checks",
        "List a group's checks with its settings applied",
        get(checks::of_group),
    ));
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
    routes.push(Route::new(
        "PUT",
        "/v1/alert-channels/{id}/subscriptions",
        "Subscribe a check or group to an alert channel",
        put(alert_channels::subscribe),
    ));
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
        routes.push(Route::new(
            "GET",
            base,
            format!("List {} (cursor)", kind.section()),
            get(move |s, c, p| status_pages::list(kind, s, c, p)),
        ));
        routes.push(
            Route::new(
                "POST",
                base,
                format!("Create a {}", objects::noun(kind)),
                post(move |s, c, p, b| create_h(kind, s, c, p, b)),
            )
            .taking(kind),
        );
        routes.push(Route::new(
            "GET",
            item.clone(),
            format!("Get a {}", objects::noun(kind)),
            get(move |s, c, p| get_h(kind, s, c, p)),
        ));
        routes.push(
            Route::new(
                "PUT",
                item.clone(),
                format!("Update a {}", objects::noun(kind)),
                put(move |s, c, i, p, b| update_h(kind, s, c, i, p, b)),
            )
            .taking(kind),
        );
        routes.push(Route::new(
            "DELETE",
            item,
            format!("Delete a {}", objects::noun(kind)),
            delete(move |s, c, p| delete_h(kind, s, c, p)),
        ));
    }
    routes.extend(meta::routes());
    routes.extend(sessions::routes());
    routes.extend(reads::routes());
    routes.extend(ping::routes());
    routes
}

/// List, create, get, update and delete of one kind.
fn crud(kind: Kind, list: &str, create: &str, item: &str, update: &str) -> Vec<Route> {
    let noun = objects::noun(kind);
    vec![
        Route::new(
            "GET",
            list,
            format!("List {}", kind.section()),
            get(move |s, c, p| list_h(kind, s, c, p)),
        ),
        Route::new(
            "POST",
            create,
            format!("Create a {noun}"),
            post(move |s, c, p, b| create_h(kind, s, c, p, b)),
        )
        .taking(kind),
        Route::new(
            "GET",
            item,
            format!("Get a {noun}"),
            get(move |s, c, p| get_h(kind, s, c, p)),
        ),
        Route::new(
            "PUT",
            update,
            format!("Update a {noun}"),
            put(move |s, c, i, p, b| update_h(kind, s, c, i, p, b)),
        )
        .taking(kind),
        Route::new(
            "DELETE",
            item,
            format!("Delete a {noun}"),
            delete(move |s, c, p| delete_h(kind, s, c, p)),
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
