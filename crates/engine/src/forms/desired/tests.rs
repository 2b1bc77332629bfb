use super::*;
use crate::compare::{differences, differences_of, differences_read};
use crate::forms::{lookup, managed, sensitive_paths};
use monform_model::resources::CheckType;
use serde_json::json;

/// Resources of every kind the differ meets, and of every check type:
/// with monform-only fields (taken out of the middle of the JSON form),
/// secrets by name, by flag and by URL, and references.
fn resources() -> Vec<(Kind, Resource)> {
    let mut values = vec![
        (
            Kind::Check,
            json!({"checkType": "API", "name": "a  ", "frequency": 5, "preventDestroy": true,
                "lifecycle": {"ignoreChanges": ["tags", "request.body"], "drift": "ignore"},
                "group": "g", "alertChannels": ["c", "d"], "tags": ["x", "y"], "locations": ["eu-west-1"],
                "environmentVariables": [{"key": "TOKEN", "value": "s3", "secret": true}, {"key": "A", "value": "1"}],
                "request": {"method": "GET", "url": "https://x.test/p?apikey=k&page=2",
                    "headers": [{"key": "Authorization", "value": "Bearer t"}, {"key": "Accept", "value": "a/b"}],
                    "assertions": [{"source": "STATUS_CODE", "comparison": "EQUALS", "target": "200"}]}}),
        ),
        (
            Kind::Group,
            json!({"name": "G", "concurrency": 2, "locations": ["us-east-1"], "tags": ["t"],
                "environmentVariables": [{"key": "PASSWORD", "value": "p"}], "alertChannels": ["c"]}),
        ),
        (
            Kind::AlertChannel,
            json!({"type": "WEBHOOK", "config": {"name": "n", "url": "https://h.test/in?token=T", "method": "POST",
                "headers": [{"key": "X-Api-Key", "value": "k-123"}]}}),
        ),
        (
            Kind::Variable,
            json!({"value": "v", "secret": true, "lifecycle": {"drift": "ignore"}, "preventDestroy": true}),
        ),
        (Kind::Snippet, json!({"name": "s", "script": "console.log(1)\n"})),
    ];
    for (n, &check_type) in CheckType::ALL.iter().enumerate() {
        let mut check = monform_model::samples::check_spec(check_type, n);
        check["checkType"] = json!(check_type.as_str());
        check["name"] = json!(format!("check {n}"));
        check["lifecycle"] = json!({"ignoreChanges": ["name"]});
        values.push((Kind::Check, check));
    }
    values
        .into_iter()
        .map(|(kind, value)| {
            let resource = Resource::from_json(kind, value.clone()).unwrap_or_else(|e| panic!("{value}: {e}"));
            (kind, resource)
        })
        .collect()
}

/// The form's fields are the managed JSON form's, in its order, each the
/// text of its value: what the differ compared before it held texts.
#[test]
fn a_form_has_the_managed_json_forms_fields_in_order() {
    for (kind, resource) in resources() {
        let json = resource.to_json();
        let full = managed(kind, json.clone());
        let form = DesiredForm::new(kind, &resource);
        let written: Vec<(String, String)> = full
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), serde_json::to_string(v).unwrap()))
            .collect();
        let held: Vec<(String, String)> = form.fields().map(|(k, v)| (k.to_owned(), v.to_owned())).collect();
        assert_eq!(held, written, "{json}");
        assert_eq!(form.len(), written.len());
        assert_eq!(form.full(), &full);
        assert_eq!(form.facts() as *const _, facts(kind, &json) as *const _);
        assert_eq!(form.variant(), monform_model::facts::variant_of(kind, &json));
        assert_eq!(form.lifecycle(), resource.lifecycle());
        for (name, _) in &written {
            assert!(form.has(name));
        }
        for absent in ["lifecycle", "preventDestroy", "", "nam", "namex", "missing"] {
            assert!(!form.has(absent), "{absent}");
        }
        // The secret rule finds the same paths, and the same values there.
        let extra = [FieldPath::parse("name")];
        let secrets = form.secret_fields(&extra);
        let paths = sensitive_paths(kind, &secrets, &extra);
        assert_eq!(paths, sensitive_paths(kind, &full, &extra), "{json}");
        for path in &paths {
            assert_eq!(lookup(&secrets, path), lookup(&full, path), "{path}");
        }
    }
}

/// A form read from the JSON form (a top level the writer cannot take)
/// has the same fields.
#[test]
fn a_form_read_from_the_json_form_is_the_same() {
    for (kind, resource) in resources() {
        let written = DesiredForm::new(kind, &resource);
        let mut read = DesiredForm::new(kind, &resource);
        read.read_json_form();
        let fields = |form: &DesiredForm<'_>| -> Vec<(String, String)> {
            (0..form.fields.len())
                .map(|i| {
                    (
                        form.name(i).to_owned(),
                        form.text[form.fields[i].value.clone()].to_owned(),
                    )
                })
                .collect()
        };
        assert_eq!(fields(&read), fields(&written));
    }
}

/// Compared as texts or as values, a form differs from the service where
/// the managed JSON form does, whichever texts the service gives.
#[test]
fn a_form_differs_where_its_json_form_does() {
    for (kind, resource) in resources() {
        let form = DesiredForm::new(kind, &resource);
        let full = form.full().clone();
        let facts = form.facts();
        // The same value; as another writer writes it; edited.
        let mut edited = full.clone();
        for (i, (_, value)) in edited.as_object_mut().unwrap().iter_mut().enumerate() {
            match value {
                Value::String(text) if i % 2 == 0 => text.push_str("  "),
                Value::String(text) => text.push('!'),
                Value::Number(n) => *value = json!(n.as_f64().unwrap_or_default() + (i % 2) as f64),
                Value::Array(items) => items.reverse(),
                _ => {}
            }
        }
        for actual in [full.clone(), edited] {
            let texts: Vec<(String, String)> = actual
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| (k.clone(), serde_json::to_string(v).unwrap()))
                .collect();
            let text = |field: &str| texts.iter().find(|(name, _)| name == field).map(|(_, t)| t.as_str());
            let expected = differences(&full, &|f| actual.get(f), facts, &[]);
            assert_eq!(differences_read(&full, &|f| actual.get(f), &text, facts, &[]), expected);
            assert_eq!(differences_of(&form, &|f| actual.get(f), &text, facts, &[]), expected);
            // No texts: the service's values written out instead.
            assert_eq!(
                differences_of(&form, &|f| actual.get(f), &|_| None, facts, &[]),
                expected
            );
        }
    }
}
