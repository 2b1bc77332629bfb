//! Realistic check bodies (the files' form) of every check type, valid under
//! the model: what the benchmarks generate by the thousand. References
//! (groups, channels, snippets) are the caller's to add.

use serde_json::{Value, json};

use crate::resources::CheckType;

/// The type-specific fields of sample check `n` of `check_type`.
pub fn check_spec(check_type: CheckType, n: usize) -> Value {
    match check_type {
        CheckType::Url => json!({
            "request": {
                "url": format!("https://www.example.com/page/{n}"),
                "followRedirects": true,
                "assertions": [{ "source": "STATUS_CODE", "comparison": "EQUALS", "target": "200" }],
            },
            "degradedResponseTime": 2000,
            "maxResponseTime": 5000,
        }),
        CheckType::Api => json!({
            "request": {
                "method": "POST",
                "url": format!("https://api.example.com/orders/{n}"),
                "bodyType": "JSON",
                "body": "{\"dryRun\": true}",
                "headers": [{ "key": "Content-Type", "value": "application/json" }],
                "assertions": [
                    { "source": "STATUS_CODE", "comparison": "LESS_THAN", "target": "300" },
                    { "source": "JSON_BODY", "property": "$.status", "comparison": "EQUALS", "target": "accepted" },
                ],
            },
            "retryStrategy": {
                "type": "LINEAR", "baseBackoffSeconds": 30, "maxRetries": 2, "maxDurationSeconds": 120,
                "sameRegion": true,
            },
        }),
        CheckType::Tcp => json!({ "request": { "hostname": format!("db-{n}.internal.example.com"), "port": 5432 } }),
        CheckType::Dns => json!({
            "request": {
                "query": format!("host-{n}.example.com"),
                "recordType": "A",
                "nameServer": "1.1.1.1",
                "port": 53,
                "protocol": "UDP",
                "assertions": [{ "source": "RESPONSE_CODE", "comparison": "EQUALS", "target": "NOERROR" }],
            },
        }),
        CheckType::Icmp => json!({
            "request": { "hostname": format!("gw-{n}.example.com"), "ipFamily": "IPv4", "pingCount": 10 },
            "degradedPacketLossThreshold": 5,
            "maxPacketLossThreshold": 25,
        }),
        CheckType::Browser => json!({
            "script": format!(
                "const {{ test, expect }} = require('@playwright/test')\n\
                 test('page {n}', async ({{ page }}) => {{\n  await page.goto('https://www.example.com/{n}')\n  \
                 await expect(page).toHaveTitle(/Example/)\n}})\n"
            ),
            "environmentVariables": [{ "key": "BASE_URL", "value": "https://www.example.com" }],
        }),
        CheckType::MultiStep => json!({
            "script": format!(
                "const r = await request.get('https://api.example.com/items/{n}')\nexpect(r.status()).toBe(200)\n"
            ),
        }),
        CheckType::Heartbeat => json!({
            "heartbeat": { "period": 1, "periodUnit": "days", "grace": 30, "graceUnit": "minutes" },
        }),
        CheckType::Playwright => json!({
            "codeBundlePath": format!("tests/e2e/{n}"),
            "testCommand": "npx playwright test --project=chromium",
            "browsers": ["chromium"],
        }),
        CheckType::Agentic => json!({
            "frequency": 60,
            "prompt": format!("Open https://www.example.com/page/{n} and confirm that it greets the user.\n"),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Kind, check_shape, into_resource};

    #[test]
    fn every_type_has_a_valid_sample() {
        for check_type in CheckType::ALL {
            let mut check = check_spec(*check_type, 7);
            check["checkType"] = json!(check_type.as_str());
            check["name"] = json!("sample");
            let shape = check_shape(Kind::Check, &check);
            assert!(shape.violations.is_empty(), "{check_type:?}: {:?}", shape.violations);
            assert!(into_resource(Kind::Check, check).is_ok(), "{check_type:?}");
        }
    }
}
