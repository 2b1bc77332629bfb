//! The requests of the contract test: valid ones, for every operation of
//! the reference the emulator serves, in an order that gives each the ids
//! it needs (objects created first, sessions run before results are read,
//! deletes last).

use reqwest::Method;
use serde_json::{Value, json};

use super::common::{TestServer, bodies, check_bodies};

/// One request and its answer.
pub struct Exchange {
    pub method: String,
    /// The path as the reference writes it (`/v1/checks/{id}`).
    pub template: String,
    pub status: u16,
    pub body: Value,
}

struct Recorder<'a> {
    ts: &'a TestServer,
    exchanges: Vec<Exchange>,
}

impl Recorder<'_> {
    /// Sends `method path` (with `body`) and records it under `template`.
    async fn send(&mut self, method: Method, template: &str, path: &str, body: Option<Value>) -> Value {
        let (status, answer) = self.ts.call(method.clone(), path, body.as_ref()).await;
        assert!(status < 500, "{method} {path}: {status} {answer}");
        self.exchanges.push(Exchange {
            method: method.to_string(),
            template: template.to_owned(),
            status,
            body: answer.clone(),
        });
        answer
    }

    async fn get(&mut self, template: &str, path: &str) -> Value {
        self.send(Method::GET, template, path, None).await
    }

    async fn post(&mut self, template: &str, path: &str, body: Value) -> Value {
        self.send(Method::POST, template, path, Some(body)).await
    }

    async fn put(&mut self, template: &str, path: &str, body: Value) -> Value {
        self.send(Method::PUT, template, path, Some(body)).await
    }

    async fn delete(&mut self, template: &str, path: &str) {
        self.send(Method::DELETE, template, path, None).await;
    }
}

