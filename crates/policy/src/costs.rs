//! What each rule of the policies costs over an input: the instructions
//! it runs on regorus's VM and its wall time, to set `[policy]
//! max-instructions` and `timeout` by (`examples/policy_phase --costs`).

use std::time::{Duration, Instant};

use monform_config::project::PolicyLimits;

use crate::Policies;
use crate::input::Input;
use crate::limits::{Deadline, Failure, LimitHit};
use crate::run::{Runner, run_rule, runner};

/// One rule's cost.
#[derive(Debug, Clone, PartialEq)]
pub struct RuleCost {
    /// `monform.owner_tag.deny`.
    pub rule: String,
    /// Whether it runs on the VM (else on the interpreter, which counts
    /// no instructions).
    pub on_vm: bool,
    /// The fewest instructions it runs in (within 1%), on the VM.
    pub instructions: Option<u64>,
    /// One evaluation's wall time, alone on one core.
    pub took: Duration,
}

impl Policies {
    /// Every `deny`, `violation` and `warn` rule's cost over `input`, one
    /// after the other. The instruction count is found by running the rule
    /// under lower and lower limits (regorus does not say how many it ran),
    /// so this takes some twenty evaluations per rule.
    pub fn costs(&self, input: &Input) -> Vec<RuleCost> {
        let mut engine = self.engine.clone();
        engine.set_input(input.0.clone());
        let mut costs: Vec<RuleCost> = Vec::new();
        for module in &self.modules {
            for (level, _) in &module.rules {
                let rule = format!("{}.{}", module.package, level.rule());
                if costs.iter().any(|c| c.rule == rule) {
                    continue;
                }
                let path = format!("data.{rule}");
                let runner = runner(engine.get_modules(), &module.package, *level);
                let unbounded = PolicyLimits {
                    max_instructions: u64::MAX,
                    timeout: Duration::from_secs(3600),
                };
                let started = Instant::now();
                let ran = run_rule(&mut engine, &input.0, &path, &runner, &Deadline::start(unbounded)).is_ok();
                let took = started.elapsed();
                let on_vm = runner == Runner::Vm;
                let mut stopped_at = |max_instructions: u64| {
                    let limits = PolicyLimits {
                        max_instructions,
                        ..unbounded
                    };
                    matches!(
                        run_rule(&mut engine, &input.0, &path, &runner, &Deadline::start(limits)),
                        Err(Failure::Limit {
                            hit: LimitHit::Instructions(_),
                            ..
                        })
                    )
                };
                let instructions = (on_vm && ran).then(|| {
                    let mut high = 1u64 << 10;
                    while stopped_at(high) {
                        high *= 2;
                    }
                    let mut low = high / 2;
                    while high - low > high / 100 {
                        let middle = low + (high - low) / 2;
                        if stopped_at(middle) {
                            low = middle;
                        } else {
                            high = middle;
                        }
                    }
                    high
                });
                costs.push(RuleCost {
                    rule,
                    on_vm,
                    instructions,
                    took,
                });
            }
        }
        costs
    }
}
