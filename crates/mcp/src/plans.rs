//! `plan` and `apply`: a plan saved by its hash (`approvals`), and an
//! apply of that plan only once a person approved the hash out of band
//! and planning again still gives exactly it (`ops::prepare_apply` with
//! the saved plan: the stale-plan refusal of `apply plan.bin`). The
//! project's policies judge the apply as they judge a person's (no
//! override is offered); destroy is not offered at all. Each call is
//! recorded in the state's history (`history`).

use monform_engine::ops::{self, ApplyRequest, PlanRequest, PolicyCheck, PolicyLoad, PolicyOutcome};
use monform_engine::{ApplyOptions, Refresh};
use serde_json::{Value, json};

use crate::Config;
use crate::approvals;
use crate::history::{Call, record};
use crate::project::{Needs, open};
use crate::reply::Reply;

const PLAN_COMMAND: &str = "monform mcp plan";
const APPLY_COMMAND: &str = "monform mcp apply";

/// The policies' findings, as the tools give them.
fn policy_json(outcome: &PolicyOutcome) -> Value {
    let findings: Vec<Value> = outcome
        .findings
        .iter()
        .map(|f| {
            json!({
                "rule": f.rule,
                "level": format!("{:?}", f.level).to_lowercase(),
                "message": f.message,
                "address": f.address,
                "field": f.field,
                "blocks": f.blocks(),
            })
        })
        .collect();
    let errors: Vec<String> = outcome.errors.iter().map(ToString::to_string).collect();
    json!({"blocks": outcome.blocks(), "findings": findings, "errors": errors})
}

/// The one line of a plan's counts.
fn summary_line(summary: &monform_engine::Summary) -> String {
    let counts = [
        (summary.create, "to create"),
        (summary.update, "to update"),
        (summary.replace, "to replace"),
        (summary.delete, "to delete"),
        (summary.import, "to import"),
        (summary.moved, "to move"),
        (summary.forget, "to forget"),
    ];
    let parts: Vec<String> = counts
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect();
    match parts.is_empty() {
        true => "No changes: the account matches the files.".to_owned(),
        false => format!("Plan: {}.", parts.join(", ")),
    }
}

pub async fn plan(config: &Config, client: &str) -> Reply {
    let needs = Needs {
        state: Some(PLAN_COMMAND),
        api: true,
        prefetch: true,
        policies: PolicyLoad::Require,
    };
    let opened = match open(config, needs).await {
        Ok(opened) => opened,
        Err(refused) => return refused,
    };
    let reply = plan_opened(config, &opened).await;
    if let Some(backend) = opened.backend.as_deref() {
        let (hash, outcome) = match &reply {
            Reply::Done(value) => (value["planHash"].as_str().map(str::to_owned), "planned".to_owned()),
            Reply::Refused { reason, .. } => (None, format!("refused: {reason}")),
        };
        let call = Call {
            client,
            tool: "plan",
            plan_hash: hash.as_deref(),
            outcome,
        };
        if let Err(why) = record(backend, &opened.project.name, config, call) {
            opened.close().await;
            return Reply::refused(why);
        }
    }
    opened.close().await;
    reply
}

async fn plan_opened(config: &Config, opened: &ops::Opened) -> Reply {
    let session = match opened.session() {
        Ok(session) => session,
        Err(why) => return Reply::refused(why.to_string()),
    };
    let request = PlanRequest {
        refresh: Refresh::All,
        ..PlanRequest::default()
    };
    let planned = match ops::plan(&session, &request).await {
        Ok(planned) => planned,
        Err(refusal) => return Reply::refused(refusal.to_string()),
    };
    let saved = match planned.saved(&session) {
        Ok(saved) => saved,
        Err(refusal) => return Reply::refused(refusal.to_string()),
    };
    let hash = match approvals::save_plan(&config.dir, &saved) {
        Ok(hash) => hash,
        Err(why) => return Reply::refused(why.to_string()),
    };
    let desired = session.desired;
    let policy = (!opened.policies.is_empty()).then(|| {
        let files = opened.policies.files(desired);
        let check = PolicyCheck {
            policies: &opened.policies.policies,
            files: &files,
            overrides: &[],
        };
        ops::check_policies(&planned, desired, &check)
    });
    let summary = planned.plan.summary();
    let mut value = json!({
        "planHash": hash,
        "summary": summary_line(&summary),
        "counts": summary,
        "plan": ops::plan_input(&planned.plan, desired, &planned.actual),
        "savedAs": format!("{}/{hash}.json", approvals::PLANS_DIR),
        "next": format!("ask a person to review it and run `monform approve {hash}` in a terminal; then call apply with this planHash"),
    });
    if let Some(policy) = &policy {
        value["policy"] = policy_json(policy);
        if policy.blocks() {
            value["next"] = json!("the project's policies deny this plan: apply will refuse it; change the files");
        }
    }
    Reply::Done(value)
}

