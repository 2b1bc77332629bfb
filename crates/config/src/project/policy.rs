//! `[policy] max-instructions` and `timeout` in monform.toml (issue 43):
//! how far one evaluation of a policy rule may go. A policy file comes
//! with the project, so with a pull request: without a bound, two nested
//! `numbers.range(1, 100000)` loops held `validate` and `plan` forever.

use std::time::Duration;

use super::{parse_duration, wrong_type};
use crate::diagnostic::{Diagnostic, quote};
use crate::tree::{Entry, NodeValue};

/// The bounds of one rule's evaluation (`deny`, `violation`, `warn` or a
/// `test_*` rule of a package); each has a default, so the keys are optional.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PolicyLimits {
    /// `max-instructions`: instructions of regorus's virtual machine, for a
    /// rule that compiles to it (the others are bounded by `timeout`).
    pub max_instructions: u64,
    /// `timeout`: wall time, on the virtual machine and the interpreter.
    pub timeout: Duration,
}

impl PolicyLimits {
    /// The ten policies of the bench over 100,000 checks run at most 4.7
    /// million instructions in one rule (`owner_tag`, 0.6 s): a twentieth
    /// of this, which two nested `numbers.range(1, 100000)` loops reach in
    /// about 3 s. Deterministic, unlike the timeout: a rule stopped by it is
    /// stopped on every machine.
    pub const DEFAULT_MAX_INSTRUCTIONS: u64 = 100_000_000;
    /// The slowest of those rules takes 0.6 s.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
    /// As written in monform.toml, for messages.
    pub const DEFAULT_TIMEOUT_TEXT: &str = "10s";
}

impl Default for PolicyLimits {
    fn default() -> PolicyLimits {
        PolicyLimits {
            max_instructions: PolicyLimits::DEFAULT_MAX_INSTRUCTIONS,
            timeout: PolicyLimits::DEFAULT_TIMEOUT,
        }
    }
}

/// Reads `policy.max-instructions` or `policy.timeout` (the keys
/// [`super::SECTIONS`] lists besides `paths`) into `limits`.
pub(crate) fn read_limit(field: &Entry, limits: &mut PolicyLimits, diagnostics: &mut Vec<Diagnostic>) {
    let path = format!("policy.{}", field.key);
    match (field.key.as_str(), &field.value.value) {
        ("max-instructions", NodeValue::Int(n)) if *n >= 1 => limits.max_instructions = *n as u64,
        ("max-instructions", NodeValue::Int(n)) => diagnostics.push(
            Diagnostic::new(
                "monform::policy-limit",
                format!("policy.max-instructions {n} is not a number of instructions of 1 or more"),
            )
            .at(field.value.span, "here")
            .help(format!("the default is {}", PolicyLimits::DEFAULT_MAX_INSTRUCTIONS)),
        ),
        ("max-instructions", _) => diagnostics.push(wrong_type(&path, &field.value, "a whole number")),
        ("timeout", NodeValue::Str(text)) => match parse_duration(text) {
            Some(timeout) if timeout >= Duration::from_secs(1) => limits.timeout = timeout,
            _ => diagnostics.push(
                Diagnostic::new(
                    "monform::policy-limit",
                    format!("policy.timeout {} is not a duration of 1s or more", quote(&field.value)),
                )
                .at(field.value.span, "here")
                .help(format!(
                    "write a number and a unit: \"30s\", \"2m\" (default \"{}\")",
                    PolicyLimits::DEFAULT_TIMEOUT_TEXT
                )),
            ),
        },
        ("timeout", _) => diagnostics.push(wrong_type(&path, &field.value, "a duration such as \"10s\"")),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::project::read_project;
    use crate::tree::parse_toml;

    fn read(toml: &str) -> (PolicyLimits, Vec<Diagnostic>) {
        let root = parse_toml(0, toml).expect("TOML");
        let mut diagnostics = Vec::new();
        let project = read_project(&root, &[], &mut diagnostics).expect("a project");
        (project.policy_limits, diagnostics)
    }

    #[test]
    fn the_limits_have_defaults_and_are_read_from_policy() {
        let (limits, diagnostics) = read("[project]\nname = \"p\"\n");
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        assert_eq!(limits, PolicyLimits::default());
        let (limits, diagnostics) =
            read("[project]\nname = \"p\"\n[policy]\nmax-instructions = 5000\ntimeout = \"1m30s\"\n");
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        assert_eq!(
            limits,
            PolicyLimits {
                max_instructions: 5000,
                timeout: Duration::from_secs(90)
            }
        );
    }

    #[test]
    fn a_wrong_limit_is_a_diagnostic_and_the_default_stays() {
        let (limits, diagnostics) = read("[project]\nname = \"p\"\n[policy]\nmax-instructions = 0\ntimeout = \"0s\"\n");
        assert_eq!(limits, PolicyLimits::default());
        let messages: Vec<&str> = diagnostics.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "policy.max-instructions 0 is not a number of instructions of 1 or more",
                "policy.timeout `0s` is not a duration of 1s or more"
            ]
        );
        let (_, diagnostics) = read("[project]\nname = \"p\"\n[policy]\ntimeout = 10\nmax-instructions = \"many\"\n");
        assert_eq!(diagnostics.len(), 2, "{diagnostics:?}");
    }
}
