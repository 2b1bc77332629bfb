//! The tools that read: `explain` (one address: where it is written, its
//! effective value, live facts, last results), `schema` (from the model),
//! `status`, `test_local`, `import_preview`, `codify_check` and
//! `policy_test`, each through the engine's `ops` as the CLI's commands
//! run them. Values are masked by the model's secrecy rule; what a run
//! says is scrubbed of the values the files mark sensitive.

use std::str::FromStr;

use futures_util::StreamExt;
use monform_engine::ops::{self, PlanRequest, PolicyLoad, Standing, StatusRequest, TestRequest};
use monform_engine::{Action, Refresh};
use monform_model::{Address, Kind};
use serde_json::{Value, json};

use crate::Config;
use crate::project::{Needs, open};
use crate::reply::{Reply, place};

/// The string values `desired` holds where the model's secrecy rule (or
/// the loader's `${env:}` marking) masks them: what a run's error text is
/// scrubbed of.
fn secret_values(desired: &monform_config::Desired) -> Vec<String> {
    fn walk(plain: &Value, masked: &Value, out: &mut Vec<String>) {
        match (plain, masked) {
            (Value::Object(a), Value::Object(b)) => {
                for (key, value) in a {
                    if let Some(other) = b.get(key) {
                        walk(value, other, out);
                    }
                }
            }
            (Value::Array(a), Value::Array(b)) => a.iter().zip(b).for_each(|(x, y)| walk(x, y, out)),
            (Value::String(a), b) if Some(a.as_str()) != b.as_str() => out.push(a.clone()),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for resource in desired.resources.values() {
        let plain = resource.resource.to_json();
        let masked = monform_model::sensitive::mask(resource.address.kind, &plain, &resource.sensitive);
        walk(&plain, &masked, &mut out);
    }
    out
}

/// `value` without any of the files' secret values: a run's error or a
/// result may quote what a check sent.
fn scrubbed(desired: &monform_config::Desired, value: Value) -> Value {
    let scrub = crate::reply::Scrub::new(secret_values(desired));
    let text = scrub.text(&value.to_string());
    serde_json::from_str(&text).unwrap_or(value)
}

pub async fn explain(config: &Config, address: &str) -> Reply {
    let Ok(address) = Address::from_str(address) else {
        return Reply::refused(format!(
            "`{address}` is not an address (SECTION.ID, e.g. checks.homepage)"
        ));
    };
    let needs = Needs {
        state: Some("monform mcp explain"),
        api: true,
        prefetch: false,
        policies: PolicyLoad::Skip,
    };
    // Without the service, the files and the state still explain it.
    let (opened, live) = match open(config, needs).await {
        Ok(opened) => (opened, None),
        Err(Reply::Refused { reason, .. }) => {
            let files = Needs { api: false, ..needs };
            match open(config, files).await {
                Ok(opened) => (opened, Some(reason)),
                Err(refused) => return refused,
            }
        }
        Err(done) => return done,
    };
    let desired = &opened.loaded.desired;
    let Some(resource) = desired.resources.get(&address) else {
        let known: Vec<String> = desired
            .resources
            .keys()
            .filter(|a| a.kind == address.kind)
            .map(|a| a.to_string())
            .collect();
        let suggestion = monform_model::suggest::suggest(&address.to_string(), known.iter().map(String::as_str));
        opened.close().await;
        return Reply::refused_with(
            format!("{address} is not in the files"),
            json!({"didYouMean": suggestion}),
        );
    };
    let kind = address.kind;
    let value = resource.resource.to_json();
    let group = (kind == Kind::Check)
        .then(|| value["group"].as_str())
        .flatten()
        .and_then(|id| desired.resources.get(&Address::new(Kind::Group, id)))
        .map(|g| g.resource.to_json());
    let effective = match kind {
        Kind::Check => monform_model::effective::effective(&value, group.as_ref()),
        _ => value.clone(),
    };
    let masked = |v: &Value| monform_model::sensitive::mask(kind, v, &resource.sensitive);
    let at = place(resource.span, &opened.loaded.sources).map(|(file, line)| json!({"file": file, "line": line}));
    let mut answer = json!({
        "address": address.to_string(),
        "at": at,
        "value": masked(&value),
        "effective": masked(&effective),
        "sensitiveFields": resource.sensitive.iter().map(ToString::to_string).collect::<Vec<_>>(),
    });
    let state = opened.backend.as_deref().map(|b| b.load(&opened.project.name));
    let remote = match &state {
        Some(Ok(state)) => state.resources.get(&address.to_string()).map(|r| r.remote_id.clone()),
        _ => None,
    };
    answer["live"] = json!({"remoteId": remote, "applied": remote.is_some()});
    if let Some(why) = &live {
        answer["live"]["unavailable"] = json!(why);
    }
    if let (Some(api), Some(id), Some(Ok(state))) = (&opened.api, &remote, &state) {
        let client = &api.client;
        if let Ok(session) = opened.session() {
            let request = PlanRequest {
                targets: vec![address.clone()],
                refresh: Refresh::Changed,
                ..PlanRequest::default()
            };
            if let Ok(planned) = ops::plan(&session, &request).await
                && let Some(change) = planned.plan.changes.iter().find(|c| c.address == address)
            {
                answer["live"]["action"] = json!(change.action);
                answer["live"]["drifted"] = json!(
                    change
                        .fields
                        .iter()
                        .filter(|f| f.drift)
                        .map(|f| f.path.clone())
                        .collect::<Vec<_>>()
                );
            }
        }
        if kind == Kind::Check {
            let _ = state;
            if let Ok(results) = client.recent_results(id, 5).await {
                answer["lastResults"] = json!(results.iter().map(result_line).collect::<Vec<_>>());
            }
        }
    }
    let answer = scrubbed(&opened.loaded.desired, answer);
    opened.close().await;
    Reply::Done(answer)
}

/// A result's few facts: never its response body or headers.
fn result_line(result: &Value) -> Value {
    json!({
        "startedAt": result["startedAt"],
        "location": result["runLocation"],
        "hasFailures": result["hasFailures"],
        "hasErrors": result["hasErrors"],
        "responseTime": result["responseTime"],
    })
}

/// The kind named by its section (`checks`) or its name (`check`, `Check`).
fn kind_named(name: &str) -> Option<Kind> {
    Kind::from_section(name).or_else(|| {
        let lower = name.to_ascii_lowercase();
        Kind::ALL.iter().copied().find(|k| {
            let section = k.section().to_ascii_lowercase();
            section.strip_suffix('s') == Some(lower.as_str()) || section == format!("{lower}s")
        })
    })
}

pub fn schema(kind: Option<&str>, check_type: Option<&str>) -> Reply {
    let schemas = monform_model::schema::schemas();
    let kind = match (kind, check_type) {
        (Some(name), _) => match kind_named(name) {
            Some(kind) => kind,
            None => {
                let sections: Vec<&str> = Kind::sections().collect();
                return Reply::refused(format!("`{name}` is not a kind (one of: {})", sections.join(", ")));
            }
        },
        (None, Some(_)) => Kind::Check,
        (None, None) => {
            return Reply::Done(json!({"kinds": Kind::sections().collect::<Vec<_>>(),
                "hint": "give kind (e.g. checks) and, for a check, checkType (e.g. URL)"}));
        }
    };
    let schema = match check_type {
        Some(variant) => {
            let found = schemas.variant(kind, variant);
            if std::ptr::eq(found, schemas.resolve(schemas.kind(kind))) && kind == Kind::Check {
                return Reply::refused(format!("`{variant}` is not a check type"));
            }
            found
        }
        None => schemas.resolve(schemas.kind(kind)),
    };
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let fields: Vec<Value> = schema["properties"]
        .as_object()
        .map(|props| {
            props
                .iter()
                .map(|(name, property)| field(name, schemas.resolve(property), required.contains(&name.as_str())))
                .collect()
        })
        .unwrap_or_default();
    let mut answer = json!({"kind": kind.section(), "fields": fields});
    if let Some(variant) = check_type {
        answer["checkType"] = json!(variant);
    }
    if let Some(branches) = schema["oneOf"].as_array() {
        let variants: Vec<&str> = branches
            .iter()
            .filter_map(|b| {
                schemas.resolve(b)["properties"]
                    .as_object()?
                    .values()
                    .find_map(|p| p.get("const").and_then(Value::as_str))
            })
            .collect();
        answer["variants"] = json!(variants);
    }
    Reply::Done(answer)
}

/// One field: its type, default and limits, as the model's schema has them.
fn field(name: &str, schema: &Value, required: bool) -> Value {
    let mut out = json!({"name": name, "required": required});
    for key in [
        "type",
        "description",
        "default",
        "enum",
        "const",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "pattern",
        "format",
    ] {
        if let Some(value) = schema.get(key) {
            out[key] = value.clone();
        }
    }
    if schema.get("x-sensitive").is_some() {
        out["sensitive"] = json!(true);
    }
    out
}

/// Opens the project with its state and the service, loads the state and
/// gives `read` the session and the state: what `status` and
/// `import_preview` both read. The project is closed after it, whatever
/// it answered.
async fn with_account(
    config: &Config,
    command: &'static str,
    read: impl AsyncFnOnce(&ops::Session<'_>, &monform_engine::State) -> Result<Value, Reply>,
) -> Reply {
    let needs = Needs {
        state: Some(command),
        api: true,
        prefetch: false,
        policies: PolicyLoad::Skip,
    };
    let opened = match open(config, needs).await {
        Ok(opened) => opened,
        Err(refused) => return refused,
    };
    let reply = async {
        let session = opened.session().map_err(|why| Reply::refused(why.to_string()))?;
        let state = session
            .backend
            .load(&session.project.name)
            .map_err(|e| Reply::refused(e.to_string()))?;
        read(&session, &state).await
    }
    .await
    .map_or_else(|refused| refused, Reply::Done);
    opened.close().await;
    reply
}

/// The applied checks' figures (those of `addresses`, each one's latest
/// result read, when some are named): `ops::status`, as `monform status`.
pub async fn status(config: &Config, addresses: &[String]) -> Reply {
    let addresses = match addresses
        .iter()
        .map(|a| Address::from_str(a))
        .collect::<Result<Vec<_>, _>>()
    {
        Ok(addresses) => addresses,
        Err(_) => return Reply::refused("`addresses` holds one that is not an address (e.g. checks.homepage)"),
    };
    with_account(config, "monform mcp status", async |session, state| {
        let request = StatusRequest {
            range: monform_model::reports::QuickRange::Last24Hours,
            addresses,
            ..Default::default()
        };
        let statuses = ops::status(session.client, session.desired, state, &request)
            .await
            .map_err(|refusal| Reply::refused(refusal.to_string()))?;
        let count = |wanted: Standing| statuses.iter().filter(|s| s.standing() == wanted).count();
        let summary = json!({
            "checks": statuses.len(),
            "failing": count(Standing::Failing),
            "degraded": count(Standing::Degraded),
            "passing": count(Standing::Passing),
            "withoutRecentRun": count(Standing::Unknown),
        });
        let checks: Vec<Value> = statuses
            .iter()
            .map(|s| {
                json!({
                    "address": s.address.to_string(),
                    "name": s.name,
                    "successRatio": s.success_ratio,
                    "p95": s.p95,
                    "p99": s.p99,
                    "lastStatus": s.last_status.map(|l| l.as_str()),
                    "group": s.group,
                })
            })
            .collect();
        Ok(json!({"range": "last 24 hours", "summary": summary, "checks": checks}))
    })
    .await
}

pub async fn test_local(config: &Config, address: Option<&str>) -> Reply {
    let targets = match address.map(Address::from_str).transpose() {
        Ok(targets) => targets.into_iter().collect(),
        Err(_) => return Reply::refused("`address` is not an address (e.g. checks.homepage)"),
    };
    let needs = Needs {
        state: None,
        api: false,
        prefetch: false,
        policies: PolicyLoad::Skip,
    };
    let opened = match open(config, needs).await {
        Ok(opened) => opened,
        Err(refused) => return refused,
    };
    let desired = &opened.loaded.desired;
    let Ok(dir) = std::path::absolute(&config.dir) else {
        return Reply::refused("the project folder cannot be made absolute");
    };
    let request = TestRequest {
        targets,
        ..TestRequest::default()
    };
    let checks = match ops::local_checks(desired, &dir, &request) {
        Ok(checks) => checks,
        Err(refusal) => return Reply::refused(refusal.to_string()),
    };
    let variables = ops::project_variables(desired);
    let artifacts = dir.join(".monform/artifacts");
    let passed: Vec<(String, std::ffi::OsString)> = opened
        .project
        .pass_env
        .iter()
        .filter(|(name, _)| !monform_config::interpolate::CREDENTIAL_ENV.contains(&name.as_str()))
        .filter_map(|(name, _)| (config.env.vars)(name).map(|value| (name.clone(), value.into())))
        .collect();
    let runner = monform_runner::Runner::new(monform_runner::RunnerConfig::default())
        .with_browser(monform_runner::BrowserSetup::discover(Some(&dir)))
        .with_passed_env(passed)
        .with_artifacts(artifacts);
    let opened = &opened;
    let runs: Vec<Value> = futures_util::stream::iter(checks.iter())
        .map(|check| {
            let runner = &runner;
            let variables = monform_runner::Variables::for_check(variables.iter().cloned(), &check.wire);
            let refused = ops::unpassed_env(&check.env_reads, &opened.project).map(|r| r.to_string());
            async move {
                let outcome = match refused {
                    Some(why) => monform_runner::errored(why),
                    None => {
                        let job = monform_runner::Job {
                            check: &check.wire,
                            variables: &variables,
                            heartbeats: None,
                            location: "local",
                        };
                        runner
                            .run(job)
                            .await
                            .pop()
                            .map(|attempt| attempt.outcome)
                            .unwrap_or_else(|| monform_runner::errored("the runner made no attempt"))
                    }
                };
                let files: Vec<Value> = outcome.details["artifacts"]
                    .as_array()
                    .map(|a| a.iter().filter_map(|f| f.get("path").cloned()).collect())
                    .unwrap_or_default();
                let at = desired
                    .resources
                    .get(&check.address)
                    .and_then(|r| place(r.span, &opened.loaded.sources))
                    .map(|(file, line)| json!({"file": file, "line": line}));
                json!({
                    "address": check.address.to_string(),
                    "status": outcome.status.as_str(),
                    "responseTime": outcome.response_time,
                    "error": outcome.error,
                    "assertions": outcome.assertions.iter().filter(|a| !a.passed).map(|a| json!({"source": a.source, "comparison": a.comparison, "target": a.target, "actual": a.actual})).collect::<Vec<_>>(),
                    "at": at,
                    "artifacts": files,
                })
            }
        })
        .buffer_unordered(4)
        .collect()
        .await;
    let failed = runs.iter().filter(|r| r["status"] != "PASSED").count();
    Reply::Done(scrubbed(desired, json!({"runs": runs, "failed": failed})))
}

pub async fn import_preview(config: &Config) -> Reply {
    with_account(config, "monform mcp import_preview", async |session, state| {
        let (found, clashing) = ops::find_unmanaged_for(session.client, state, session.desired)
            .await
            .map_err(|refusal| Reply::refused(refusal.to_string()))?;
        let objects: Vec<Value> = found
            .exported
            .objects
            .iter()
            .map(|(address, remote)| json!({"address": address.to_string(), "remoteId": remote.id}))
            .collect();
        Ok(json!({
            "unmanaged": objects,
            "files": found.exported.files,
            "environment": found.exported.env.iter().map(|v| v.name.clone()).collect::<Vec<_>>(),
            "ownerUnknown": found.unknown.len(),
            "clashing": clashing.iter().map(|(a, r)| json!({"address": a.to_string(), "remoteId": r.id})).collect::<Vec<_>>(),
            "next": "write the files you want with write_file (with `import` entries), then plan",
        }))
    })
    .await
}

pub async fn codify_check(config: &Config) -> Reply {
    let needs = Needs {
        state: Some("monform mcp codify_check"),
        api: true,
        prefetch: true,
        policies: PolicyLoad::Skip,
    };
    let opened = match open(config, needs).await {
        Ok(opened) => opened,
        Err(refused) => return refused,
    };
    let reply = async {
        let session = opened.session().map_err(|why| Reply::refused(why.to_string()))?;
        let planned = ops::plan(&session, &PlanRequest::default())
            .await
            .map_err(|refusal| Reply::refused(refusal.to_string()))?;
        let drifted = ops::drifted(&planned.plan);
        let codified = monform_codify::codify(&opened.loaded, &drifted, &monform_codify::Options::default());
        let others = planned
            .plan
            .changes
            .iter()
            .filter(|c| c.action != Action::Noop && !drifted.iter().any(|d| d.address == c.address))
            .count();
        Ok::<_, Reply>(Reply::Done(json!({
            "diff": codified.diff(),
            "files": codified.files.iter().map(|f| f.name.clone()).collect::<Vec<_>>(),
            "handEdits": codified.hand_edits.iter().map(|h| format!("{h:?}")).collect::<Vec<_>>(),
            "secrets": codified.secrets.iter().map(|f| format!("{f:?}")).collect::<Vec<_>>(),
            "conflicts": codified.conflicts.len(),
            "notes": codified.notes,
            "fileChangesNotDrift": others,
            "next": "to take the service's values, write each file of the diff with write_file",
        })))
    }
    .await
    .unwrap_or_else(|refused| refused);
    opened.close().await;
    reply
}

pub fn policy_test(config: &Config) -> Reply {
    let findings = ops::validate(&ops::OpenRequest {
        environment: config.environment.as_deref(),
        ..ops::OpenRequest::new(&config.dir, &config.env)
    });
    let mut loaded = findings.loaded;
    let Some(project) = loaded.project.clone() else {
        return Reply::refused("monform.toml could not be read (the validate tool says why)");
    };
    let (policies, problems) = ops::load_policies(&config.dir, &mut loaded, &project);
    let report = policies.policies.test();
    let cases: Vec<Value> = report
        .cases
        .iter()
        .map(|case| {
            let (outcome, error) = match &case.outcome {
                monform_policy::TestOutcome::Pass => ("pass", None),
                monform_policy::TestOutcome::Fail => ("fail", None),
                monform_policy::TestOutcome::Error(error) => ("error", Some(error.to_string())),
            };
            let at = place(case.at, &loaded.sources).map(|(file, line)| json!({"file": file, "line": line}));
            json!({"name": case.name, "outcome": outcome, "error": error, "at": at})
        })
        .collect();
    Reply::Done(json!({
        "passed": report.passed(),
        "failed": report.failed(),
        "cases": cases,
        "problems": problems.iter().map(|d| crate::reply::diagnostic(d, &loaded.sources)).collect::<Vec<_>>(),
    }))
}
