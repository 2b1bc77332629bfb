//! One interval: load the files, plan, judge each change by its policy,
//! apply what is to be applied through the engine's `ops` (the same lock,
//! budget and safety guards as `monform apply`), and report what is new.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use monform_config::diagnostic::summary::{self, Item};
use monform_config::{Diagnostic, Severity};
use monform_engine::ops::{self, ApplyRequest, Opened, PlanRequest, Refusal, Session};
use monform_engine::{ApplyOptions, Event, Refresh};
use monform_model::Address;
use serde_json::Value;

use crate::events::{Event as Noted, PolicyFinding};
use crate::leader::Leadership;
use crate::policy::{Decision, Origin, Verdict};
use crate::report::{
    Drifted, Memory, Subject, drift_body, drift_only, in_sync_body, reverted_body, slack_reverted, slack_text,
};
use crate::{Context, Message, Unloaded, deliver, slo_alerts};

/// How an interval ended (the exit code of `--once`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Nothing to do: the service and the files agree (0).
    InSync,
    /// The plan had changes: drift or file changes, acted on or reported (2).
    Changes,
    /// The files did not load, the service could not be read, a guard
    /// refused, or an apply failed (1).
    Error { api: bool },
}

impl Outcome {
    pub fn code(self) -> u8 {
        match self {
            Outcome::InSync => 0,
            Outcome::Changes => 2,
            Outcome::Error { .. } => 1,
        }
    }
}

/// Runs one interval.
pub async fn run(ctx: &Context<'_>, leadership: &mut Leadership, memory: &mut Memory) -> Outcome {
    let started = Instant::now();
    let outcome = inner(ctx, leadership, memory).await;
    let seconds = started.elapsed().as_secs_f64();
    ctx.metrics.update(|f| {
        f.duration_sum += seconds;
        f.duration_count += 1;
        let result = match outcome {
            Outcome::InSync => "in_sync",
            Outcome::Changes => "changes",
            Outcome::Error { .. } => "error",
        };
        *f.runs.entry(result).or_default() += 1;
        match outcome {
            Outcome::Error { api: true } => f.api_errors += 1,
            Outcome::Error { api: false } => {}
            _ => f.last_success = Some(chrono::Utc::now().timestamp_millis() as f64 / 1000.0),
        }
    });
    outcome
}

