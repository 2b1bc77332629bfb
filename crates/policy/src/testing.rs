//! `monform policy test`: every `test_*` rule of the policies, as `opa
//! test` runs them: a test passes when its rule is true; its inputs are its
//! own (`with input as {...}`), never the project's.

use std::time::{Duration, Instant};

use monform_config::source::Span;

use crate::Policies;
use crate::evaluate::error_at;
use crate::limits::{Deadline, Failure};

/// One test and how it went.
#[derive(Debug, Clone, PartialEq)]
pub struct TestCase {
    /// `monform.locations.test_two_locations_pass`.
    pub name: String,
    pub at: Span,
    pub outcome: TestOutcome,
    pub took: Duration,
}

#[derive(Debug, Clone, PartialEq)]
pub enum TestOutcome {
    Pass,
    /// The rule is false or undefined.
    Fail,
    /// It could not be evaluated.
    Error(String),
}

/// Every test of the policies, in file order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TestReport {
    pub cases: Vec<TestCase>,
}

impl TestReport {
    pub fn passed(&self) -> usize {
        self.cases.iter().filter(|c| c.outcome == TestOutcome::Pass).count()
    }

    pub fn failed(&self) -> usize {
        self.cases.len() - self.passed()
    }

    /// Every test passed, and there was at least one: a CI step that tests
    /// nothing is a mistake to say, not a success.
    pub fn is_success(&self) -> bool {
        !self.cases.is_empty() && self.failed() == 0
    }
}

impl Policies {
    /// Runs every `test_*` rule with an empty `input`.
    pub fn test(&self) -> TestReport {
        let mut report = TestReport::default();
        let mut engine = self.engine.clone();
        engine.set_input(regorus::Value::new_object());
        for module in &self.modules {
            for (rule, at) in &module.tests {
                let name = format!("{}.{rule}", module.package);
                if report.cases.iter().any(|c| c.name == name) {
                    continue;
                }
                let started = Instant::now();
                // A test is a rule like the others: bounded by `[policy] timeout`.
                let deadline = Deadline::start(self.limits);
                let evaluated = deadline.timer().and_then(|timer| {
                    engine.set_execution_timer_config(timer);
                    engine
                        .eval_rule(format!("data.{name}"))
                        .map_err(|e| deadline.interpreter_error(e.as_ref()))
                });
                let outcome = match evaluated {
                    Ok(regorus::Value::Bool(true)) => TestOutcome::Pass,
                    Ok(_) => TestOutcome::Fail,
                    Err(Failure::Limit { hit, .. }) => TestOutcome::Error(format!("{} and was stopped", hit.what())),
                    Err(Failure::Other(error)) => TestOutcome::Error(error_at(at.file, "", &error).message),
                };
                report.cases.push(TestCase {
                    name,
                    at: *at,
                    outcome,
                    took: started.elapsed(),
                });
            }
        }
        report
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use monform_config::source::{Format, SourceFile, Sources};

    #[test]
    fn tests_pass_fail_or_error_each_with_its_own_input() {
        let text = "package monform.t\n\ndeny contains \"one\" if { input.n == 1 }\n\ntest_denies_one if { deny[\"one\"] with input as {\"n\": 1} }\n\ntest_wrong if { deny[\"one\"] with input as {\"n\": 2} }\n\ntest_broken if { 1 / 0 }\n";
        let mut sources = Sources::default();
        let file = sources.add(SourceFile {
            name: "t.rego".into(),
            path: "t.rego".into(),
            text: text.into(),
            format: Format::Rego,
        });
        let mut policies = Policies::default();
        policies.add(file, "t.rego", text).unwrap();
        let report = policies.test();
        let outcomes: Vec<(&str, bool)> = report
            .cases
            .iter()
            .map(|c| (c.name.as_str(), c.outcome == TestOutcome::Pass))
            .collect();
        assert_eq!(
            outcomes,
            vec![
                ("monform.t.test_denies_one", true),
                ("monform.t.test_wrong", false),
                ("monform.t.test_broken", false)
            ]
        );
        assert!(!report.is_success());
        assert_eq!((report.passed(), report.failed()), (1, 2));
    }
}
