//! The layers around every route (outermost first): the request log and
//! `/-/metrics` ([`observe`]), added latency and injected faults
//! ([`inject`]), the per-key rate limit and the limit of failed
//! authentications per client address ([`limit`]). Each reads its state
//! from [`App`](crate::app::App); the state and its rules live in
//! `observe`, `faults` and `ratelimit`, which know nothing of `App`.

use std::net::SocketAddr;
use std::time::Instant;

use axum::extract::{ConnectInfo, MatchedPath, Request, State};
use axum::http::{HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::app::AppState;
use crate::error::ApiError;
use crate::faults::{Injected, Picked, is_write};
use crate::ratelimit::is_exempt;

/// Logs and counts every request, by its route template (not its URL, so ids
/// do not explode the label set).
pub async fn observe(State(app): State<AppState>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = request.method().as_str().to_owned();
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_owned(), |p| p.as_str().to_owned());
    let response = next.run(request).await;
    let fault = response.extensions().get::<Injected>().map(|i| i.0);
    let status = match fault {
        Some(fault) => fault.status_label().to_owned(),
        None => response.status().as_u16().to_string(),
    };
    if route != "/-/metrics" {
        app.metrics.record_label(&method, &route, &status);
        if let Some(fault) = fault {
            app.metrics.record_fault(&method, &route, fault.name());
        }
    }
    let duration_ms = started.elapsed().as_secs_f64() * 1000.0;
    match fault {
        Some(fault) => {
            tracing::info!(target: "monform::emulator", %method, %route, %status, fault = fault.name(), duration_ms, "request (injected fault)")
        }
        // Every request at info drowns what matters (start, faults, agents);
        // RUST_LOG=debug shows them.
        None => tracing::debug!(target: "monform::emulator", %method, %route, %status, duration_ms, "request"),
    }
    response
}

/// `GET /-/metrics`: the counters in the Prometheus text format.
pub async fn metrics(State(app): State<AppState>) -> Response {
    (
        [(axum::http::header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        app.metrics.render(),
    )
        .into_response()
}

/// The middleware: adds the latency, then maybe fails the request.
pub async fn inject(State(app): State<AppState>, request: Request, next: Next) -> Response {
    let exempt = request
        .extensions()
        .get::<MatchedPath>()
        .is_some_and(|p| is_exempt(p.as_str()));
    if exempt {
        return next.run(request).await;
    }
    if !app.faults.latency.is_zero() {
        tokio::time::sleep(app.faults.latency).await;
    }
    let write = is_write(request.method());
    let fault = match app.faults.picked(request.method(), request.uri().path()) {
        Some(Picked::LostWrite) if write => return crate::faults::LOST_WRITE.scope(true, next.run(request)).await,
        Some(Picked::Fault(fault)) => Some(fault),
        _ => app.faults.next(write),
    };
    match fault {
        None if write && app.faults.lose_next_write() => crate::faults::LOST_WRITE.scope(true, next.run(request)).await,
        None => next.run(request).await,
        Some(fault) if fault.after_commit() => {
            // Handled for real; its response is what gets lost.
            drop(next.run(request).await);
            fault.response()
        }
        Some(fault) => fault.response(),
    }
}

/// The middleware: refuses an address that failed to authenticate too
/// often (`AuthFailures`, counting the 401s answered), then counts the
/// request against its key's budget.
pub async fn limit(State(app): State<AppState>, request: Request, next: Next) -> Response {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_owned(), |p| p.as_str().to_owned());
    if is_exempt(&route) {
        return next.run(request).await;
    }
    let address = request.extensions().get::<ConnectInfo<SocketAddr>>().map(|c| c.0.ip());
    if let Some(address) = address
        && let Some(wait) = app.auth_failures.blocked(address, Instant::now())
    {
        let seconds = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
        return ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            format!("too many requests without a valid key from this address; retry after {seconds} s"),
        )
        .with_header("retry-after", seconds.max(1))
        .into_response();
    }
    let response = per_key(&app, &route, request, next).await;
    if response.status() == StatusCode::UNAUTHORIZED
        && let Some(address) = address
    {
        app.auth_failures.failed(address, Instant::now());
    }
    response
}

/// The per-key budget of `limit`.
async fn per_key(app: &AppState, route: &str, request: Request, next: Next) -> Response {
    if !app.limiter.enabled() {
        return next.run(request).await;
    }
    let route = route.to_owned();
    let (parts, body) = request.into_parts();
    let key = crate::auth::bearer(&parts)
        .filter(|key| matches!(app.store.account_of(key), Ok(Some(_))))
        .map(str::to_owned);
    let request = Request::from_parts(parts, body);
    let Some(key) = key else {
        return next.run(request).await;
    };
    let Some(decision) = app.limiter.check(&key, &route, Instant::now()) else {
        return next.run(request).await;
    };
    if !decision.allowed {
        let window = app.limiter.budget(&route).map_or(0, |(_, l)| l.window.as_secs());
        let mut error = ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            format!(
                "rate limit of {} requests per {window} s exceeded for this API key; retry after {} s",
                decision.limit,
                decision.reset_seconds()
            ),
        )
        .with_header("retry-after", decision.reset_seconds());
        for (name, value) in decision.headers() {
            error = error.with_header(name, value);
        }
        return error.into_response();
    }
    let mut response = next.run(request).await;
    for (name, value) in decision.headers() {
        if let Ok(value) = HeaderValue::from_str(&value) {
            response.headers_mut().insert(name, value);
        }
    }
    response
}
