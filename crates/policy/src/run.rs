//! Where a rule runs: regorus's compiled virtual machine when the rule
//! compiles to it, else its interpreter; each bounded by the rule's
//! [`Deadline`] (`[policy] max-instructions` and `timeout`).

use crate::Level;
use crate::limits::{Deadline, Failure};

/// Where a rule runs. The VM takes the first value of a complete rule (or
/// of a partial object's key) where the interpreter reports a conflict,
/// so in a package with such rules those are evaluated on the interpreter
/// first (`probes`: a conflict is the rule's error, as the interpreter
/// gives it); a package with a function of values (`f(x) := v`), or whose
/// `deny` is itself complete, runs on the interpreter.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Runner {
    Vm { probes: Vec<String> },
    Interpreter,
}

pub(crate) fn runner(
    modules: &[regorus::unstable::Ref<regorus::unstable::Module>],
    package: &str,
    level: Level,
) -> Runner {
    use regorus::unstable::{Rule, RuleHead};
    let mut probes = Vec::new();
    for module in modules {
        let Ok(path) = regorus::utils::get_path_string(&module.package.refr, Some("data")) else {
            return Runner::Interpreter;
        };
        if path.strip_prefix("data.") != Some(package) {
            continue;
        }
        for rule in &module.policy {
            // A default is one value.
            let Rule::Spec { head, .. } = &**rule else { continue };
            match head {
                // Sets union, and a rule without a value is `true`.
                RuleHead::Set { .. } | RuleHead::Func { assign: None, .. } | RuleHead::Compr { assign: None, .. } => {}
                RuleHead::Func { .. } => return Runner::Interpreter,
                RuleHead::Compr { refr, .. } => {
                    let Ok(name) = regorus::utils::get_path_string(refr, None) else {
                        return Runner::Interpreter;
                    };
                    if name.split('.').next() == Some(level.rule()) {
                        return Runner::Interpreter;
                    }
                    let probe = format!("{path}.{name}");
                    if !probes.contains(&probe) {
                        probes.push(probe);
                    }
                }
            }
        }
    }
    Runner::Vm { probes }
}

/// A rule's value, on regorus's compiled virtual machine (RVM) when the
/// rule compiles to it, else on its tree-walking interpreter. Over 100,000
/// resources the interpreter spends most of its time around each step
/// (function paths built as strings, scopes, the rule's bookkeeping); the
/// VM runs the same rule as instructions. Both give the same value: the
/// VM is checked against the interpreter by OPA's conformance suite, and
/// here by a test over the example policies; conflicts, which the VM does
/// not report, as [`Runner`] says.
pub(crate) fn run_rule(
    engine: &mut regorus::Engine,
    input: &regorus::Value,
    path: &str,
    runner: &Runner,
    deadline: &Deadline,
) -> Result<regorus::Value, Failure> {
    // The interpreter counts no instructions: only the timeout bounds it.
    let interpret = |engine: &mut regorus::Engine, path: &str| {
        engine.set_execution_timer_config(deadline.timer()?);
        engine
            .eval_rule(path.to_owned())
            .map_err(|e| deadline.interpreter_error(e.as_ref()))
    };
    let Runner::Vm { probes } = runner else {
        return interpret(engine, path);
    };
    for probe in probes {
        interpret(engine, probe)?;
    }
    match compile(engine, path) {
        Some(program) => {
            let mut vm = regorus::rvm::RegoVM::new();
            vm.load_program(program);
            // Not regorus's default (25,000): a loop over 100,000
            // resources runs millions.
            vm.set_max_instructions(deadline.max_instructions());
            vm.set_execution_timer_config(Some(deadline.timer()?));
            vm.set_data(regorus::Value::new_object())
                .map_err(|e| Failure::Other(e.to_string()))?;
            vm.set_input(input.clone());
            vm.execute().map_err(|e| deadline.vm_error(&vm, e))
        }
        None => interpret(engine, path),
    }
}

/// The rule as a VM program; `None` when the VM's compiler does not take
/// it (e.g. `with`), which the interpreter then evaluates.
pub(crate) fn compile(
    engine: &mut regorus::Engine,
    path: &str,
) -> Option<std::sync::Arc<regorus::rvm::program::Program>> {
    let entry: regorus::Rc<str> = path.into();
    let compiled = engine.compile_with_entrypoint(&entry).ok()?;
    regorus::languages::rego::compiler::Compiler::compile_from_policy(&compiled, &[path]).ok()
}
