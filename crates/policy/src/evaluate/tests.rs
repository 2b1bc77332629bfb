//! The evaluation's tests: findings, errors at their lines, the VM
//! against the interpreter.

use super::*;
use crate::run::compile;
use serde_json::json;

fn policies(files: &[(&str, &str)]) -> (Policies, Vec<Diagnostic>, Sources) {
    load(files, Policies::default())
}

/// `files` (name, text) added to `policies`, each its own source file;
/// the problems of those that do not load.
pub(crate) fn load(files: &[(&str, &str)], mut policies: Policies) -> (Policies, Vec<Diagnostic>, Sources) {
    let mut sources = Sources::default();
    let mut problems = Vec::new();
    for (name, text) in files {
        let file = sources.add(SourceFile {
            name: (*name).into(),
            path: (*name).into(),
            text: (*text).into(),
            format: Format::Rego,
        });
        if let Err(problem) = policies.add(file, name, text) {
            problems.push(*problem);
        }
    }
    (policies, problems, sources)
}

#[test]
fn strings_and_objects_are_findings_and_overrides_unblock() {
    let (policies, problems, _) = policies(&[(
        "p.rego",
        "package monform.freq\n\ndeny contains {\"msg\": \"too slow\", \"address\": r.address, \"field\": \"frequency\"} if {\n  some r in input.resources\n  r.fields.frequency > 10\n}\n\nwarn contains \"be careful\" if { input.environment == \"prod\" }\n",
    )]);
    assert!(problems.is_empty(), "{problems:?}");
    let input = json!({"environment": "prod", "resources": [
        {"address": "checks.a", "fields": {"frequency": 60}},
        {"address": "checks.b", "fields": {"frequency": 1}}]});
    let (findings, errors) = policies.evaluate(&Input::from_json(input.clone()), &[]);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(findings.len(), 2, "{findings:?}");
    let deny = findings.iter().find(|f| f.level == Level::Deny).unwrap();
    assert_eq!(
        (deny.rule, deny.address.as_deref(), deny.field.as_deref()),
        ("monform.freq.deny", Some("checks.a"), Some("frequency"))
    );
    assert!(deny.blocks());
    let (findings, _) = policies.evaluate(&Input::from_json(input), &["monform.freq".into()]);
    assert!(findings.iter().all(|f| !f.blocks()), "{findings:?}");
}

/// Results read straight from the interpreter's values give what
/// their JSON gives, and the ones that are not flat strings go the
/// JSON way.
#[test]
fn results_read_directly_are_their_json_parts() {
    let values = [
        json!("plain"),
        json!({"msg": "m", "address": "checks.a", "field": "tags"}),
        json!({"msg": "m", "address": "checks.a", "extra": null, "ok": true}),
        json!({"msg": "m", "address": 7}),
        json!({"msg": "m", "field": ["nested"]}),
        json!({"address": "checks.a"}),
        json!({"msg": 1}),
        json!(42),
        json!(["a", "b"]),
    ];
    for value in values {
        let regorus = regorus::Value::from(value.clone());
        assert_eq!(parts(&regorus), Some(result_parts(&value)), "{value}");
    }
    let set = regorus::Value::from(
        [regorus::Value::from("b"), regorus::Value::from("a")]
            .into_iter()
            .collect::<std::collections::BTreeSet<_>>(),
    );
    // Taken apart when it is the only reference, read when it is shared:
    // the same results in the same order.
    let shared = set.clone();
    let (count, found) = results(set);
    let read: Vec<String> = found.map(|(m, _, _)| m).collect();
    assert_eq!((count, read), (2, vec!["a".to_owned(), "b".to_owned()]));
    let (count, found) = results(shared.clone());
    let read: Vec<String> = found.map(|(m, _, _)| m).collect();
    assert_eq!((count, read), (2, vec!["a".to_owned(), "b".to_owned()]));
    drop(shared);
    let (count, mut found) = results(regorus::Value::Undefined);
    assert!(count == 0 && found.next().is_none());
}