async fn inner(ctx: &Context<'_>, leadership: &mut Leadership, memory: &mut Memory) -> Outcome {
    // A rule the team wrote is never skipped: a policy that does not load
    // stops the interval as files that do not load do.
    let files = match ctx.host.open() {
        Ok(files) => files,
        Err(Unloaded::Files(why)) => {
            return ctx.failed(
                Noted::load_failed,
                "the files do not load; nothing was changed",
                &why,
                false,
            );
        }
        Err(Unloaded::Policies(why)) => {
            return ctx.failed(
                Noted::load_failed,
                "the policies do not load; nothing was changed",
                &why,
                false,
            );
        }
    };
    let (desired, project) = (&files.loaded.desired, &files.project);
    *ctx.interval.lock().unwrap_or_else(|e| e.into_inner()) = project.reconcile.interval;
    let channels = match deliver::channels(desired, &project.reconcile) {
        Ok(channels) => channels,
        Err(why) => {
            return ctx.failed(
                Noted::load_failed,
                "the settings do not hold; nothing was changed",
                &why,
                false,
            );
        }
    };
    let mut session = match session_over(ctx, &files) {
        Ok(session) => session,
        Err(outcome) => return outcome,
    };
    // Within `request-share` of the key's budget: this interval's share
    // of requests, the drift reported lately read first (`sweep.rs`).
    let drifting: Vec<Address> = memory.reported.keys().filter_map(|a| a.parse().ok()).collect();
    ctx.sweep.prepare(
        session.client,
        project.reconcile.request_share,
        project.reconcile.interval,
        &drifting,
    );
    session.sweep = Some(&ctx.sweep.sweep);
    let request = PlanRequest {
        targets: Vec::new(),
        excludes: ctx.settings.excludes.clone(),
        destroy: false,
        // Drift is what a reconcile looks for: every object is read once a
        // sweep, as much of it each interval as the share holds.
        refresh: Refresh::Rolling,
    };
    let planned = ops::plan(&session, &request).await;
    ctx.sweep.report(ctx, session.client);
    let planned = match planned {
        Ok(planned) => planned,
        Err(refusal) => return ctx.refused(&refusal),
    };
    let decisions = crate::policy::decide(&planned.plan, desired, &project.reconcile);
    let mut drifted_kinds = std::collections::BTreeMap::new();
    for decision in decisions.iter().filter(|d| d.origin != Origin::Files) {
        *drifted_kinds
            .entry(decision.address.kind.section().to_owned())
            .or_insert(0) += 1;
    }
    ctx.metrics.update(|f| f.drifted = drifted_kinds);
    for decision in &decisions {
        ctx.event(describe(decision));
        let verdict = match decision.verdict {
            Verdict::Apply => "applying",
            Verdict::Report => "reported",
            Verdict::Ignore => "ignored",
        };
        let origin = match decision.origin {
            Origin::Drift => format!("drift ({})", decision.policy),
            Origin::Files => "file change".to_owned(),
            Origin::Both => format!("file change and drift ({})", decision.policy),
        };
        ctx.log
            .info(&format!("{}: {origin}: {verdict}", decision.address), change(decision));
    }
    let mut outcome = if decisions.is_empty() {
        Outcome::InSync
    } else {
        Outcome::Changes
    };
    let to_apply: Vec<Address> = decisions
        .iter()
        .filter(|d| d.verdict == Verdict::Apply)
        .map(|d| d.address.clone())
        .collect();
    // Objects the service changed to what the files say (a codified branch
    // merged, an edit undone by hand): recorded as applied by the apply's
    // no-op housekeeping, so a later edit of them is drift, not a conflict
    // with files that only caught up. Recorded only where files and service agree.
    let caught_up: Vec<Address> = planned
        .plan
        .changes
        .iter()
        .filter(|c| c.action == monform_engine::Action::Noop)
        .filter(|c| {
            planned
                .state
                .resources
                .get(&c.address.to_string())
                .is_some_and(|r| r.version != c.remote_version)
        })
        .map(|c| c.address.clone())
        .collect();
    let mut applied = Vec::new();
    if (!to_apply.is_empty() || !caught_up.is_empty()) && !ctx.stop.load(Ordering::SeqCst) {
        let targets: Vec<Address> = to_apply.into_iter().chain(caught_up).collect();
        // A create looks for the object in the whole account first (an
        // object tagged as this one, or with its natural key, is adopted,
        // never made twice): that apply lists everything. Otherwise only
        // the targets are read again.
        let creates = planned
            .plan
            .changes
            .iter()
            .any(|c| c.action == monform_engine::Action::Create && targets.contains(&c.address));
        let only_targets = std::sync::Mutex::new(monform_engine::Sweep::only(targets.clone()));
        let mut session = match session_over(ctx, &files) {
            Ok(session) => session,
            Err(outcome) => return outcome,
        };
        if !creates {
            session.sweep = Some(&only_targets);
        }
        let (error, done) = apply(ctx, &session, targets, &files).await;
        applied = done;
        if let Some(error) = error {
            outcome = error;
        }
    }
    let subject = Subject {
        project: &project.name,
        environment: project.environment.as_deref(),
    };
    if let Some(failed) = slo_alerts(
        ctx,
        session.client,
        desired,
        &planned.state,
        memory,
        leadership,
        &subject,
    )
    .await
    {
        outcome = failed;
    }
    // Drift a `revert` policy undid: told each time, with what the
    // service had and what the files restored (not remembered: it is over).
    let reverted: Vec<Drifted> = decisions
        .iter()
        .filter(|d| d.origin != Origin::Files && d.verdict == Verdict::Apply && applied.contains(&d.address))
        .filter_map(|d| {
            let change = planned.plan.changes.iter().find(|c| c.address == d.address)?;
            Some(Drifted::of(change, d.policy)).filter(|r| !r.fields.is_empty() || change.reason.is_drift())
        })
        .collect();
    if !reverted.is_empty() {
        let markdown = ctx.host.markdown(&drift_only(&planned.plan, &reverted));
        let body = reverted_body(&subject, &reverted, &markdown);
        let slack = slack_reverted(&subject, &reverted);
        let failures = send_all(ctx, &channels, &body, &slack).await;
        ctx.event(Noted::Reverted {
            reverted: reverted.clone(),
        });
        let addresses: Vec<&str> = reverted.iter().map(|d| d.address.as_str()).collect();
        ctx.log.warn(
            "changed outside monform; reverted to the files",
            Message::Reverted {
                addresses: owned(&addresses),
            },
        );
        if !failures.is_empty() {
            outcome = ctx.failed(
                Noted::report_failed,
                "a revert report was not delivered",
                &failures.join("; "),
                false,
            );
        }
    }
    // Drift a person is to hear of: `notify` resources whose drift is not applied.
    let drifted: Vec<Drifted> = decisions
        .iter()
        .filter(|d| d.origin != Origin::Files && d.verdict == Verdict::Report)
        .filter_map(|d| {
            let change = planned.plan.changes.iter().find(|c| c.address == d.address)?;
            Some(Drifted::of(change, d.policy))
        })
        .collect();
    let before = memory.clone();
    // A reported drift this plan did not read is not over: it stays.
    let unread = |address: &str| {
        address
            .parse::<Address>()
            .is_ok_and(|a| planned.actual.unrefreshed.contains_key(&a))
    };
    let news = memory.news_read(drifted, &unread);
    if news.drifted.is_empty() && news.resolved.is_empty() {
        return outcome;
    }
    // Remembered before sending: a leader killed between the two loses a
    // report rather than sending it twice (its successor reads this).
    if let Err(why) = leadership
        .save_memory(&project.name, memory, ctx.file_memory.as_ref())
        .await
    {
        *memory = before;
        return ctx.failed(
            Noted::report_failed,
            "cannot record the drift reports; none sent",
            &why,
            false,
        );
    }
    let mut news = news;
    codify(ctx, &planned.plan, &mut news.drifted);
    let mut failures = Vec::new();
    if !news.drifted.is_empty() {
        let markdown = ctx.host.markdown(&drift_only(&planned.plan, &news.drifted));
        let body = drift_body(&subject, &news.drifted, &markdown);
        let slack = slack_text(&subject, &news.drifted, &[]);
        failures.extend(send_all(ctx, &channels, &body, &slack).await);
        ctx.event(Noted::Drift {
            drifted: news.drifted.clone(),
        });
        let addresses: Vec<&str> = news.drifted.iter().map(|d| d.address.as_str()).collect();
        ctx.log.warn(
            "changed outside monform",
            Message::Drift {
                addresses: owned(&addresses),
            },
        );
    }
    if !news.resolved.is_empty() {
        let body = in_sync_body(&subject, &news.resolved);
        let slack = slack_text(&subject, &[], &news.resolved);
        failures.extend(send_all(ctx, &channels, &body, &slack).await);
        ctx.event(Noted::InSync {
            resolved: news.resolved.clone(),
        });
        ctx.log.info(
            "back in sync",
            Message::InSync {
                addresses: news.resolved.clone(),
            },
        );
    }
    if !failures.is_empty() {
        // Not delivered: forgotten, so the next interval reports it again.
        *memory = before;
        let _ = leadership
            .save_memory(&project.name, memory, ctx.file_memory.as_ref())
            .await;
        return ctx.failed(
            Noted::report_failed,
            "a drift report was not delivered",
            &failures.join("; "),
            false,
        );
    }
    outcome
}

