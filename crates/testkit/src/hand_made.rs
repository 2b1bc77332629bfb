//! An account as people make it in the web UI (issue 49 item 2): checks
//! in a few dozen *shapes* (one service's endpoints: the same type,
//! frequency, headers, assertions and tags), within a shape differing in
//! name, URL path and locations. What `import --all-unmanaged` and
//! `export` must fold back into one `forEach` definition per shape.
//!
//! Pure data: each check is an API body with its `checkType` (the
//! emulator's `/v1/checks/{type}` takes it; `Client::create` picks the
//! endpoint from it), posted with `autoAssignAlerts=false`.

use serde_json::{Value, json};

const SERVICES: &[&str] = &[
    "Checkout",
    "Search",
    "Accounts",
    "Billing",
    "Catalog",
    "Inventory",
    "Shipping",
    "Reviews",
    "Payments",
    "Identity",
];

const ENDPOINTS: &[&str] = &[
    "users",
    "orders",
    "carts",
    "items",
    "prices",
    "stock",
    "invoices",
    "refunds",
    "sessions",
    "tokens",
    "reviews",
    "ratings",
    "addresses",
    "labels",
    "parcels",
    "rates",
    "coupons",
    "gift cards",
    "wishlists",
    "returns",
];

const LOCATIONS: &[&[&str]] = &[
    &["eu-west-1"],
    &["us-east-1"],
    &["eu-west-1", "us-east-1"],
    &["ap-southeast-1"],
];

/// `checks` hand-made checks in `shapes` shapes (the checks spread evenly:
/// 1,000 in 40 makes 25 a shape), each as (API path, body).
pub fn hand_made_checks(checks: usize, shapes: usize) -> Vec<(String, Value)> {
    let shapes = shapes.max(1);
    (0..checks)
        .map(|i| {
            let (shape, n) = (i % shapes, i / shapes);
            check(shape, n)
        })
        .collect()
}

fn check(shape: usize, n: usize) -> (String, Value) {
    let service = SERVICES[shape % SERVICES.len()];
    let endpoint = format!(
        "{}{}",
        ENDPOINTS[n % ENDPOINTS.len()],
        match n / ENDPOINTS.len() {
            0 => String::new(),
            round => format!(" {}", round + 1),
        }
    );
    let path = endpoint.replace(' ', "-");
    // Shapes differ in their naming habit too: a prefix or a suffix.
    let name = if shape.is_multiple_of(2) {
        format!("{service} {} – {endpoint}", shape / SERVICES.len() + 1)
    } else {
        format!("{endpoint} ({service} {})", shape / SERVICES.len() + 1)
    };
    let locations = LOCATIONS[(n * 7 + shape) % LOCATIONS.len()];
    let frequency = [1, 5, 10, 15, 30, 60][shape % 6];
    let host = format!("https://{}{}.example.com", service.to_lowercase(), shape);
    let tags = json!([format!("team:{}", shape % 5), "made-by-hand"]);
    let (check_type, body) = match shape % 4 {
        // Plain URL checks of a site's pages.
        0 => (
            "url",
            json!({
                "checkType": "URL",
                "request": {
                    "url": format!("{host}/{path}"),
                    "followRedirects": true,
                    "assertions": [{"source": "STATUS_CODE", "comparison": "EQUALS", "target": "200"}],
                },
            }),
        ),
        // API checks with one of three header sets and assertions.
        _ => {
            let headers = match shape % 3 {
                0 => json!([{"key": "Accept", "value": "application/json"}]),
                1 => {
                    json!([{"key": "Accept", "value": "application/json"}, {"key": "X-Client", "value": "monitoring"}])
                }
                _ => json!([{"key": "User-Agent", "value": "uptime/1.0"}]),
            };
            (
                "api",
                json!({
                    "checkType": "API",
                    "degradedResponseTime": 2000 + 1000 * (shape % 3),
                    "maxResponseTime": 10000,
                    "request": {
                        "method": "GET",
                        "url": format!("{host}/v{}/{path}", shape % 3 + 1),
                        "headers": headers,
                        "assertions": [
                            {"source": "STATUS_CODE", "comparison": "EQUALS", "target": "200"},
                            {"source": "RESPONSE_TIME", "comparison": "LESS_THAN", "target": "1500"},
                        ],
                    },
                }),
            )
        }
    };
    let mut body = body;
    if let Some(map) = body.as_object_mut() {
        map.insert("name".into(), json!(name));
        map.insert("frequency".into(), json!(frequency));
        map.insert("locations".into(), json!(locations));
        map.insert("tags".into(), tags);
        map.insert("activated".into(), json!(true));
    }
    (format!("/v1/checks/{check_type}?autoAssignAlerts=false"), body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thousand_checks_in_forty_shapes_have_distinct_names() {
        let checks = hand_made_checks(1000, 40);
        assert_eq!(checks.len(), 1000);
        let names: std::collections::HashSet<&str> = checks.iter().filter_map(|(_, b)| b["name"].as_str()).collect();
        assert_eq!(names.len(), 1000);
    }
}