#[test]
fn a_broken_policy_is_a_diagnostic_at_its_line() {
    let (policies, problems, sources) = policies(&[
        (
            "good.rego",
            "package monform.good\n\ndeny contains \"x\" if { false }\n",
        ),
        (
            "bad.rego",
            "package monform.bad\n\ndeny contains msg if {\n  msg := \n}\n",
        ),
        ("other.rego", "package team.rules\n\ndeny contains \"x\" if { true }\n"),
    ]);
    assert_eq!(policies.len(), 1);
    assert_eq!(problems.len(), 2, "{problems:?}");
    let at = problems[0].location(&sources).unwrap();
    assert!(at.starts_with("bad.rego:5:") || at.starts_with("bad.rego:4:"), "{at}");
    assert_eq!(problems[1].location(&sources).unwrap(), "other.rego:1:1");
}

#[test]
fn a_rule_that_fails_at_run_time_is_an_error_at_its_rule() {
    let (policies, problems, sources) = policies(&[(
        "conflict.rego",
        "package monform.c\n\ndeny := \"a\" if { true }\ndeny := \"b\" if { true }\n",
    )]);
    assert!(problems.is_empty(), "{problems:?}");
    let (_, errors) = policies.evaluate(&Input::from_json(json!({})), &[]);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(
        errors[0].to_diagnostic().location(&sources).unwrap(),
        "conflict.rego:3:1"
    );
}

/// A helper rule's conflict is the rule's error on the VM too (which
/// regorus 0.14.1's VM did not report: `vendor/regorus` patch part 6),
/// at the rule, naming the helper; a helper in another package as well.
#[test]
fn a_conflict_in_a_helper_rule_is_an_error_on_the_vm_too() {
    let (policies, problems, sources) = policies(&[
        (
            "h.rego",
            "package monform.h\n\nx := 1 if { true }\n\nx := 2 if { true }\n\ndeny contains \"d\" if { x == 1 }\n",
        ),
        (
            "lib.rego",
            "package monform.lib\n\ngroups[r.id] := r.fields if {\n\tsome r in input.resources\n}\n",
        ),
        (
            "uses.rego",
            "package monform.uses\n\nwarn contains id if {\n\tsome id, _ in data.monform.lib.groups\n}\n",
        ),
    ]);
    assert!(problems.is_empty(), "{problems:?}");
    let input = json!({"resources": [{"id": "g", "fields": {"a": 1}}, {"id": "g", "fields": {"a": 2}}]});
    let (findings, errors) = policies.evaluate(&Input::from_json(input), &[]);
    assert_eq!((findings.len(), errors.len()), (0, 2), "{findings:?} {errors:?}");
    let said: Vec<(String, String)> = errors
        .iter()
        .map(|e| (e.to_diagnostic().location(&sources).unwrap(), e.message.clone()))
        .collect();
    assert_eq!(
        said,
        [
            (
                "h.rego:7:1".to_owned(),
                "monform.h.deny: monform.h.x: rules must not produce multiple outputs".to_owned()
            ),
            (
                "uses.rego:3:1".to_owned(),
                "monform.uses.warn: monform.lib.groups[\"g\"]: rules must not produce multiple outputs".to_owned()
            ),
        ]
    );
}