pub async fn apply(config: &Config, client: &str, hash: &str) -> Reply {
    // Read and checked before anything is opened: a hash nobody approved
    // never takes the lock nor reads the account.
    let saved = match approvals::read_plan(&config.dir, hash) {
        Ok(saved) => saved,
        Err(why) => return Reply::refused(why.to_string()),
    };
    let approved = match &config.approvals {
        Ok(file) => approvals::is_approved(file, &config.dir, hash),
        Err(why) => Err(approvals::ApprovalError::Read {
            path: "the approvals file".to_owned(),
            why: why.clone(),
        }),
    };
    let approved = match approved {
        Ok(approved) => approved,
        Err(why) => return Reply::refused(why.to_string()),
    };
    // Not approved: the state alone, to record the call.
    let needs = Needs {
        state: Some(APPLY_COMMAND),
        api: approved,
        prefetch: false,
        policies: PolicyLoad::Require,
    };
    let opened = match open(config, needs).await {
        Ok(opened) => opened,
        Err(refused) => return refused,
    };
    let reply = match approved {
        false => Reply::refused_with(
            format!("plan {hash} is not approved: nothing was applied"),
            json!({"hint": format!("a person reviews the plan and runs `monform approve {hash}` in a terminal; then call apply again")}),
        ),
        true => apply_opened(config, &opened, saved).await,
    };
    let outcome = match reply.reason() {
        None => "applied".to_owned(),
        Some(reason) => format!("refused: {reason}"),
    };
    if let Some(backend) = opened.backend.as_deref()
        && let Err(why) = record(
            backend,
            &opened.project.name,
            config,
            Call {
                client,
                tool: "apply",
                plan_hash: Some(hash),
                outcome,
            },
        )
    {
        opened.close().await;
        return Reply::refused(why);
    }
    opened.close().await;
    reply
}

async fn apply_opened(config: &Config, opened: &ops::Opened, saved: monform_engine::SavedPlan) -> Reply {
    let session = match opened.session() {
        Ok(session) => session,
        Err(why) => return Reply::refused(why.to_string()),
    };
    if let Err(other) = saved.environment_to_apply(config.environment.as_deref()) {
        return Reply::refused(format!("{other}: nothing was applied"));
    }
    // A plan saved after a partial refresh is checked by reading what it changes.
    let refresh = match saved.refresh {
        Refresh::All => Refresh::All,
        _ => Refresh::Changed,
    };
    let request = ApplyRequest {
        plan: PlanRequest {
            refresh,
            ..PlanRequest::default()
        },
        saved: Some(saved),
        command: APPLY_COMMAND.to_owned(),
        ..ApplyRequest::default()
    };
    let ready = match ops::prepare_apply(&session, request).await {
        Ok(ready) => ready,
        Err(refusal) => return Reply::refused(format!("{refusal}: nothing was applied")),
    };
    if let Some(refusal) = ready.refusal() {
        let mut details = json!({});
        if let Some(policy) = &ready.policy {
            details["policy"] = policy_json(policy);
        }
        return Reply::refused_with(format!("{refusal}: nothing was applied"), details);
    }
    let target = opened.api.as_ref().map(|api| api.target.clone());
    let options = ApplyOptions {
        parallelism: 8,
        stop: Default::default(),
        target,
    };
    let plan = ready.plan().clone();
    let applied = match ops::execute(ready, &options, &|_| {}).await {
        Ok(applied) => applied,
        Err(refusal) => return Reply::refused(refusal.to_string()),
    };
    let report = &applied.report;
    let list = |items: &[(monform_model::Address, monform_engine::Action, String)]| -> Vec<Value> {
        items
            .iter()
            .map(|(address, action, why)| json!({"address": address.to_string(), "action": action, "why": why}))
            .collect()
    };
    let verified = match &applied.verification {
        None => json!(null),
        Some(Ok(v)) => json!({
            "verified": v.verified(),
            "checked": v.checked,
            "failures": v.failures.iter().map(|(a, p)| json!({"address": a.to_string(), "problem": p.to_string()})).collect::<Vec<_>>(),
        }),
        Some(Err(error)) => json!({"error": error.to_string()}),
    };
    Reply::Done(json!({
        "applied": applied.is_complete(),
        "summary": summary_line(&plan.summary()),
        "done": report.done.iter().map(|(a, action)| json!({"address": a.to_string(), "action": action})).collect::<Vec<_>>(),
        "failed": list(&report.failed),
        "skipped": list(&report.skipped),
        "verification": verified,
    }))
}