/// A session over this interval's files (the plan's, and the apply's
/// with its own sweep), or the outcome of its refusal.
fn session_over<'a>(ctx: &'a Context<'_>, files: &'a Opened) -> Result<Session<'a>, Outcome> {
    ctx.opened
        .session_over(files)
        .map_err(|why| ctx.failed(Noted::refused, "refused; nothing was changed", &why.to_string(), false))
}

/// New drift whose policy is `codify`: written on a branch by the host,
/// and the branch named in each one's report.
fn codify(ctx: &Context<'_>, plan: &monform_engine::Plan, news: &mut [Drifted]) {
    let policy = monform_model::DriftPolicy::Codify.as_str();
    let addresses: Vec<&str> = news
        .iter()
        .filter(|d| d.policy == policy)
        .map(|d| d.address.as_str())
        .collect();
    if addresses.is_empty() {
        return;
    }
    let drifted: Vec<ops::Drifted> = ops::drifted(plan)
        .into_iter()
        .filter(|d| addresses.contains(&d.address.to_string().as_str()))
        .collect();
    match ctx.host.codify(&drifted) {
        Ok(Some(branch)) => {
            ctx.event(Noted::Codified {
                branch: branch.clone(),
                addresses: owned(&addresses),
            });
            ctx.log.info(
                "drift written to a branch",
                Message::Codified {
                    branch: branch.clone(),
                    addresses: owned(&addresses),
                },
            );
            for drift in news.iter_mut().filter(|d| d.policy == policy) {
                drift.codified_branch = Some(branch.clone());
            }
        }
        Ok(None) => ctx.log.warn(
            "drift to codify needs a hand edit; reported only",
            Message::CodifyHandEdit {
                addresses: owned(&addresses),
            },
        ),
        Err(why) => {
            ctx.event(Noted::CodifyFailed {
                error: why.clone(),
                addresses: owned(&addresses),
            });
            ctx.log.error(
                "cannot codify drift; reported only",
                Message::CodifyFailed { error: why },
            );
        }
    }
}