/// The VM gives what the interpreter gives, for each example policy
/// over resources that break and keep each rule, and a plan.
#[test]
fn the_vm_and_the_interpreter_agree_on_the_example_policies() {
    let examples = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/policies");
    let mut files: Vec<(String, String)> = std::fs::read_dir(&examples)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| !p.to_string_lossy().ends_with("_test.rego"))
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read_to_string(&p).unwrap(),
            )
        })
        .collect();
    files.sort();
    assert!(files.len() >= 7, "{files:?}");
    let named: Vec<(&str, &str)> = files.iter().map(|(n, t)| (n.as_str(), t.as_str())).collect();
    let (policies, problems, _) = policies(&named);
    assert!(problems.is_empty(), "{problems:?}");
    let check = |id: &str, fields: Value| json!({"address": format!("checks.{id}"), "kind": "checks", "id": id, "file": "m.yaml", "line": 2, "fields": fields, "ownFields": ["locations"]});
    let input = json!({
        "environment": "production",
        "project": {"name": "p", "environments": ["production"]},
        "resources": [
            check("a", json!({"checkType": "BROWSER", "name": "A", "frequency": 10, "tags": ["critical"], "locations": ["eu-west-1"], "group": "g"})),
            check("b", json!({"checkType": "API", "name": "B", "frequency": 1, "tags": ["owner:web", "critical"], "locations": ["eu-west-1", "us-east-1"], "alertChannels": ["c"], "maxResponseTime": 20000})),
            check("c", json!({"checkType": "BROWSER", "name": "C", "maxResponseTime": 5000, "muted": true, "privateLocations": ["p"], "locations": []})),
            {"address": "groups.g", "kind": "groups", "id": "g", "file": "m.yaml", "line": 9, "fields": {"locations": ["eu-west-1"], "alertChannels": ["c"]}, "ownFields": []},
        ],
        "plan": {"changes": [
            {"address": "checks.gone", "action": "delete", "tags": ["slo"]},
            {"address": "checks.kept", "action": "update", "tags": ["slo"]},
        ]},
    });
    let input = Input::from_json(input);
    let mut engine = policies.engine.clone();
    engine.set_input(input.0.clone());
    let mut compared = 0;
    for module in &policies.modules {
        for (level, _) in &module.rules {
            let path = format!("data.{}.{}", module.package, level.rule());
            assert!(
                compile(&mut engine, &path).is_some(),
                "{path} does not compile to the VM"
            );
            let runner = runner(engine.get_modules(), &module.package, *level);
            assert!(runner == Runner::Vm, "{path}: {runner:?}");
            let deadline = Deadline::start(PolicyLimits::default());
            let vm = run_rule(&mut engine, &input.0, &path, &runner, &deadline).unwrap();
            let interpreted = engine.eval_rule(path.clone()).unwrap();
            assert_eq!(vm, interpreted, "{path}");
            compared += 1;
        }
    }
    assert_eq!(compared, files.len());
    let (findings, errors) = policies.evaluate(&input, &[]);
    assert!(errors.is_empty(), "{errors:?}");
    assert!(findings.len() >= 8, "{findings:?}");
}

/// Object literals on the VM (vendor/regorus's patch keeps them compact)
/// equal the interpreter's: literal keys, keys computed beside them, the
/// same key twice, nested and empty literals, literals compared, read
/// with `object.get`, merged with `object.union`, and as a rule's results.
#[test]
fn object_literals_on_the_vm_equal_the_interpreters() {
    let text = r#"package monform.literals

pairs contains {"k": r.id, "n": i, "nested": {"a": [i], "b": {}}, "empty": {}} if {
	some i, r in input.resources
}

computed contains {"msg": "m", r.id: r.kind, "z": 1} if {
	some r in input.resources
}

twice := {"a": 1, "a": 1}

compared if {
	{"b": 2, "a": 1} == {"a": 1, "b": 2}
}

merged := object.union({"a": 1, "c": 3}, {"b": 2, "c": 4})

read := object.get({"x": input.environment}, "x", "none")

deny contains {"msg": sprintf("%s has no owner", [r.address]), "address": r.address, "field": "tags"} if {
	some r in input.resources
}
"#;
    let (policies, problems, _) = policies(&[("literals.rego", text)]);
    assert!(problems.is_empty(), "{problems:?}");
    let input = Input::from_json(json!({
        "environment": "production",
        "resources": [
            {"address": "checks.a", "kind": "checks", "id": "a"},
            {"address": "groups.g", "kind": "groups", "id": "g"},
        ],
    }));
    let mut engine = policies.engine.clone();
    engine.set_input(input.0.clone());
    for rule in ["pairs", "computed", "twice", "compared", "merged", "read", "deny"] {
        let path = format!("data.monform.literals.{rule}");
        assert!(
            compile(&mut engine, &path).is_some(),
            "{path} does not compile to the VM"
        );
        let runner = Runner::Vm;
        let deadline = Deadline::start(PolicyLimits::default());
        let vm = run_rule(&mut engine, &input.0, &path, &runner, &deadline).unwrap();
        let interpreted = engine.eval_rule(path.clone()).unwrap();
        assert_eq!(vm, interpreted, "{path}");
        assert_ne!(vm, regorus::Value::Undefined, "{path}");
    }
    let (findings, errors) = policies.evaluate(&input, &[]);
    assert!(errors.is_empty(), "{errors:?}");
    let found: Vec<_> = findings
        .iter()
        .map(|f| (f.message.as_str(), f.address.as_deref(), f.field.as_deref()))
        .collect();
    assert_eq!(
        found,
        [
            ("checks.a has no owner", Some("checks.a"), Some("tags")),
            ("groups.g has no owner", Some("groups.g"), Some("tags"))
        ]
    );
}

