//! Test sessions, check results and the report (spec 2.9, 2.16, 2.19 and
//! api-contract.md, "Sessions, results and reports").

use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};

use crate::client::SendOptions;
use crate::{Client, Error};

/// The longest a completion call may wait on the server (spec: 1..30).
pub const MAX_WAIT_SECONDS: u32 = 30;

pub use monform_model::RunStatus;

/// What to run in a test session.
#[derive(Debug, Clone, Default)]
pub struct TestSessionRequest {
    /// Shown in the service's UI.
    pub name: String,
    /// A data-center location or a private location's slug.
    pub run_location: String,
    /// Remote check ids (empty: every check).
    pub check_ids: Vec<String>,
    /// Only checks carrying every one of these tags (empty: no filter).
    pub tags: Vec<String>,
}

/// One result of a test session (spec 2.9).
#[derive(Debug, Clone, PartialEq)]
pub struct TestResult {
    pub check_id: String,
    pub name: String,
    pub check_type: Option<String>,
    pub run_location: String,
    pub status: RunStatus,
    /// Milliseconds, when the service says.
    pub response_time: Option<f64>,
    pub error_group_ids: Vec<String>,
    /// Why the run did not pass, when the result says (the emulator's
    /// does; the spec's result object has only `errorGroupIds`, see
    /// [`Client::error_messages`]).
    pub error: Option<String>,
}

impl TestResult {
    pub fn from_body(body: &Value) -> TestResult {
        let text = |name: &str| body.get(name).map(id_text).unwrap_or_default();
        TestResult {
            check_id: text("checkId"),
            name: text("name"),
            check_type: body.get("checkType").and_then(Value::as_str).map(str::to_owned),
            run_location: text("runLocation"),
            status: RunStatus::of_result(body),
            response_time: body.get("responseTime").and_then(Value::as_f64),
            error_group_ids: body
                .get("errorGroupIds")
                .and_then(Value::as_array)
                .map(|ids| ids.iter().map(id_text).collect())
                .unwrap_or_default(),
            error: body
                .get("error")
                .and_then(Value::as_str)
                .filter(|e| !e.is_empty())
                .map(str::to_owned),
        }
    }
}

/// A test session (spec 2.9).
#[derive(Debug, Clone, PartialEq)]
pub struct TestSession {
    pub id: String,
    pub status: String,
    /// Milliseconds.
    pub time_elapsed: Option<f64>,
    pub link: Option<String>,
    pub results: Vec<TestResult>,
}

impl TestSession {
    pub fn from_body(body: &Value) -> TestSession {
        TestSession {
            id: body.get("testSessionId").map(id_text).unwrap_or_default(),
            status: body.get("status").and_then(Value::as_str).unwrap_or("").to_owned(),
            time_elapsed: body.get("timeElapsed").and_then(Value::as_f64),
            link: body.get("testSessionLink").and_then(Value::as_str).map(str::to_owned),
            results: body
                .get("results")
                .and_then(Value::as_array)
                .map(|r| r.iter().map(TestResult::from_body).collect())
                .unwrap_or_default(),
        }
    }
}

/// One check's line of the report (spec 2.16).
#[derive(Debug, Clone, PartialEq)]
pub struct ReportEntry {
    pub check_id: String,
    pub name: String,
    pub check_type: String,
    pub deactivated: bool,
    pub tags: Vec<String>,
    /// Fraction 0..1 as the service returns it.
    pub success_ratio: Option<f64>,
    pub avg: Option<f64>,
    pub p95: Option<f64>,
    pub p99: Option<f64>,
}

impl ReportEntry {
    pub fn from_body(body: &Value) -> ReportEntry {
        let aggregate = body.get("aggregate").unwrap_or(&Value::Null);
        let number = |name: &str| aggregate.get(name).and_then(Value::as_f64);
        ReportEntry {
            check_id: body.get("checkId").map(id_text).unwrap_or_default(),
            name: body.get("name").and_then(Value::as_str).unwrap_or("").to_owned(),
            check_type: body.get("checkType").and_then(Value::as_str).unwrap_or("").to_owned(),
            deactivated: body.get("deactivated").and_then(Value::as_bool).unwrap_or(false),
            tags: body
                .get("tags")
                .and_then(Value::as_array)
                .map(|t| t.iter().filter_map(Value::as_str).map(str::to_owned).collect())
                .unwrap_or_default(),
            success_ratio: number("successRatio"),
            avg: number("avg"),
            p95: number("p95"),
            p99: number("p99"),
        }
    }
}