/// Burn-rate alerts (`slo_alerts.rs`): each alerting SLO evaluated, a
/// pair's start and end sent to its channels once, remembered first. `Some`
/// outcome when the figures or a delivery failed.
async fn slo_alerts(
    ctx: &Context<'_>,
    client: &monform_api::Client,
    desired: &monform_config::Desired,
    state: &monform_engine::State,
    memory: &mut Memory,
    leadership: &mut Leadership,
    subject: &Subject<'_>,
) -> Option<Outcome> {
    let alerting = slo_alerts::alerting(desired);
    let evaluated_at = ctx
        .settings
        .slo_now_ms
        .unwrap_or_else(|| chrono::Utc::now().timestamp_millis());
    let reports = match slo_alerts::read(
        client,
        desired,
        state,
        Some(evaluated_at),
        subject.environment,
        &ctx.settings.dir,
    )
    .await?
    {
        Ok(reports) => reports,
        Err(why) => return Some(ctx.failed(Noted::slo_failed, "cannot evaluate the SLOs", &why, true)),
    };
    // For `monform gate` (a gate over 1,000 SLOs reads this file, not
    // their results); a failed write only costs a gate a fresh read.
    if let Err(why) = monform_engine::ops::write_slo_cache(&ctx.settings.dir, &reports, evaluated_at, "reconcile") {
        ctx.log.warn(
            "cannot write the SLO cache for gate",
            Message::SloCacheFailed {
                file: monform_engine::ops::SLO_CACHE.to_owned(),
                error: why.to_string(),
            },
        );
    }
    let before = memory.clone();
    let notices = slo_alerts::news(memory, subject, &reports, &alerting);
    if notices.is_empty() {
        if *memory != before {
            let _ = leadership
                .save_memory(subject.project, memory, ctx.file_memory.as_ref())
                .await;
        }
        return None;
    }
    // Remembered before sending, as drift reports: never told twice.
    if let Err(why) = leadership
        .save_memory(subject.project, memory, ctx.file_memory.as_ref())
        .await
    {
        *memory = before;
        return Some(ctx.failed(
            Noted::report_failed,
            "cannot record the SLO alerts; none sent",
            &why,
            false,
        ));
    }
    let mut failures = Vec::new();
    for notice in &notices {
        let channels = match slo_alerts::channels_of(desired, &notice.channels) {
            Ok(channels) => channels,
            Err(why) => {
                failures.push(why);
                continue;
            }
        };
        let (mail, others): (Vec<_>, Vec<_>) = channels
            .into_iter()
            .partition(|c| c.kind == deliver::ChannelKind::Email);
        let body = serde_json::to_value(&notice.body).unwrap_or_default();
        failures.extend(send_all(ctx, &others, &body, &notice.slack).await);
        for channel in &mail {
            let remote = state
                .resources
                .get(&format!("alertChannels.{}", channel.id))
                .map(|entry| entry.remote_id.as_str());
            let (subject, text) = &notice.email;
            match deliver::send_email(client, channel, remote, subject, text).await {
                Ok(()) => ctx.metrics.update(|f| f.reports += 1),
                Err(why) => failures.push(why),
            }
        }
        ctx.event(Noted::SloAlert {
            notice: Box::new(notice.body.clone()),
        });
        let message = format!("{}: burn-rate alert {} {}", notice.address, notice.pair, notice.state);
        let about = Message::SloAlert {
            address: notice.address.clone(),
            pair: notice.pair.clone(),
            state: notice.state.to_owned(),
        };
        if notice.state == "firing" {
            ctx.log.warn(&message, about);
        } else {
            ctx.log.info(&message, about);
        }
    }
    if failures.is_empty() {
        return None;
    }
    // Not delivered: forgotten, so the next interval tells it again.
    *memory = before;
    let _ = leadership
        .save_memory(subject.project, memory, ctx.file_memory.as_ref())
        .await;
    Some(ctx.failed(
        Noted::report_failed,
        "an SLO alert was not delivered",
        &failures.join("; "),
        false,
    ))
}