/// A rule's results all live at once before they become findings: on the
/// VM each `{msg, address, field}` it makes stays in compact storage
/// (vendor/regorus's patch): 313 bytes a result here, where the B-tree
/// regorus 0.14.1 built took about 400 more (a 544-byte leaf for a 3-key
/// object instead of a 144-byte slice; issue 48 item 3: 100,000 results in
/// a plan's peak). Counted on this thread, which runs the rule.
#[test]
fn a_rules_result_objects_stay_compact_on_the_vm() {
    let text = "package monform.owner\n\ndeny contains {\"msg\": sprintf(\"%s has no owner: add a tag owner:<team>\", [r.address]), \"address\": r.address, \"field\": \"tags\"} if {\n\tsome r in input.resources\n}\n";
    let (policies, problems, _) = policies(&[("owner.rego", text)]);
    assert!(problems.is_empty(), "{problems:?}");
    const RESULTS: usize = 20_000;
    let resources: Vec<Value> = (0..RESULTS)
        .map(|i| json!({"address": format!("checks.check-{i:05}"), "kind": "checks", "id": format!("check-{i:05}")}))
        .collect();
    let input = Input::from_json(json!({"resources": resources}));
    let mut engine = policies.engine.clone();
    engine.set_input(input.0.clone());
    let path = "data.monform.owner.deny";
    let runner = Runner::Vm;
    let deadline = Deadline::start(PolicyLimits::default());
    let before = counting::live_on_this_thread();
    let results = run_rule(&mut engine, &input.0, path, &runner, &deadline).unwrap();
    let held = counting::live_on_this_thread() - before;
    let regorus::Value::Set(set) = &results else {
        panic!("{results:?}")
    };
    assert_eq!(set.len(), RESULTS);
    let per_result = held / RESULTS as isize;
    assert!(per_result < 500, "{per_result} bytes a result");
}

/// The bytes this thread allocated and has not freed (the system's
/// allocator underneath), for [`a_rules_result_objects_stay_compact_on_the_vm`].
mod counting {
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::cell::Cell;

    thread_local! {
        static LIVE: Cell<isize> = const { Cell::new(0) };
    }

    fn add(bytes: isize) {
        // Not during the thread's teardown, when its counter is gone.
        let _ = LIVE.try_with(|live| live.set(live.get() + bytes));
    }

    pub(super) fn live_on_this_thread() -> isize {
        LIVE.with(Cell::get)
    }

    struct Counting;

    // SAFETY: every call is System's, with the caller's arguments.
    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            add(layout.size() as isize);
            unsafe { System.alloc(layout) }
        }
        unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
            add(layout.size() as isize);
            unsafe { System.alloc_zeroed(layout) }
        }
        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            add(-(layout.size() as isize));
            unsafe { System.dealloc(ptr, layout) }
        }
        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            add(new_size as isize - layout.size() as isize);
            unsafe { System.realloc(ptr, layout, new_size) }
        }
    }

    #[global_allocator]
    static COUNTING: Counting = Counting;
}

