//! The project's Rego policies over a plan (issue 32): the engine's rule
//! that an apply does not start while a `deny` (or `violation`) holds that
//! no `--policy-override` names, or while a policy cannot be evaluated
//! (whether it would deny is not known).

use monform_config::Desired;
use monform_model::sensitive::MASK;
use monform_policy::input::Input;
use monform_policy::{EvalError, Finding, Policies};
use serde_json::{Value, json};

use super::{Planned, ProjectPolicies, Ready, Refusal};
use crate::actual::Actual;
use crate::identity::is_ownership_tag;
use crate::plan::{Action, Plan};

/// What to evaluate: the policies, the input of the files
/// ([`ProjectPolicies::files`]) and the rules overridden for this run.
#[derive(Debug, Clone)]
pub struct PolicyCheck<'a> {
    pub policies: &'a Policies,
    pub files: &'a Input,
    pub overrides: &'a [String],
}

/// The policies' findings on a plan.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PolicyOutcome {
    pub findings: Vec<Finding>,
    pub errors: Vec<EvalError>,
    /// The rules overridden for this run (`--policy-override`), as given.
    pub overrides: Vec<String>,
}

impl PolicyOutcome {
    /// Whether an apply must not start.
    pub fn blocks(&self) -> bool {
        !self.errors.is_empty() || self.findings.iter().any(Finding::blocks)
    }
}

/// Evaluates the policies over the files and the plan (`input.plan`).
pub fn check_policies(planned: &Planned, desired: &Desired, check: &PolicyCheck<'_>) -> PolicyOutcome {
    check_plan_input(plan_input(&planned.plan, desired, &planned.actual), check)
}

/// Evaluates the policies over the files and `plan`, a plan's
/// [`plan_input`] taken before: a plan that is only shown frees the
/// account's objects and the state before the files' input is built
/// (at 100,000 checks each is a fifth of a GB).
pub fn check_plan_input(plan: Value, check: &PolicyCheck<'_>) -> PolicyOutcome {
    let input = check.files.with("plan", plan);
    let (findings, errors) = check.policies.evaluate(&input, check.overrides);
    PolicyOutcome {
        findings,
        errors,
        overrides: check.overrides.to_vec(),
    }
}

impl Ready<'_> {
    /// The project's policies over this apply's plan, as
    /// [`super::prepare_apply`] runs them. A destroy's input has no
    /// resources: after it none of the files' resources runs, so the
    /// policies judge its deletes (`input.plan`), not the files' settings.
    pub(super) fn judge(&mut self, policies: &ProjectPolicies, overrides: &[String]) {
        let files = match self.destroy {
            true => policies.places.without_resources(),
            false => policies.files(self.session.desired),
        };
        let check = PolicyCheck {
            policies: &policies.policies,
            files: &files,
            overrides,
        };
        self.check_policies(&check);
    }

    /// Evaluates the policies over this apply's plan; one that blocks
    /// makes [`super::execute`] refuse (after any refusal found before).
    pub fn check_policies(&mut self, check: &PolicyCheck<'_>) -> &PolicyOutcome {
        let outcome = check_policies(&self.planned, self.session.desired, check);
        if outcome.blocks() && self.refused.is_none() {
            self.refused = Some(Refusal::Policy(outcome.clone()));
        }
        self.policy.insert(outcome)
    }
}

/// `input.plan`: the changes as `plan --format json` has them (no-ops left
/// out), each with whether it reverts drift and, for what the service
/// holds, its tags (a delete's are what the files no longer say).
pub fn plan_input(plan: &Plan, desired: &Desired, actual: &Actual) -> Value {
    let changes: Vec<Value> = plan
        .changes
        .iter()
        .filter(|c| c.action != Action::Noop)
        .map(|change| {
            let fields = change.fields_in(desired);
            let fields: Vec<Value> = fields
                .iter()
                .map(|f| {
                    let shown = |v: &Option<Value>| match (f.sensitive, v) {
                        (true, Some(_)) => json!(MASK),
                        (_, v) => v.clone().unwrap_or(Value::Null),
                    };
                    let mut field = json!({"path": f.path, "before": shown(&f.before), "after": shown(&f.after),
                           "sensitive": f.sensitive, "drift": f.drift});
                    // Masked as before and after are, by the differ.
                    if let Some(conflict) = &f.conflict {
                        field["conflict"] =
                            json!({"applied": conflict.applied, "service": conflict.service, "files": conflict.files});
                    }
                    field
                })
                .collect();
            let mut value = json!({
                "address": change.address.to_string(),
                "action": change.action,
                "remoteId": change.remote_id,
                "reason": change.reason.text(),
                "drift": change.reason.is_drift() || change.fields.iter().any(|f| f.drift),
                "fields": fields,
            });
            if let Some(from) = &change.from {
                value["from"] = json!(from.to_string());
            }
            let tags = actual
                .owned
                .get(&change.address)
                .and_then(|remote| remote.field("tags"))
                .and_then(|tags| tags.as_array().cloned());
            if let Some(tags) = tags {
                let tags: Vec<Value> = tags
                    .into_iter()
                    .filter(|t| t.as_str().is_some_and(|t| !is_ownership_tag(t)))
                    .collect();
                value["tags"] = Value::Array(tags);
            }
            value
        })
        .collect();
    json!({ "summary": plan.summary(), "changes": changes })
}