async fn send_all(ctx: &Context<'_>, channels: &[deliver::Channel], body: &Value, slack: &Value) -> Vec<String> {
    let mut failures = Vec::new();
    for channel in channels {
        let message = match channel.kind {
            deliver::ChannelKind::Webhook => body,
            deliver::ChannelKind::Slack => slack,
            // Drift reports refuse EMAIL channels when they are read; SLO
            // alerts send theirs apart (`deliver::send_email`).
            deliver::ChannelKind::Email => {
                failures.push(format!("alert channel `{}`: EMAIL is not sent here", channel.id));
                continue;
            }
        };
        match deliver::send(&ctx.http, channel, message).await {
            Ok(()) => ctx.metrics.update(|f| f.reports += 1),
            Err(why) => failures.push(why),
        }
    }
    failures
}

/// Applies `targets` as `monform apply --target` would (the project's
/// policies checked first, with no override): `Some` outcome on failure,
/// and the addresses applied.
async fn apply(
    ctx: &Context<'_>,
    session: &Session<'_>,
    targets: Vec<Address>,
    files: &Opened,
) -> (Option<Outcome>, Vec<Address>) {
    let request = ApplyRequest {
        plan: PlanRequest {
            targets,
            excludes: ctx.settings.excludes.clone(),
            destroy: false,
            // With the session's sweep, the targets by id; without, all.
            refresh: Refresh::Rolling,
        },
        saved: None,
        allow_mass_delete: false,
        policy_overrides: Vec::new(),
        // The drift policies decided (`policy.rs`): a change the files and
        // the service both made is applied only under `revert` or `ignore`.
        allow_conflicts: true,
        command: "monform reconcile".to_owned(),
    };
    let ready = match ops::prepare_apply(session, request).await {
        Ok(ready) => ready,
        Err(Refusal::Lock(error)) => {
            ctx.log.warn(
                "another apply holds the lock; trying again next interval",
                Message::Locked {
                    lock: error.to_string(),
                },
            );
            return (None, Vec::new());
        }
        Err(refusal) => return (Some(ctx.refused(&refusal)), Vec::new()),
    };
    // The engine judged the plan by the project's policies (no override).
    if let Some(outcome) = &ready.policy {
        report_policies(ctx, outcome, files);
    }
    if let Some(refusal) = ready.refusal() {
        let outcome = ctx.refused(refusal);
        return (Some(outcome), Vec::new());
    }
    let options = ApplyOptions {
        parallelism: 8,
        stop: Arc::clone(&ctx.stop),
        // The state keeps the service it was first applied to.
        target: None,
    };
    let observer = |event: Event| {
        if let Event::Done { address, action } = &event {
            ctx.event(Noted::Applied {
                address: address.to_string(),
                action: *action,
            });
            ctx.log.info(
                "applied",
                Message::Applied {
                    address: address.to_string(),
                    action: *action,
                },
            );
        }
        if let Event::Failed { address, action, error } = &event {
            ctx.event(Noted::ApplyFailed {
                address: address.to_string(),
                action: *action,
                error: error.to_string(),
            });
            ctx.log.error(
                "apply failed",
                Message::ApplyFailed {
                    address: address.to_string(),
                    error: error.to_string(),
                },
            );
        }
    };
    match ops::execute(ready, &options, &observer).await {
        Ok(applied) => {
            let done = applied.report.done.len() as u64;
            ctx.metrics.update(|f| f.applied += done);
            let failed = (!applied.is_complete()).then_some(Outcome::Error {
                api: applied.report.unreachable,
            });
            (failed, applied.report.done.iter().map(|(a, _)| a.clone()).collect())
        }
        Err(refusal) => (Some(ctx.refused(&refusal)), Vec::new()),
    }
}