/// vendor/regorus's patch looks keys up and compares objects with shortcuts
/// (a text's first byte, a shared text by its address) and makes an
/// object's compact storage from its entries at once: every order, lookup
/// and object is as regorus 0.14.1's (texts in byte order, objects as
/// their sorted entries, the last of equal keys kept), here against Rust's
/// own order of the same texts.
#[test]
fn objects_look_up_and_compare_as_their_sorted_entries() {
    use regorus::Value as R;
    let texts = [
        "",
        "a",
        "ab",
        "abc",
        "b",
        "ba",
        "checks.a-1",
        "checks.a-10",
        "checks.b",
        "é",
        "\u{7f}",
    ];
    let shared: Vec<R> = texts.iter().map(|t| R::from(*t)).collect();
    // Objects of one or two entries over every pair of texts, their keys
    // shared (as a literal's are) or each its own copy.
    let mut objects: Vec<(Vec<(String, String)>, R)> = Vec::new();
    for (i, a) in texts.iter().enumerate() {
        for (j, b) in texts.iter().enumerate() {
            let mut entries = vec![(a.to_string(), b.to_string())];
            if a != b {
                entries.push((b.to_string(), a.to_string()));
            }
            entries.sort();
            let values: Vec<(R, R)> = match (i + j) % 2 {
                0 => vec![
                    (shared[i].clone(), shared[j].clone()),
                    (shared[j].clone(), shared[i].clone()),
                ],
                _ => vec![(R::from(*a), R::from(*b)), (R::from(*b), R::from(*a))],
            };
            let values = if a == b { values[..1].to_vec() } else { values };
            let object = R::from_entries(values);
            let map: std::collections::BTreeMap<R, R> = entries
                .iter()
                .map(|(k, v)| (R::from(k.as_str()), R::from(v.as_str())))
                .collect();
            assert_eq!(object, R::from(map), "{entries:?}");
            for text in texts {
                let expected = entries
                    .iter()
                    .find(|(k, _)| k == text)
                    .map(|(_, v)| R::from(v.as_str()));
                assert_eq!(
                    object.as_object().unwrap().get(&R::from(text)).cloned(),
                    expected,
                    "{text:?} in {entries:?}"
                );
            }
            objects.push((entries, object));
        }
    }
    for (x, a) in &objects {
        for (y, b) in &objects {
            assert_eq!(a.cmp(b), x.cmp(y), "{x:?} against {y:?}");
        }
    }
    // Of equal keys the last is kept, as a B-tree collected from them keeps it.
    let twice = R::from_entries(vec![
        (R::from("k"), R::from(1u64)),
        (R::from("j"), R::Null),
        (R::from("k"), R::from(2u64)),
    ]);
    assert_eq!(twice, Input::from_json(json!({"j": null, "k": 2})).0);
    assert_eq!(R::from_entries(Vec::new()), R::new_object());
}

