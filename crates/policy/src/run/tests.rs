//! Conflicts on the VM (`vendor/regorus`'s patch part 6): a complete
//! rule's second, different value and a partial object key's are the
//! rule's error, as on the interpreter; the same value twice, `else`
//! chains and defaults are not conflicts.

use super::*;
use crate::limits::Failure;
use monform_config::project::PolicyLimits;
use serde_json::json;

/// `rule` of package `monform.p` in `text`, on the VM (which must take
/// it) and on the interpreter.
fn both(text: &str, rule: &str) -> (Result<regorus::Value, Failure>, Result<regorus::Value, String>) {
    let mut engine = regorus::Engine::new();
    engine.set_rego_v0(false);
    engine
        .add_policy("p.rego".into(), text.into())
        .expect("the policy parses");
    let input = regorus::Value::from(json!({"resources": [
        {"id": "a", "kind": "group", "v": 1},
        {"id": "a", "kind": "group", "v": 2},
        {"id": "b", "kind": "group", "v": 3},
        {"id": "c", "kind": "check", "v": 3},
    ]}));
    engine.set_input(input.clone());
    let path = format!("data.monform.p.{rule}");
    assert!(
        compile(&mut engine, &path).is_some(),
        "{path} does not compile to the VM"
    );
    let deadline = Deadline::start(PolicyLimits::default());
    let vm = run_rule(&mut engine, &input, &path, &Runner::Vm, &deadline);
    // regorus's other mode (a host may suspend and resume it): the same.
    let program = compile(&mut engine, &path).expect("compiled above");
    let mut suspendable = regorus::rvm::RegoVM::new();
    suspendable.load_program(program);
    suspendable.set_execution_mode(regorus::rvm::vm::ExecutionMode::Suspendable);
    suspendable.set_data(regorus::Value::new_object()).expect("data");
    suspendable.set_input(input);
    match (suspendable.execute(), &vm) {
        (Ok(a), Ok(b)) => assert_eq!(&a, b, "{path}"),
        (Err(_), Err(_)) => {}
        (a, b) => panic!("{path}: suspendable {a:?}, run to completion {b:?}"),
    }
    let interpreted = engine.eval_rule(path).map_err(|e| e.to_string());
    (vm, interpreted)
}

/// The VM's error for `rule`, checked to be one on the interpreter too.
fn conflict(text: &str, rule: &str) -> String {
    match both(text, rule) {
        (Err(Failure::Other(message)), Err(_)) => message,
        other => panic!("{rule} of\n{text}\nis not a conflict on both: {other:?}"),
    }
}

/// The value of `rule`, the same on the VM and the interpreter.
fn value(text: &str, rule: &str) -> regorus::Value {
    match both(text, rule) {
        (Ok(vm), Ok(interpreted)) if vm == interpreted => vm,
        other => panic!("{rule} of\n{text}\ndiffers: {other:?}"),
    }
}

#[test]
fn a_partial_objects_key_with_two_values_is_a_conflict() {
    let text = "package monform.p\n\ngroups[r.id] := r.v if {\n\tsome r in input.resources\n\tr.kind == \"group\"\n}\n";
    assert_eq!(
        conflict(text, "groups"),
        "monform.p.groups[\"a\"]: rules must not produce multiple outputs"
    );
    // Read by the rule evaluated, in its body or under `not`: the rule's
    // error (never a body that failed, so never an undefined rule).
    let read = format!("{text}\ndeny contains k if {{\n\tsome k, _ in groups\n}}\n");
    assert_eq!(
        conflict(&read, "deny"),
        "monform.p.groups[\"a\"]: rules must not produce multiple outputs"
    );
    let negated = format!("{text}\ndeny contains \"d\" if {{\n\tnot groups.z\n}}\n");
    conflict(&negated, "deny");
}

#[test]
fn a_partial_objects_key_with_the_same_value_twice_is_one_entry() {
    let text = "package monform.p\n\nkinds[r.id] := r.kind if {\n\tsome r in input.resources\n}\n";
    assert_eq!(
        value(text, "kinds"),
        regorus::Value::from(json!({"a": "group", "b": "group", "c": "check"}))
    );
}

#[test]
fn a_complete_rule_with_two_values_is_a_conflict() {
    // In one body (a loop), in two definitions, read by another rule.
    let looped = "package monform.p\n\nx := r.v if {\n\tsome r in input.resources\n}\n";
    assert_eq!(
        conflict(looped, "x"),
        "monform.p.x: rules must not produce multiple outputs"
    );
    let defined = "package monform.p\n\nx := input.resources[0].v\n\nx := input.resources[1].v\n";
    assert_eq!(
        conflict(defined, "x"),
        "monform.p.x: rules must not produce multiple outputs"
    );
    let read = format!("{defined}\ndeny contains \"d\" if {{\n\tx == 1\n}}\n");
    assert_eq!(
        conflict(&read, "deny"),
        "monform.p.x: rules must not produce multiple outputs"
    );
    // A function, for the same arguments.
    let function = "package monform.p\n\nf(xs) := y if {\n\tsome y in xs\n}\n\nz := f([1, 2])\n";
    assert_eq!(
        conflict(function, "z"),
        "monform.p.f: functions must not produce multiple outputs for same inputs"
    );
}

#[test]
fn the_same_value_else_chains_and_defaults_are_not_conflicts() {
    let same = "package monform.p\n\nx := true if {\n\tsome r in input.resources\n\tr.v == 3\n}\n\nx := true if { input.resources[0] }\n";
    assert_eq!(value(same, "x"), regorus::Value::from(true));
    // A first body whose loop finds nothing gives no value: the `else`
    // after it runs (regorus 0.14.1's VM left the rule undefined).
    let after_loop =
        "package monform.p\n\nx := \"first\" if {\n\tsome r in input.resources\n\tr.v > 100\n} else := \"last\"\n";
    assert_eq!(value(after_loop, "x"), regorus::Value::from("last"));
    let function = "package monform.p\n\nf(a) := \"first\" if {\n\tsome r in input.resources\n\tr.v > a\n} else := \"last\"\n\nx := f(100)\n";
    assert_eq!(value(function, "x"), regorus::Value::from("last"));
    let chained = "package monform.p\n\nx := \"first\" if {\n\tsome r in input.resources\n\tr.v > 100\n} else := r.id if {\n\tsome r in input.resources\n\tr.kind == \"check\"\n} else := \"last\"\n";
    assert_eq!(value(chained, "x"), regorus::Value::from("c"));
    let defaulted = "package monform.p\n\ndefault x := 1\n\nx := 2 if { input.resources }\n";
    assert_eq!(value(defaulted, "x"), regorus::Value::from(2));
    // One definition without a value, the other with one.
    let partly = "package monform.p\n\nx := 1 if { false }\n\nx := 2 if { true }\n";
    assert_eq!(value(partly, "x"), regorus::Value::from(2));
}
