//! Where a rule runs: regorus's compiled virtual machine when the rule
//! compiles to it, else its interpreter; each bounded by the rule's
//! [`Deadline`] (`[policy] max-instructions` and `timeout`).

use crate::Level;
use crate::limits::{Deadline, Failure};

/// Where a rule runs: on the VM, unless its package has a function of
/// values (`f(x) := v`) or its `deny` is itself complete, which run on
/// the interpreter. A conflict (two different values of a complete rule,
/// or of one key of a partial object) is an error on both: the VM reports
/// it since `vendor/regorus`'s patch part 6, where regorus 0.14.1 took a
/// value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Runner {
    Vm,
    Interpreter,
}

/// Where `package`'s `level` rule runs, as [`Runner`] says.
pub(crate) fn runner(
    modules: &[regorus::unstable::Ref<regorus::unstable::Module>],
    package: &str,
    level: Level,
) -> Runner {
    use regorus::unstable::{Rule, RuleHead};
    for module in modules {
        let Ok(path) = regorus::utils::get_path_string(&module.package.refr, Some("data")) else {
            return Runner::Interpreter;
        };
        if path.strip_prefix("data.") != Some(package) {
            continue;
        }
        for rule in &module.policy {
            let Rule::Spec { head, .. } = &**rule else { continue };
            match head {
                RuleHead::Func { assign: Some(_), .. } => return Runner::Interpreter,
                // `deny := ...`, `deny[k] := ...`
                RuleHead::Compr {
                    refr, assign: Some(_), ..
                } => {
                    let Ok(name) = regorus::utils::get_path_string(refr, None) else {
                        return Runner::Interpreter;
                    };
                    if name.split('.').next() == Some(level.rule()) {
                        return Runner::Interpreter;
                    }
                }
                _ => {}
            }
        }
    }
    Runner::Vm
}

/// A rule's value, on regorus's compiled virtual machine (RVM) when the
/// rule compiles to it, else on its tree-walking interpreter. Over 100,000
/// resources the interpreter spends most of its time around each step
/// (function paths built as strings, scopes, the rule's bookkeeping); the
/// VM runs the same rule as instructions. Both give the same value: the
/// VM is checked against the interpreter by OPA's conformance suite, and
/// here by a test over the example policies and by `run/tests.rs`
/// (conflicts).
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
    if *runner == Runner::Interpreter {
        return interpret(engine, path);
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

#[cfg(test)]
mod tests;