/// vendor/regorus's `Set` keeps a sorted vector while its elements arrive in
/// order (a rule's results over sorted resources) and a B-tree after the
/// first that does not: either way it holds, finds, walks, combines and
/// compares as the `BTreeSet` of the same elements.
#[test]
fn sets_in_order_or_not_behave_as_their_btree() {
    use regorus::Value as R;
    use std::collections::BTreeSet;
    let element = |n: u64| match n % 3 {
        0 => R::from(n),
        1 => R::from(format!("checks.a-{n}")),
        _ => R::from_entries(vec![(R::from("address"), R::from(format!("checks.a-{n}")))]),
    };
    // In order, in order with repeats, out of order after a run, reversed.
    let orders: Vec<Vec<u64>> = vec![
        (0..40).collect(),
        (0..40).flat_map(|n| [n, n]).collect(),
        (0..20).chain((10..40).rev()).collect(),
        (0..40).rev().collect(),
        Vec::new(),
    ];
    let mut built: Vec<(BTreeSet<R>, R)> = Vec::new();
    for order in &orders {
        let expected: BTreeSet<R> = order.iter().map(|&n| element(n)).collect();
        let mut set = R::new_set();
        let mut inserted = BTreeSet::new();
        for &n in order {
            let fresh = inserted.insert(element(n));
            assert_eq!(set.as_set_mut().unwrap().insert(element(n)), fresh, "{n} of {order:?}");
        }
        let collected: regorus::value::Set = order.iter().map(|&n| element(n)).collect();
        for set in [&set, &R::from(collected)] {
            let items = set.as_set().unwrap();
            assert_eq!(items.len(), expected.len());
            assert!(items.iter().eq(expected.iter()), "{order:?}");
            assert!(items.iter().rev().eq(expected.iter().rev()), "{order:?}");
            assert_eq!(set, &R::from(expected.clone()));
            for n in 0..45 {
                assert_eq!(items.contains(&element(n)), expected.contains(&element(n)), "{n}");
            }
            let mut cursor = items.cursor();
            let mut walked = Vec::new();
            while let Some(item) = items.next(&mut cursor) {
                walked.push(item.clone());
            }
            assert!(walked.iter().eq(expected.iter()));
        }
        // A removal and a retain keep the rest.
        let mut less = set.clone();
        let mut fewer = expected.clone();
        less.as_set_mut().unwrap().remove(&element(7));
        fewer.remove(&element(7));
        less.as_set_mut().unwrap().retain(|v| !matches!(v, R::Number(_)));
        fewer.retain(|v| !matches!(v, R::Number(_)));
        assert_eq!(less, R::from(fewer));
        built.push((expected, set));
    }
    for (x, a) in &built {
        for (y, b) in &built {
            let (sa, sb) = (a.as_set().unwrap(), b.as_set().unwrap());
            assert_eq!(a.cmp(b), R::from(x.clone()).cmp(&R::from(y.clone())));
            assert_eq!(
                R::from(sa.union(sb)),
                R::from(x.union(y).cloned().collect::<BTreeSet<R>>())
            );
            assert_eq!(
                R::from(sa.intersection(sb)),
                R::from(x.intersection(y).cloned().collect::<BTreeSet<R>>())
            );
            assert_eq!(
                R::from(sa.difference(sb)),
                R::from(x.difference(y).cloned().collect::<BTreeSet<R>>())
            );
            assert_eq!(sa.is_subset(sb), x.is_subset(y));
            let mut joined = sa.clone();
            joined.append(&mut sb.clone());
            assert_eq!(R::from(joined), R::from(x.union(y).cloned().collect::<BTreeSet<R>>()));
        }
    }
}

/// vendor/regorus's `Object::get_hinted` (the VM's `IndexLiteral`) finds
/// what `get` finds over objects whose keys are shared texts, their own
/// copies, in other places or absent, with one hint carried across them all.
#[test]
fn hinted_lookups_find_what_get_finds() {
    use regorus::Value as R;
    let shared: Vec<R> = ["address", "fields", "id", "kind", "zeta"]
        .iter()
        .map(|t| R::from(*t))
        .collect();
    let own = |i: usize| R::from(["address", "fields", "id", "kind", "zeta"][i]);
    let objects: Vec<R> = vec![
        R::from_entries((0..4).map(|i| (shared[i].clone(), R::from(i as u64))).collect()),
        R::from_entries((0..4).map(|i| (shared[i].clone(), R::from(10 + i as u64))).collect()),
        // The same texts elsewhere: `kind` is the last of three, not the fourth.
        R::from_entries(
            [1, 2, 3]
                .iter()
                .map(|&i| (shared[i].clone(), R::from(20 + i as u64)))
                .collect(),
        ),
        // Equal texts, not shared.
        R::from_entries((0..5).map(|i| (own(i), R::from(30 + i as u64))).collect()),
        R::from_entries(vec![(shared[0].clone(), R::Null)]),
        R::new_object(),
        Input::from_json(json!({"kind": "checks", "id": 1})).0,
        // A B-tree's storage.
        R::from(std::collections::BTreeMap::from([(shared[3].clone(), R::Bool(true))])),
    ];
    for key in shared
        .iter()
        .chain([&R::from("kind"), &R::from("absent"), &R::from(3u64)])
    {
        let mut hint = regorus::value::KeyHint::default();
        for _ in 0..2 {
            for object in &objects {
                let object = object.as_object().unwrap();
                assert_eq!(
                    object.get_hinted(key, &mut hint),
                    object.get(key),
                    "{key:?} in {object:?}"
                );
            }
        }
    }
}
