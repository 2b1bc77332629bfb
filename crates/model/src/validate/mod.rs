//! Validation of one resource's JSON against the model: the shape (types,
//! fields, enums, ranges: `shape`) and the rules across fields (`rules`).
//! Every violation is reported, never only the first.

pub(crate) mod compiled;
mod shape;

pub use crate::suggest::suggest;
pub use shape::{RefSite, ScriptSite, Shape, check_shape, check_shape_in, check_shape_worded};

use serde_json::Value;

use crate::{FieldPath, Kind, Resource};

/// One thing wrong with a resource, at a field.
#[derive(Debug, Clone, PartialEq)]
pub struct Violation {
    pub path: FieldPath,
    /// What is wrong, in lower case without a trailing period.
    pub message: String,
    /// A next step, e.g. "did you mean `frequency`?".
    pub help: Option<String>,
    /// Points at the field's key (an unknown field) rather than its value.
    pub at_key: bool,
}

impl Violation {
    pub fn new(path: FieldPath, message: impl Into<String>) -> Violation {
        Violation {
            path,
            message: message.into(),
            help: None,
            at_key: false,
        }
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Violation {
        self.help = Some(help.into());
        self
    }

    pub fn at_key(mut self) -> Violation {
        self.at_key = true;
        self
    }

    /// The field a "missing required field" violation is about. Such a
    /// violation sits at the object that lacks the field (where a file
    /// needs it added); the API names the field itself.
    pub fn missing_field(&self) -> Option<&str> {
        self.message.strip_prefix("missing required field `")?.strip_suffix('`')
    }
}

/// Checks shape and rules of a resource whose scripts are inline strings
/// (the API's form), returning the typed resource or every violation.
pub fn validate_resource(kind: Kind, value: &Value) -> Result<Resource, Vec<Violation>> {
    let shape = check_shape(kind, value);
    let mut violations = shape.violations;
    for script in shape.scripts {
        violations.push(Violation::new(script.path, "a script must be a string here"));
    }
    if !violations.is_empty() {
        return Err(violations);
    }
    into_resource(kind, value.clone())
}

/// Applies the cross-field rules to JSON that passed `check_shape` (scripts
/// resolved) and builds the typed resource.
pub fn into_resource(kind: Kind, mut value: Value) -> Result<Resource, Vec<Violation>> {
    let violations = crate::rules::check(kind, &value, &|_| true);
    if !violations.is_empty() {
        return Err(violations);
    }
    integral_floats_as_integers(&mut value);
    Resource::from_json(kind, value).map_err(|e| vec![Violation::new(FieldPath::root(), e.to_string())])
}

/// `6.0` where the schema says integer is an integer (JSON Schema's rule,
/// which the shape check follows); the typed fields want it written `6`.
/// Fields typed as floats take either form, so every integral float is
/// rewritten.
fn integral_floats_as_integers(value: &mut Value) {
    match value {
        Value::Number(n) if !n.is_i64() && !n.is_u64() => {
            if let Some(f) = n.as_f64()
                && f.fract() == 0.0
                && f.abs() < 9.0e15
            {
                *value = Value::from(f as i64);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(integral_floats_as_integers),
        Value::Object(fields) => fields.values_mut().for_each(integral_floats_as_integers),
        _ => {}
    }
}

#[cfg(test)]
mod tests;