fn id(object: &Value) -> String {
    // Dashboards are named by `dashboardId` (their `id` is a number beside it).
    match object.get("dashboardId").unwrap_or(&object["id"]) {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Runs the scenario and returns every exchange.
pub async fn run(ts: &TestServer) -> Vec<Exchange> {
    let mut r = Recorder {
        ts,
        exchanges: Vec::new(),
    };
    // Objects every later request refers to.
    let channel = r
        .post(
            "/v1/alert-channels",
            "/v1/alert-channels",
            bodies::email_channel("ops@example.com"),
        )
        .await;
    let group = r
        .post("/v2/check-groups", "/v2/check-groups", bodies::group("Group"))
        .await;
    let snippet = r.post("/v1/snippets", "/v1/snippets", bodies::snippet("Snippet")).await;
    let variable = json!({ "key": "BASE_URL", "value": "https://example.com" });
    r.post("/v1/variables", "/v1/variables", variable).await;
    let location = r
        .post(
            "/v1/private-locations",
            "/v1/private-locations",
            json!({ "name": "Office", "slugName": "office" }),
        )
        .await;
    let service = r
        .post(
            "/v1/status-pages/services",
            "/v1/status-pages/services",
            json!({ "name": "API" }),
        )
        .await;
    let page = r
        .post(
            "/v1/status-pages",
            "/v1/status-pages",
            json!({ "name": "Shop", "url": "shop", "cards": [{ "name": "Backend", "services": [{ "id": service["id"] }] }] }),
        )
        .await;
    let dashboard = r
        .post(
            "/v1/dashboards",
            "/v1/dashboards",
            json!({ "header": "Shop", "customUrl": "shop-board" }),
        )
        .await;
    let window = r
        .post(
            "/v1/maintenance-windows",
            "/v1/maintenance-windows",
            json!({ "name": "Upgrade", "startsAt": "2030-01-01T00:00:00.000Z", "endsAt": "2030-01-01T01:00:00.000Z", "tags": ["db"] }),
        )
        .await;

    // Checks: one of each type the reference creates, then reads and updates.
    let mut checks = Vec::new();
    for (segment, _, mut body) in check_bodies() {
        if matches!(segment, "agentic" | "playwright") {
            continue;
        }
        body["groupId"] = group["id"].clone();
        body["alertChannelSubscriptions"] = json!([{ "alertChannelId": channel["id"], "activated": true }]);
        body["tags"] = json!(["contract"]);
        let template = format!("/v1/checks/{segment}");
        let created = r
            .post(&template, &format!("{template}?autoAssignAlerts=false"), body)
            .await;
        checks.push((segment, id(&created)));
    }
    let api = checks
        .iter()
        .find(|(s, _)| *s == "api")
        .map(|(_, i)| i.clone())
        .unwrap();
    let browser = checks
        .iter()
        .find(|(s, _)| *s == "browser")
        .map(|(_, i)| i.clone())
        .unwrap();
    r.get("/v1/checks", "/v1/checks?limit=100").await;
    r.get("/v1/checks", "/v1/checks?tag=contract&status=passing").await;
    for (segment, check) in &checks {
        r.get("/v1/checks/{id}", &format!("/v1/checks/{check}")).await;
        let template = format!("/v1/checks/{segment}/{{id}}");
        r.put(
            &template,
            &format!("/v1/checks/{segment}/{check}"),
            json!({ "muted": false }),
        )
        .await;
    }
    let generic = json!({ "name": "Api renamed", "heartbeat": {}, "script": "" });
    r.put("/v1/checks/{id}", &format!("/v1/checks/{api}"), generic).await;
    let g = id(&group);
    r.get("/v1/check-groups", "/v1/check-groups").await;
    r.get("/v1/check-groups/{id}", &format!("/v1/check-groups/{g}")).await;
    r.put(
        "/v2/check-groups/{id}",
        &format!("/v2/check-groups/{g}"),
        json!({ "name": "Group 2" }),
    )
    .await;
    r.get("/v1/check-groups/{id}/checks", &format!("/v1/check-groups/{g}/checks"))
        .await;
    r.get("/v2/check-groups/{id}/checks", &format!("/v2/check-groups/{g}/checks"))
        .await;

    // The other kinds: list, read, update.
    let c = id(&channel);
    r.put(
        "/v1/alert-channels/{id}/subscriptions",
        &format!("/v1/alert-channels/{c}/subscriptions"),
        json!({ "groupId": group["id"], "activated": true }),
    )
    .await;
    let others = [
        ("/v1/snippets", id(&snippet), json!({ "name": "Snippet 2" })),
        (
            "/v1/variables",
            "BASE_URL".to_owned(),
            json!({ "value": "https://example.org" }),
        ),
        ("/v1/alert-channels", c.clone(), json!({ "sendRecovery": false })),
        ("/v1/maintenance-windows", id(&window), json!({ "name": "Upgrade 2" })),
        ("/v1/dashboards", id(&dashboard), json!({ "header": "Shop 2" })),
        ("/v1/status-pages", id(&page), json!({ "name": "Shop 2" })),
        ("/v1/status-pages/services", id(&service), json!({ "name": "API 2" })),
        ("/v1/private-locations", id(&location), json!({ "name": "Office 2" })),
    ];
    for (base, object, change) in &others {
        r.get(base, base).await;
        let item = format!("{base}/{{id}}");
        r.get(&item, &format!("{base}/{object}")).await;
        r.put(&item, &format!("{base}/{object}"), change.clone()).await;
    }
    let w = id(&window);
    let maintenances = r
        .get(
            "/v1/maintenance-windows/{id}/maintenances",
            &format!("/v1/maintenance-windows/{w}/maintenances"),
        )
        .await;
    let maintenance = id(&maintenances[0]);
    r.send(
        Method::PATCH,
        "/v1/maintenance-windows/{id}/maintenances/{maintenanceId}",
        &format!("/v1/maintenance-windows/{w}/maintenances/{maintenance}"),
        Some(json!({ "endsAt": "2030-01-01T02:00:00.000Z" })),
    )
    .await;
    r.get("/v1/runtimes", "/v1/runtimes").await;
    r.get("/v1/runtimes/{id}", "/v1/runtimes/2025.04").await;
    r.get("/v1/locations", "/v1/locations").await;

    // Sessions, then what they recorded.
    let target = json!({ "target": { "checkId": [api, browser] } });
    let triggered = r
        .post("/v2/check-sessions/trigger", "/v2/check-sessions/trigger", target)
        .await;
    for session in triggered["sessions"].as_array().into_iter().flatten() {
        let s = session["checkSessionId"].as_str().unwrap_or_default().to_owned();
        r.get(
            "/v2/check-sessions/{checkSessionId}/completion",
            &format!("/v2/check-sessions/{s}/completion?maxWaitSeconds=10"),
        )
        .await;
        r.get(
            "/v2/check-sessions/{checkSessionId}",
            &format!("/v2/check-sessions/{s}"),
        )
        .await;
    }
    let cancelled = r
        .post(
            "/v2/check-sessions/trigger",
            "/v2/check-sessions/trigger",
            json!({ "target": { "checkId": [api] } }),
        )
        .await;
    let s = cancelled["sessions"][0]["checkSessionId"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    r.send(
        Method::POST,
        "/v1/check-sessions/{checkSessionId}/cancel",
        &format!("/v1/check-sessions/{s}/cancel"),
        None,
    )
    .await;
    let test = json!({ "name": "Contract", "runLocation": "eu-west-1", "target": { "checkId": [api] } });
    let session = r
        .post("/v1/test-sessions/trigger", "/v1/test-sessions/trigger", test)
        .await;
    let t = session["testSessionId"].as_str().unwrap_or_default().to_owned();
    r.get(
        "/v1/test-sessions/{testSessionId}/completion",
        &format!("/v1/test-sessions/{t}/completion?maxWaitSeconds=10"),
    )
    .await;
    r.get("/v1/test-sessions/{testSessionId}", &format!("/v1/test-sessions/{t}"))
        .await;
    r.get("/v1/check-results/{checkId}", &format!("/v1/check-results/{api}"))
        .await;
    r.get("/v2/check-results/{checkId}", &format!("/v2/check-results/{api}"))
        .await;
    r.get("/v1/alert-notifications", "/v1/alert-notifications").await;
    r.get("/v1/check-alerts", "/v1/check-alerts").await;
    r.get(
        "/v1/error-groups/checks/{checkId}",
        &format!("/v1/error-groups/checks/{api}"),
    )
    .await;
    r.get(
        "/v1/analytics/api-checks/{id}",
        &format!("/v1/analytics/api-checks/{api}?metrics=responseTime_avg,availability"),
    )
    .await;
    r.get(
        "/v1/analytics/browser-checks/{id}",
        &format!("/v1/analytics/browser-checks/{browser}?metrics=TTFB_avg,availability&groupBy=runLocation"),
    )
    .await;
    r.get("/v1/reporting", "/v1/reporting").await;

    // Errors the reference lists: an unknown id, an invalid body, no key.
    r.get("/v1/checks/{id}", "/v1/checks/00000000-0000-4000-8000-000000000000")
        .await;
    r.post("/v1/checks/api", "/v1/checks/api", json!({ "name": 5 })).await;
    let (status, body) =
        super::common::parts(ts.client.get(ts.url("/v1/checks")).send().await.expect("request sent")).await;
    r.exchanges.push(Exchange {
        method: "GET".into(),
        template: "/v1/checks".into(),
        status,
        body,
    });

    // Deletes last, in dependency order.
    for (_, check) in &checks {
        r.delete("/v1/checks/{id}", &format!("/v1/checks/{check}")).await;
    }
    r.delete("/v1/check-groups/{id}", &format!("/v1/check-groups/{g}"))
        .await;
    for (base, object, _) in &others {
        r.delete(&format!("{base}/{{id}}"), &format!("{base}/{object}")).await;
    }
    r.exchanges
}