pub use monform_model::reports::REPORT_RANGES;

use monform_model::wire::id_text;

impl Client {
    /// Starts a test session (201, status RUNNING). A 404 means no check
    /// matches the target.
    pub async fn trigger_test_session(&self, request: &TestSessionRequest) -> Result<TestSession, Error> {
        let mut target = serde_json::Map::new();
        if !request.check_ids.is_empty() {
            target.insert("checkId".into(), json!(request.check_ids));
        }
        if !request.tags.is_empty() {
            target.insert("matchTags".into(), json!([request.tags]));
        }
        let body = json!({
            "name": request.name,
            "runLocation": request.run_location,
            "target": target,
        });
        let reply = self
            .send(Method::POST, "/v1/test-sessions/trigger", &[], Some(&body))
            .await?;
        Ok(TestSession::from_body(&reply.body))
    }

    /// One completion call: the final session, or `None` when it is still
    /// running after `max_wait` seconds (the service's 408; 1..30). Other
    /// transient failures are retried as usual.
    pub async fn await_test_session(&self, id: &str, max_wait: u32) -> Result<Option<TestSession>, Error> {
        let max_wait = max_wait.clamp(1, MAX_WAIT_SECONDS);
        let options = SendOptions {
            timeout: Some(Duration::from_secs(u64::from(max_wait) + 15)),
            no_retry_on_408: true,
        };
        let path = format!("/v1/test-sessions/{id}/completion");
        match self
            .send_with(
                Method::GET,
                &path,
                &[("maxWaitSeconds", max_wait.to_string())],
                None,
                options,
            )
            .await
        {
            Ok(reply) => Ok(Some(TestSession::from_body(&reply.body))),
            Err(e) if e.status() == Some(408) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The report of every check over `quick_range` (one of [`REPORT_RANGES`]).
    pub async fn reporting(&self, quick_range: &str) -> Result<Vec<ReportEntry>, Error> {
        self.report(&[("quickRange", quick_range.to_owned())]).await
    }

    /// The report of every check over the window from `from` (UNIX
    /// seconds) to the service's now: what `status` reads each check's
    /// last hours from (whether it ran, and failed), one request for all.
    pub async fn reporting_since(&self, from: i64) -> Result<Vec<ReportEntry>, Error> {
        self.report(&[("from", from.to_string())]).await
    }

    async fn report(&self, query: &[(&str, String)]) -> Result<Vec<ReportEntry>, Error> {
        let reply = self.send(Method::GET, "/v1/reporting", query, None).await?;
        match reply.body {
            Value::Array(entries) => Ok(entries.iter().map(ReportEntry::from_body).collect()),
            _ => Err(Error::Decode {
                method: "GET".into(),
                path: "/v1/reporting".into(),
                detail: "expected a JSON array".into(),
            }),
        }
    }

    /// The error groups of a check (spec 2.17, the latest 100): group id to
    /// its message (the raw one, else the cleaned one). What a test
    /// session's `errorGroupIds` point at: why its runs failed.
    pub async fn error_messages(&self, check_id: &str) -> Result<Vec<(String, String)>, Error> {
        let reply = self
            .send(
                Method::GET,
                &format!("/v1/error-groups/checks/{check_id}"),
                &[("limit", "100".to_owned())],
                None,
            )
            .await?;
        Ok(reply
            .body
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|group| {
                let message = ["rawErrorMessage", "cleanedErrorMessage"]
                    .iter()
                    .find_map(|field| group[*field].as_str().filter(|m| !m.is_empty()))?;
                Some((id_text(&group["id"]), message.to_owned()))
            })
            .collect())
    }

    /// The check's final results of the last 6 hours (the listing's
    /// window), newest first, at most `limit`; a 404 error for an unknown
    /// check.
    pub async fn recent_results(&self, check_id: &str, limit: usize) -> Result<Vec<Value>, Error> {
        let reply = self
            .send(
                Method::GET,
                &format!("/v2/check-results/{check_id}"),
                &[("limit", limit.to_string())],
                None,
            )
            .await?;
        Ok(reply.body["entries"].as_array().cloned().unwrap_or_default())
    }

    /// Average response times of an API (`api-checks`) or browser
    /// (`browser-checks`) check over `quick_range` in `buckets` equal
    /// intervals, oldest first; `None` for an interval without runs.
    pub async fn response_times(
        &self,
        endpoint: &str,
        check_id: &str,
        quick_range: &str,
        interval_minutes: u32,
    ) -> Result<Vec<Option<f64>>, Error> {
        let reply = self
            .send(
                Method::GET,
                &format!("/v1/analytics/{endpoint}/{check_id}"),
                &[
                    ("quickRange", quick_range.to_owned()),
                    ("metrics", "responseTime".to_owned()),
                    ("aggregationInterval", interval_minutes.to_string()),
                    ("limit", "100".to_owned()),
                ],
                None,
            )
            .await?;
        // Series entries as the reference: objects whose `data` holds the
        // rows (one bucket each); spec 2.18's form, a JSON text per bucket,
        // is read too.
        Ok(reply.body["series"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|entry| match entry {
                Value::String(text) => serde_json::from_str::<Value>(text).into_iter().collect(),
                Value::Object(_) => match &entry["data"] {
                    Value::Array(rows) => rows.clone(),
                    row => vec![row.clone()],
                },
                _ => Vec::new(),
            })
            .map(|row| row["responseTime"].as_f64())
            .collect())
    }

    /// One page of a check's FINAL results in `[from, to]` (UNIX seconds,
    /// at most 6 hours apart: the listing's window rule), `limit` 100,
    /// after the cursor `next_id`; with the next cursor, `None` at the end.
    /// What an SLO's error budget is computed from (`ops::slo_status`).
    pub async fn results_page(
        &self,
        check_id: &str,
        from: i64,
        to: i64,
        next_id: Option<&str>,
    ) -> Result<(Vec<Value>, Option<String>), Error> {
        let mut query = vec![
            ("limit", "100".to_owned()),
            ("from", from.to_string()),
            ("to", to.to_string()),
            ("resultType", "FINAL".to_owned()),
        ];
        if let Some(next) = next_id {
            query.push(("nextId", next.to_owned()));
        }
        let reply = self
            .send(Method::GET, &format!("/v2/check-results/{check_id}"), &query, None)
            .await?;
        let entries = reply.body["entries"].as_array().cloned().unwrap_or_default();
        let next = match &reply.body["nextId"] {
            Value::String(id) if !id.is_empty() => Some(id.clone()),
            Value::Number(id) => Some(id.to_string()),
            _ => None,
        };
        Ok((entries, next))
    }

    /// The check's most recent final result of the last 6 hours (the
    /// listing's window), `Ok(None)` when there is none, or a 404 error for
    /// an unknown check.
    pub async fn last_result(&self, check_id: &str) -> Result<Option<Value>, Error> {
        let reply = self
            .send(
                Method::GET,
                &format!("/v2/check-results/{check_id}"),
                &[("limit", "1".to_owned())],
                None,
            )
            .await?;
        Ok(reply
            .body
            .get("entries")
            .and_then(Value::as_array)
            .and_then(|e| e.first())
            .cloned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_follow_the_flags() {
        assert_eq!(RunStatus::of_result(&json!({})), RunStatus::Passed);
        assert_eq!(RunStatus::of_result(&json!({"hasFailures": true})), RunStatus::Failed);
        assert_eq!(RunStatus::of_result(&json!({"hasErrors": true})), RunStatus::Failed);
        assert_eq!(RunStatus::of_result(&json!({"isDegraded": true})), RunStatus::Degraded);
        assert_eq!(RunStatus::of_result(&json!({"aborted": true})), RunStatus::Cancelled);
        assert_eq!(
            RunStatus::of_result(&json!({"status": "TIMED_OUT", "hasFailures": true})),
            RunStatus::TimedOut
        );
        assert_eq!(
            RunStatus::of_result(&json!({"status": "RUNNING", "resultType": "PENDING"})),
            RunStatus::Running
        );
        assert!(RunStatus::Failed.is_failure() && !RunStatus::Degraded.is_failure());
    }

    #[test]
    fn reads_a_test_session() {
        let session = TestSession::from_body(&json!({
            "testSessionId": "s1", "status": "PASSED", "timeElapsed": 300,
            "results": [{"checkId": "c1", "name": "Home", "runLocation": "eu-west-1",
                         "hasFailures": false, "hasErrors": false, "isDegraded": true,
                         "responseTime": 12.5, "errorGroupIds": []}],
        }));
        assert_eq!(session.results[0].status, RunStatus::Degraded);
        assert_eq!(session.results[0].response_time, Some(12.5));
    }
}
