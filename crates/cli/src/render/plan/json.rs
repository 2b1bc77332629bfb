//! The plan for machines: the versioned JSON of design.md, as typed
//! structs whose schema `monform schema --output plan` publishes.

use monform_engine::{Action, Plan, Refresh, Summary};
use serde::Serialize;
use serde_json::Value;

use crate::render::budget::RunsPerMonth;
use crate::render::lists::ItemJson;
use crate::render::renames::{DiscardedJson, MoveJson};

/// `plan --format json` and `show PLANFILE --format json`: stable key
/// order, no secrets (a sensitive field's values are masked).
#[derive(Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "Plan")]
pub struct PlanJson {
    /// 1: a field's meaning changes only with a new version.
    pub format_version: u32,
    /// monform.toml's project name.
    pub project: String,
    pub summary: Summary,
    /// Every change but the no-ops, in the order apply makes them.
    pub changes: Vec<ChangeJson>,
    /// Renames the plan guesses (a delete and a create of the same object):
    /// a `moved` entry would keep the object and its results.
    pub suggested_moves: Vec<MoveJson>,
    /// What the plan's deletes of checks throw away; absent when it deletes none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub discarded_results: Option<DiscardedJson>,
    /// Absent after a full refresh (`--refresh=all`, the default).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refresh: Option<RefreshJson>,
    /// Changes left out by `--exclude`; absent when none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub excluded: Option<Vec<ExcludedJson>>,
    /// The environment planned (`--env`), when the project declares some.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub environment: Option<String>,
    /// `plan` only: runs a month before and after.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runs_per_month: Option<RunsPerMonth>,
    /// `plan` only, when the files declare SLOs: what each needs of its
    /// member checks and the runs a month that costs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slo_runs: Option<Vec<crate::render::slo::SloRunsJson>>,
    /// The project's policies' findings and this run's overrides, when it has policies
    /// (`show` prints what the saved plan kept).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<crate::render::policy::PolicyJson>")]
    pub policy: Option<Value>,
}

/// One change of the plan.
#[derive(Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChangeJson {
    /// `checks.NAME`, `groups.NAME`...
    pub address: String,
    pub action: Action,
    /// The service's id of the object; null for a create.
    pub remote_id: Option<String>,
    /// Why, in words (`new in configuration`, `config changed`, `drift`...).
    pub reason: &'static str,
    pub fields: Vec<FieldJson>,
    /// The address the object had, when the files declare it moved here.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// `plan --effective`: a check as it will run, after `[defaults]` and its group.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub effective: Option<Value>,
}

/// One field a change changes.
#[derive(Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FieldJson {
    /// The field's path (`request.headers`).
    pub path: String,
    /// Null when the field is absent; masked when sensitive.
    pub before: Option<Value>,
    pub after: Option<Value>,
    /// The values are masks: a secret is never printed.
    pub sensitive: bool,
    /// Changed outside monform (the files still say what was applied).
    pub drift: bool,
    /// Changed both in the files and in the service since the last apply.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conflict: Option<ConflictJson>,
    /// A list, item by item (updates and replaces; never a sensitive field).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub items: Option<Vec<ItemJson>>,
}

/// The three values of a field changed on both sides.
#[derive(Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConflictJson {
    /// What monform last applied; null when the state keeps only its fingerprint.
    pub applied: Option<Value>,
    /// The service's; null when the service never returns it (a secret).
    pub service: Option<Value>,
    /// The files'; null when they leave it out and it has no default.
    pub files: Value,
    /// The files left the field out: `files` is the model's default.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub files_default: bool,
}

/// A partial refresh (`--refresh=changed|none`).
#[derive(Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RefreshJson {
    /// `changed`, `none` or `rolling`.
    pub mode: &'static str,
    /// Objects of the state not read: trusted to be as last applied.
    pub not_refreshed: usize,
    /// Every object read after all: drift was checked.
    pub drift_checked: bool,
}

/// A change `--exclude` left out.
#[derive(Serialize, schemars::JsonSchema)]
pub struct ExcludedJson {
    pub address: String,
    pub action: Action,
    /// `--exclude PATTERN`, or the excluded resource it depends on.
    pub reason: String,
}

/// The plan as [`PlanJson`], without what only `plan` knows (the
/// environment, the run budget, effective checks, policies).
pub fn json(plan: &Plan) -> PlanJson {
    let changes = plan
        .changes
        .iter()
        .filter(|c| c.action != Action::Noop)
        .map(|c| ChangeJson {
            address: c.address.to_string(),
            action: c.action,
            remote_id: c.remote_id.clone(),
            reason: c.reason.text(),
            fields: c
                .fields
                .iter()
                .map(|f| FieldJson {
                    path: f.path.clone(),
                    before: f.before.clone(),
                    after: f.after.clone(),
                    sensitive: f.sensitive,
                    drift: f.drift,
                    // Changed in the files and in the service: the three values (masked as before and after are).
                    conflict: f.conflict.as_ref().map(|conflict| ConflictJson {
                        applied: conflict.applied.clone(),
                        service: conflict.service.clone(),
                        files: conflict.files.clone(),
                        files_default: conflict.files_default,
                    }),
                    // Item by item as well, for lists (never for a sensitive field).
                    items: Some(f)
                        .filter(|f| !f.sensitive && matches!(c.action, Action::Update | Action::Replace))
                        .and_then(|f| crate::render::lists::json_items(plan, c, f)),
                })
                .collect(),
            from: c.from.as_ref().map(ToString::to_string),
            effective: None,
        })
        .collect();
    PlanJson {
        format_version: 1,
        project: plan.project.clone(),
        summary: plan.summary(),
        changes,
        suggested_moves: crate::render::renames::json(plan),
        discarded_results: crate::render::renames::json_discards(plan),
        // Only after a partial refresh: a full plan's JSON is as it was.
        refresh: (plan.refreshed.mode != Refresh::All).then(|| RefreshJson {
            mode: plan.refreshed.mode.as_str(),
            not_refreshed: plan.refreshed.not_refreshed,
            drift_checked: plan.refreshed.mode == Refresh::Changed && plan.refreshed.not_refreshed == 0,
        }),
        excluded: (!plan.excluded.is_empty()).then(|| {
            plan.excluded
                .iter()
                .map(|e| ExcludedJson {
                    address: e.address.to_string(),
                    action: e.action,
                    reason: e.by.text(),
                })
                .collect()
        }),
        environment: None,
        runs_per_month: None,
        slo_runs: None,
        policy: None,
    }
}
