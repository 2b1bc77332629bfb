//! The names an expression reads: the root module's variables (`[vars]`
//! or `${env:}`) and each module's locals.

use std::collections::BTreeMap;

use serde_json::Value;

use super::{Node, Walked};
use crate::Note;
use crate::expr::{Bound, Scope, is_literal, translate};
use crate::tf::Module;

/// The root module's variables: literal values into `[vars]` (the
/// `terraform.tfvars` value over the default), sensitive ones as
/// `${env:NAME}`, never written.
pub(super) fn root_variables(module: &Module, vars: &mut BTreeMap<String, Bound>, walked: &mut Walked) {
    let empty = Scope::default();
    for variable in &module.variables {
        if variable.sensitive {
            let env = env_for_variable(&variable.name);
            walked.env.push((
                env.clone(),
                format!("Terraform variable `{}` (sensitive)", variable.name),
            ));
            vars.insert(
                variable.name.clone(),
                Bound::Value {
                    value: Value::String(format!("${{env:{env}}}")),
                    literal: None,
                },
            );
            continue;
        }
        let set = module
            .tfvars
            .get(&variable.name)
            .map(|n| &n.expr)
            .or(variable.default.as_ref());
        let Some(expr) = set else {
            walked.notes.push(Note::new(
                variable.place.clone(),
                format!(
                    "variable `{}` has no default and no value in terraform.tfvars: set `{}` in monform.toml's [vars] by hand",
                    variable.name, variable.name
                ),
            ));
            vars.insert(
                variable.name.clone(),
                Bound::Value {
                    value: Value::String(format!("${{var:{}}}", variable.name)),
                    literal: None,
                },
            );
            continue;
        };
        match translate(expr, &empty) {
            Ok(value) if is_literal(&value) && !value.is_null() => {
                walked.vars.insert(variable.name.clone(), value.clone());
                vars.insert(
                    variable.name.clone(),
                    Bound::Value {
                        value: Value::String(format!("${{var:{}}}", variable.name)),
                        literal: Some(value),
                    },
                );
            }
            Ok(_) | Err(_) => {
                walked.notes.push(Note::new(
                    variable.place.clone(),
                    format!(
                        "variable `{}`: its value is not a literal monform can hold in [vars]; edit by hand",
                        variable.name
                    ),
                ));
                vars.insert(
                    variable.name.clone(),
                    Bound::Fail(format!("variable `{}` has no literal value", variable.name)),
                );
            }
        }
    }
}

/// The environment variable a sensitive Terraform variable becomes.
pub(super) fn env_for_variable(name: &str) -> String {
    let upper: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    if upper.starts_with(|c: char| c.is_ascii_alphabetic()) {
        upper
    } else {
        format!("TF_{upper}")
    }
}

/// Locals in declaration order, again while one more translates (a local
/// may name a later one). At the root a literal one goes to `[vars]` (as
/// `local_NAME` when a variable has its name); anything else is inlined.
pub(super) fn evaluate_locals(node: &Node, scope: &mut Scope, is_root: bool, walked: &mut Walked) {
    let module = &node.module;
    let mut pending: Vec<usize> = (0..module.locals.len()).collect();
    let mut last_error: BTreeMap<usize, String> = BTreeMap::new();
    loop {
        let before = pending.len();
        pending.retain(|&i| {
            let local = &module.locals[i];
            match translate(&local.expr, scope) {
                Ok(value) => {
                    let bound = if is_root && is_literal(&value) && !value.is_null() {
                        let name = if scope.vars.contains_key(&local.name) || walked.vars.contains_key(&local.name) {
                            format!("local_{}", local.name)
                        } else {
                            local.name.clone()
                        };
                        walked.vars.insert(name.clone(), value.clone());
                        Bound::Value {
                            value: Value::String(format!("${{var:{name}}}")),
                            literal: Some(value),
                        }
                    } else {
                        let literal = is_literal(&value).then(|| value.clone());
                        Bound::Value { value, literal }
                    };
                    scope.locals.insert(local.name.clone(), bound);
                    false
                }
                Err(reason) => {
                    last_error.insert(i, reason);
                    true
                }
            }
        });
        if pending.is_empty() || pending.len() == before {
            break;
        }
    }
    for i in pending {
        let local = &module.locals[i];
        let reason = last_error.remove(&i).unwrap_or_default();
        walked.notes.push(Note::new(
            local.place.clone(),
            format!(
                "local `{}` = `{}`: {reason} is not translated; where it is used, the state's value is written (edit by hand)",
                local.name,
                module.files[local.file].text_of(&local.expr)
            ),
        ));
        scope.locals.insert(local.name.clone(), Bound::Fail(reason));
    }
}