/// Each finding of the policies on the interval's apply, in the log (an
/// error when it blocks) and as a `policy` event.
fn report_policies(ctx: &Context<'_>, outcome: &ops::PolicyOutcome, files: &Opened) {
    let sources = &files.loaded.sources;
    let mut found = monform_policy::diagnostics(&outcome.findings, &files.loaded.desired, sources);
    found.extend(outcome.errors.iter().map(|e| e.to_diagnostic()));
    if found.is_empty() {
        return;
    }
    let findings: Vec<PolicyFinding> = found
        .iter()
        .map(|d| PolicyFinding {
            rule: d.code.to_string(),
            severity: match d.severity {
                Severity::Error => "error",
                _ => "warning",
            }
            .to_owned(),
            at: d.location(sources),
            message: d.message.clone(),
        })
        .collect();
    // Past a few of one rule, a count: an interval that finds something on
    // each of 100,000 checks logs a few lines, not 100,000 (the event has
    // every one).
    let log = |diagnostic: &Diagnostic, message: String, about: Message| match diagnostic.severity {
        Severity::Error => ctx.log.error(&message, about),
        _ => ctx.log.warn(&message, about),
    };
    let one = |diagnostic: &Diagnostic| {
        let about = Message::Policy {
            rule: diagnostic.code.to_string(),
            at: diagnostic.location(sources),
            more: None,
        };
        log(diagnostic, format!("policy: {}", diagnostic.message), about);
    };
    for item in summary::diagnostics(&found, |_| true) {
        match item {
            Item::Full(diagnostic) => one(diagnostic),
            Item::Summary { first, next, total } => {
                let more = total - 1 - next.len();
                next.into_iter().for_each(one);
                let about = Message::Policy {
                    rule: first.code.to_string(),
                    at: None,
                    more: Some(more),
                };
                log(
                    first,
                    format!(
                        "policy: {more} more of {} (the policy event lists every one)",
                        first.code
                    ),
                    about,
                );
            }
        }
    }
    ctx.event(Noted::Policy {
        blocks: outcome.blocks(),
        findings,
    });
}

/// A change's log line's fields.
fn change(decision: &Decision) -> Message {
    Message::Change {
        address: decision.address.to_string(),
        action: decision.action,
        origin: decision.origin,
        policy: decision.policy.as_str().to_owned(),
        verdict: decision.verdict,
    }
}

fn owned(addresses: &[&str]) -> Vec<String> {
    addresses.iter().map(|a| (*a).to_owned()).collect()
}

/// A change's event.
fn describe(decision: &Decision) -> Noted {
    Noted::Change {
        address: decision.address.to_string(),
        action: decision.action,
        origin: decision.origin,
        policy: decision.policy.as_str().to_owned(),
        verdict: decision.verdict,
    }
}
