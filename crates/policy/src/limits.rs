//! The bounds of one rule's evaluation (`[policy] max-instructions` and
//! `timeout`, issue 43), on regorus's virtual machine and its interpreter,
//! and what is said when a rule goes past one.
//!
//! Policy files come with the project, so with a pull request: a rule
//! that loops over `numbers.range(1, 100000)` twice must stop with an
//! error naming it, and the other rules still run.
//!
//! Memory is not bounded directly: regorus's memory limit
//! (`allocator-memory-limits`) counts only what its own vendored mimalloc
//! allocates as the process's allocator, which `monform` is not. The
//! instruction limit and the timeout bound how long a rule can grow a
//! value.

use std::num::NonZeroU32;
use std::time::{Duration, Instant};

use monform_config::project::PolicyLimits;
use regorus::utils::limits::ExecutionTimerConfig;

/// Which bound a rule went past.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitHit {
    /// `[policy] max-instructions`, with its value.
    Instructions(u64),
    /// `[policy] timeout`, with its value.
    Timeout(Duration),
}

impl LimitHit {
    /// What went past the bound, for the message: "ran more than 5000 instructions".
    pub fn what(self) -> String {
        match self {
            LimitHit::Instructions(limit) => {
                format!("ran more than {limit} instructions (`[policy] max-instructions`)")
            }
            LimitHit::Timeout(limit) => format!("ran longer than {} (`[policy] timeout`)", duration_text(limit)),
        }
    }

    /// The setting to raise, with its default.
    pub fn help(self) -> String {
        match self {
            LimitHit::Instructions(_) => format!(
                "a policy that loops over every pair of resources, or over a large `numbers.range`, goes past it; if this rule must, raise `max-instructions` under `[policy]` in monform.toml (default {})",
                PolicyLimits::DEFAULT_MAX_INSTRUCTIONS
            ),
            LimitHit::Timeout(_) => format!(
                "a policy that loops over every pair of resources, or over a large `numbers.range`, goes past it; if this rule must, raise `timeout` under `[policy]` in monform.toml (default \"{}\")",
                PolicyLimits::DEFAULT_TIMEOUT_TEXT
            ),
        }
    }
}

/// A duration as monform.toml writes it ("10s", "2m", "1h30m").
fn duration_text(duration: Duration) -> String {
    let seconds = duration.as_secs();
    let (hours, minutes, seconds) = (seconds / 3600, seconds / 60 % 60, seconds % 60);
    let mut text = String::new();
    for (n, unit) in [(hours, 'h'), (minutes, 'm'), (seconds, 's')] {
        if n > 0 {
            text.push_str(&format!("{n}{unit}"));
        }
    }
    if text.is_empty() {
        text = format!("{}ms", duration.as_millis());
    }
    text
}

/// Why a rule gave no value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Failure {
    /// It went past a bound; `at` is the line of the loop it was running
    /// in the rule's own file, when the VM knows it.
    Limit { hit: LimitHit, at: Option<usize> },
    /// Any other error (a conflict, a builtin's), as regorus words it.
    Other(String),
}

/// Work units (VM instructions, interpreter steps) between two reads of
/// the clock: a read costs tens of nanoseconds, an instruction about as
/// much, so the check is a fraction of a percent and a loop is stopped
/// within microseconds of the deadline.
const CHECK_INTERVAL: NonZeroU32 = NonZeroU32::new(1024).expect("not zero");

/// One rule's deadline, from before its compilation to the VM to the end
/// of its run (on the VM or the interpreter).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Deadline {
    started: Instant,
    limits: PolicyLimits,
}

impl Deadline {
    pub(crate) fn start(limits: PolicyLimits) -> Deadline {
        Deadline {
            started: Instant::now(),
            limits,
        }
    }

    pub(crate) fn max_instructions(&self) -> usize {
        usize::try_from(self.limits.max_instructions).unwrap_or(usize::MAX)
    }

    /// The timer of the next step: what is left of the timeout, or the
    /// limit's error when nothing is.
    pub(crate) fn timer(&self) -> Result<ExecutionTimerConfig, Failure> {
        let left = self.limits.timeout.saturating_sub(self.started.elapsed());
        if left.is_zero() {
            return Err(self.timed_out());
        }
        Ok(ExecutionTimerConfig {
            limit: left,
            check_interval: CHECK_INTERVAL,
        })
    }

    fn timed_out(&self) -> Failure {
        Failure::Limit {
            hit: LimitHit::Timeout(self.limits.timeout),
            at: None,
        }
    }

    /// The interpreter's error as a failure: its time limit is one of ours.
    pub(crate) fn interpreter_error(&self, error: &(dyn std::error::Error + 'static)) -> Failure {
        let mut cause = Some(error);
        while let Some(error) = cause {
            if let Some(regorus::LimitError::TimeLimitExceeded { .. }) = error.downcast_ref::<regorus::LimitError>() {
                return self.timed_out();
            }
            cause = error.source();
        }
        // Raised inside a function call, it comes back as its text only.
        let message = error.to_string();
        if message.contains("execution exceeded time limit") {
            return self.timed_out();
        }
        Failure::Other(message)
    }

    /// The VM's error as a failure, at the loop it was running.
    pub(crate) fn vm_error(&self, vm: &regorus::rvm::RegoVM, error: regorus::rvm::vm::VmError) -> Failure {
        use regorus::rvm::vm::VmError;
        // regorus 0.14 numbers an instruction's source in the order the
        // compiler first met it, but lists the program's sources in module
        // order, so the index names no file. The compiler starts at the
        // rule asked for: a program of one source is the rule's own file;
        // in one of several, the line is not said.
        let at = |pc: usize| {
            let program = vm.get_program();
            let span = program.get_instruction_span(innermost_loop(program, pc).unwrap_or(pc))?;
            let one_source = program.instruction_spans.iter().flatten().all(|s| s.source_index == 0);
            one_source.then_some(span.line)
        };
        match error {
            VmError::InstructionLimitExceeded { pc, .. } => Failure::Limit {
                hit: LimitHit::Instructions(self.limits.max_instructions),
                at: at(pc),
            },
            VmError::TimeLimitExceeded { pc, .. } => Failure::Limit {
                hit: LimitHit::Timeout(self.limits.timeout),
                at: at(pc),
            },
            // A helper rule's conflict, in the interpreter's words, naming
            // the rule (and key): the error is at the rule evaluated.
            VmError::RuleConflict { rule, .. } => {
                Failure::Other(format!("{}: rules must not produce multiple outputs", rule_name(&rule)))
            }
            VmError::ObjectKeyConflict { rule, key, .. } => Failure::Other(format!(
                "{}[{key}]: rules must not produce multiple outputs",
                rule_name(&rule)
            )),
            VmError::FunctionConflict { rule, .. } => Failure::Other(format!(
                "{}: functions must not produce multiple outputs for same inputs",
                rule_name(&rule)
            )),
            other => Failure::Other(other.to_string()),
        }
    }
}

/// A rule's name as policies write it: `monform.p.x` for `data.monform.p.x`.
fn rule_name(path: &str) -> &str {
    path.strip_prefix("data.").unwrap_or(path)
}

/// The start of the innermost loop whose body holds `pc` (`some j in
/// ...`): the instruction a loop is stopped at is mostly its bookkeeping,
/// placed at the end of the rule's body; the loop is what to look at. The
/// VM's own loop stack is emptied by the time its error comes back.
fn innermost_loop(program: &regorus::rvm::program::Program, pc: usize) -> Option<usize> {
    use regorus::rvm::Instruction;
    program
        .instructions
        .iter()
        .enumerate()
        .filter_map(|(at, instruction)| match instruction {
            Instruction::LoopStart { params_index } => {
                let params = program.instruction_data.get_loop_params(*params_index)?;
                let body = usize::from(params.body_start)..=usize::from(params.loop_end);
                body.contains(&pc).then_some((usize::from(params.body_start), at))
            }
            _ => None,
        })
        .max()
        .map(|(_, at)| at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Policies;
    use crate::input::Input;
    use monform_config::source::Sources;

    /// Two nested loops of 100,000: ten billion steps, never done.
    const SLOW: &str = "package monform.slow\n\ndeny contains \"never\" if {\n  some i in numbers.range(1, 100000)\n  some j in numbers.range(1, 100000)\n  i + j < 0\n}\n";
    /// The same on the interpreter: a function keeps a package off the VM.
    const SLOW_INTERPRETED: &str = "package monform.slowfn\n\ndouble(x) := x * 2\n\ndeny contains \"never\" if {\n  some i in numbers.range(1, 100000)\n  some j in numbers.range(1, 100000)\n  double(i) + j < 0\n}\n";
    const GOOD: &str = "package monform.good\n\nwarn contains \"kept\" if { input.n == 1 }\n";

    fn policies(files: &[(&str, &str)], limits: PolicyLimits) -> (Policies, Sources) {
        let (policies, problems, sources) =
            crate::evaluate::tests::load(files, Policies::default().with_limits(limits));
        assert!(problems.is_empty(), "the policies load: {problems:?}");
        (policies, sources)
    }

    fn input() -> Input {
        Input::from_json(serde_json::json!({"n": 1}))
    }

    #[test]
    fn a_looping_policy_is_stopped_by_the_instruction_limit_and_the_others_run() {
        let limits = PolicyLimits {
            max_instructions: 100_000,
            timeout: Duration::from_secs(600),
        };
        let (policies, sources) = policies(&[("policies/slow.rego", SLOW), ("policies/good.rego", GOOD)], limits);
        let started = Instant::now();
        let (findings, errors) = policies.evaluate(&input(), &[]);
        assert!(started.elapsed() < Duration::from_secs(60), "{:?}", started.elapsed());
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert_eq!(findings[0].message, "kept");
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert_eq!(errors[0].limit, Some(LimitHit::Instructions(100_000)));
        let diagnostic = errors[0].to_diagnostic();
        assert_eq!(diagnostic.code, "monform::policy-limit");
        assert_eq!(
            diagnostic.message,
            "policy: policies/slow.rego: monform.slow.deny ran more than 100000 instructions (`[policy] max-instructions`) and was stopped"
        );
        // At the loop it was running (the inner one), in the policy's own file.
        assert_eq!(diagnostic.location(&sources).as_deref(), Some("policies/slow.rego:5:3"));
        let help = diagnostic.help.as_deref().unwrap_or_default();
        assert!(help.contains("`max-instructions` under `[policy]`"), "{help}");
    }

    #[test]
    fn a_looping_policy_is_stopped_by_the_timeout_on_the_vm() {
        let limits = PolicyLimits {
            max_instructions: u64::MAX,
            timeout: Duration::from_millis(300),
        };
        let (policies, sources) = policies(&[("policies/good.rego", GOOD), ("policies/slow.rego", SLOW)], limits);
        let started = Instant::now();
        let (findings, errors) = policies.evaluate(&input(), &[]);
        assert!(started.elapsed() < Duration::from_secs(60), "{:?}", started.elapsed());
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert_eq!(errors[0].limit, Some(LimitHit::Timeout(Duration::from_millis(300))));
        let diagnostic = errors[0].to_diagnostic();
        assert_eq!(
            diagnostic.message,
            "policy: policies/slow.rego: monform.slow.deny ran longer than 300ms (`[policy] timeout`) and was stopped"
        );
        assert_eq!(diagnostic.location(&sources).as_deref(), Some("policies/slow.rego:5:3"));
        assert!(
            diagnostic
                .help
                .as_deref()
                .unwrap_or_default()
                .contains("`timeout` under `[policy]`")
        );
    }

    #[test]
    fn a_looping_policy_is_stopped_by_the_timeout_on_the_interpreter() {
        let limits = PolicyLimits {
            max_instructions: 1_000,
            timeout: Duration::from_millis(300),
        };
        let (policies, sources) = policies(
            &[("policies/slowfn.rego", SLOW_INTERPRETED), ("policies/good.rego", GOOD)],
            limits,
        );
        let started = Instant::now();
        let (findings, errors) = policies.evaluate(&input(), &[]);
        assert!(started.elapsed() < Duration::from_secs(60), "{:?}", started.elapsed());
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert_eq!(
            errors[0].limit,
            Some(LimitHit::Timeout(Duration::from_millis(300))),
            "{errors:?}"
        );
        let diagnostic = errors[0].to_diagnostic();
        assert!(
            diagnostic
                .message
                .starts_with("policy: policies/slowfn.rego: monform.slowfn.deny ran longer than"),
            "{}",
            diagnostic.message
        );
        // The interpreter does not say where it was: the rule.
        assert_eq!(
            diagnostic.location(&sources).as_deref(),
            Some("policies/slowfn.rego:5:1")
        );
    }

    /// `monform policy test` is bounded too.
    #[test]
    fn a_looping_test_rule_is_stopped_by_the_timeout() {
        let limits = PolicyLimits {
            max_instructions: 1_000,
            timeout: Duration::from_millis(300),
        };
        let text = format!("{SLOW}\ntest_slow if {{ count(deny) == 0 }}\n");
        let (policies, _) = policies(&[("policies/slow.rego", &text)], limits);
        let report = policies.test();
        assert_eq!(report.cases.len(), 1);
        assert_eq!(
            report.cases[0].outcome,
            crate::TestOutcome::Error("ran longer than 300ms (`[policy] timeout`) and was stopped".into())
        );
    }

    /// The defaults stop the loop too, within about their timeout.
    #[test]
    fn the_default_limits_stop_a_looping_policy() {
        let (policies, _) = policies(&[("policies/slow.rego", SLOW)], PolicyLimits::default());
        let started = Instant::now();
        let (_, errors) = policies.evaluate(&input(), &[]);
        assert!(started.elapsed() < Duration::from_secs(60), "{:?}", started.elapsed());
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(errors[0].limit.is_some(), "{errors:?}");
        eprintln!("the defaults: {errors:?} after {:?}", started.elapsed());
    }

    #[test]
    fn durations_are_written_as_monform_toml_writes_them() {
        assert_eq!(duration_text(Duration::from_secs(10)), "10s");
        assert_eq!(duration_text(Duration::from_secs(90)), "1m30s");
        assert_eq!(duration_text(Duration::from_secs(3600)), "1h");
        assert_eq!(duration_text(Duration::from_millis(200)), "200ms");
    }
}
