//! Comparing a desired value with an actual one the way design decision 3
//! says: only fields set in the files (or defaulted) are managed; sets
//! compare as sets; null, [] and absent are the same; trailing whitespace
//! and number formats never make a difference.

use monform_model::facts::{Facts, Pattern, Step as PatternStep};
use monform_model::{FieldPath, Segment};
use serde_json::Value;

use crate::forms::DesiredForm;

/// One field that differs.
#[derive(Debug, Clone, PartialEq)]
pub struct Difference {
    pub path: FieldPath,
    pub before: Value,
    pub after: Value,
}

/// Differences between `desired` and `actual` (read field by field), at
/// the deepest object level, except at `skip` paths (secrets, compared
/// separately).
pub fn differences<'a>(
    desired: &Value,
    actual: &dyn Fn(&str) -> Option<&'a Value>,
    facts: &Facts,
    skip: &[FieldPath],
) -> Vec<Difference> {
    differences_read(desired, actual, &|_| None, facts, skip)
}

/// As [`differences`], given also the texts of the actual's top-level
/// fields where they read as the files' form (`text`): a field whose text
/// is the files' value written out parses to that very value, so it is
/// compared with itself and never parsed. Most fields of a no-op plan
/// are such; parsing them was most of a plan's comparing.
pub fn differences_read<'a>(
    desired: &Value,
    actual: &dyn Fn(&str) -> Option<&'a Value>,
    text: &dyn Fn(&str) -> Option<&'a str>,
    facts: &Facts,
    skip: &[FieldPath],
) -> Vec<Difference> {
    let mut walk = Walk {
        path: Vec::new(),
        facts,
        skip,
        found: Vec::new(),
    };
    if let Value::Object(want) = desired {
        for (key, value) in want {
            walk.path.push(Step::Key(key));
            if text(key).is_some_and(|text| writes_as(value, text)) {
                // The same value on both sides: only what the rule says of
                // a value against itself (a set's odd matching) can differ.
                if !self_equal(value) {
                    walk.walk(value, value);
                }
            } else {
                walk.walk(value, actual(key).unwrap_or(&Value::Null));
            }
            walk.path.pop();
        }
    }
    walk.found
}

/// [`differences_read`] of a desired value held as its fields' texts
/// (`DesiredForm`): a field whose text is the actual's (the service's
/// text of it, or its value written out) is that very value on both
/// sides, and the rule finds no difference between a value and itself
/// unless a set lies inside it ([`alike`]). Only another field is parsed
/// from its text (serde_json reads a value it wrote as that very value:
/// the one the whole desired value holds there).
pub(crate) fn differences_of<'a>(
    desired: &DesiredForm<'_>,
    actual: &dyn Fn(&str) -> Option<&'a Value>,
    text: &dyn Fn(&str) -> Option<&'a str>,
    facts: &Facts,
    skip: &[FieldPath],
) -> Vec<Difference> {
    let mut walked: Vec<(&str, bool, Value)> = Vec::new();
    for (key, field) in desired.fields() {
        let same = match text(key) {
            Some(text) => text == field,
            None => actual(key).is_some_and(|value| writes_as(value, field)),
        };
        if same && alike(facts, key, field) {
            continue;
        }
        // Written by serde_json from the resource: it reads back.
        let value = serde_json::from_str(field).unwrap_or(Value::Null);
        walked.push((key, same, value));
    }
    let mut walk = Walk {
        path: Vec::new(),
        facts,
        skip,
        found: Vec::new(),
    };
    for (key, same, value) in &walked {
        walk.path.push(Step::Key(key));
        match same {
            true => walk.walk(value, value),
            false => walk.walk(value, actual(key).unwrap_or(&Value::Null)),
        }
        walk.path.pop();
    }
    walk.found
}

/// Whether the rule finds no difference between top-level field `key`,
/// whose JSON text is `text`, and itself. It always does unless a set's
/// members are matched ([`Walk::equal`]: strings by their text without
/// trailing whitespace, numbers by value, an object by the fields the
/// files set, each a match only one way): every other step compares a
/// value with itself. So: when no set of the facts lies in the field, or
/// no object is anywhere in it (no `{` in its text), as [`self_equal`].
fn alike(facts: &Facts, key: &str, text: &str) -> bool {
    let set_inside = facts
        .sets
        .iter()
        .any(|pattern| matches!(pattern.first(), Some(PatternStep::Key(first)) if first == key));
    !set_inside || !text.contains('{')
}

/// Whether `value` written as compact JSON is `text`, compared as it is
/// written (no copy of it is made; the first byte that differs stops it).
pub(crate) fn writes_as(value: &Value, text: &str) -> bool {
    let mut against = Against { rest: text.as_bytes() };
    serde_json::to_writer(&mut against, value).is_ok() && against.rest.is_empty()
}

/// A writer that checks what is written against a text.
struct Against<'t> {
    rest: &'t [u8],
}

impl std::io::Write for Against<'_> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        match self.rest.strip_prefix(bytes) {
            Some(rest) => {
                self.rest = rest;
                Ok(bytes.len())
            }
            None => Err(std::io::ErrorKind::InvalidData.into()),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Whether the rule finds no difference between `value` and itself,
/// without walking it: true when no list holds an object. (Objects are
/// where the rule is not symmetric: a field one side leaves out. Without
/// them a set's members match themselves in order.)
fn self_equal(value: &Value) -> bool {
    match value {
        Value::Object(fields) => fields.values().all(self_equal),
        Value::Array(items) => items.iter().all(|item| !item.is_object() && self_equal(item)),
        _ => true,
    }
}

/// One step of the path being walked, borrowed from the desired value: a
/// plan walks every field of every resource, and owned paths were most of
/// its cost. A [`FieldPath`] is made only for what differs.
#[derive(Clone, Copy)]
enum Step<'v> {
    Key(&'v str),
    Index(usize),
}

struct Walk<'v, 'f> {
    path: Vec<Step<'v>>,
    facts: &'f Facts,
    skip: &'f [FieldPath],
    found: Vec<Difference>,
}

impl<'v> Walk<'v, '_> {
    fn walk(&mut self, desired: &'v Value, actual: &Value) {
        if self.skip.iter().any(|p| self.at(p)) {
            return;
        }
        match (desired, actual) {
            (Value::Object(want), Value::Object(have)) => {
                for (key, value) in want {
                    self.path.push(Step::Key(key));
                    if !self.is_meta() {
                        self.walk(value, have.get(key).unwrap_or(&Value::Null));
                    }
                    self.path.pop();
                }
                for (key, value) in have {
                    if self.left_out(want, key, value) {
                        let mut path = self.field_path();
                        path.0.push(Segment::Key(key.clone()));
                        self.found.push(Difference {
                            path,
                            before: value.clone(),
                            after: Value::Null,
                        });
                    }
                }
            }
            _ if self.equal(desired, actual) => {}
            _ => self.found.push(Difference {
                path: self.field_path(),
                before: actual.clone(),
                after: desired.clone(),
            }),
        }
    }

    /// Equality under the diff rule, for a value at the current path.
    fn equal(&mut self, desired: &'v Value, actual: &Value) -> bool {
        match (desired, actual) {
            (d, a) if is_empty(d) && is_empty(a) => true,
            (Value::String(d), Value::String(a)) => d.trim_end() == a.trim_end(),
            (Value::Number(d), Value::Number(a)) => d.as_f64() == a.as_f64(),
            (Value::Object(want), Value::Object(have)) => {
                want.iter().all(|(k, v)| {
                    self.path.push(Step::Key(k));
                    let same = self.is_meta() || self.equal(v, have.get(k).unwrap_or(&Value::Null));
                    self.path.pop();
                    same
                }) && !have.iter().any(|(k, v)| self.left_out(want, k, v))
            }
            (Value::Array(want), Value::Array(have)) if want.len() == have.len() => {
                if self.facts.sets.iter().any(|pattern| self.in_pattern(pattern)) {
                    // Set members are matched in any order; their paths say `[0]`.
                    let mut unmatched: Vec<&Value> = have.iter().collect();
                    self.path.push(Step::Index(0));
                    let same = want.iter().all(|w| {
                        let position = unmatched.iter().position(|h| self.equal(w, h));
                        position.map(|i| unmatched.swap_remove(i)).is_some()
                    });
                    self.path.pop();
                    same
                } else {
                    want.iter().zip(have).enumerate().all(|(i, (w, h))| {
                        self.path.push(Step::Index(i));
                        let same = self.equal(w, h);
                        self.path.pop();
                        same
                    })
                }
            }
            (d, a) => d == a,
        }
    }

    /// Whether the service holds a field of the model, inside an object the
    /// files set (every path here is under a top-level field), that the
    /// files leave out: an update sends the whole top-level field and the
    /// service replaces it, so the field goes (`alertSettings.reminders`
    /// taken out of the files). Fields the model does not know (the
    /// service's own) and monform-only ones are not compared.
    fn left_out(&self, want: &serde_json::Map<String, Value>, key: &str, value: &Value) -> bool {
        // A false, zero or empty value the files leave out is most often the
        // model's default, which the files' typed form may leave unwritten.
        let unremarkable = match value {
            Value::Bool(b) => !b,
            Value::String(s) => s.is_empty(),
            Value::Number(n) => n.as_f64() == Some(0.0),
            Value::Object(m) => m.is_empty(),
            other => is_empty(other),
        };
        if want.contains_key(key) || unremarkable {
            return false;
        }
        let child = |pattern: &Pattern| {
            pattern.len() == self.path.len() + 1
                && pattern.last() == Some(&PatternStep::Key(key.to_owned()))
                && pattern.iter().zip(&self.path).all(|(want, step)| match (want, step) {
                    (PatternStep::Key(a), Step::Key(b)) => a == b,
                    (PatternStep::Each, Step::Index(_)) => true,
                    _ => false,
                })
        };
        self.facts.fields.iter().any(child) && !self.facts.meta.iter().any(child)
    }

    /// A monform-only field (a header's `secret`): never sent, never compared.
    fn is_meta(&self) -> bool {
        self.facts.meta.iter().any(|pattern| self.in_pattern(pattern))
    }

    /// Whether the current path matches a facts pattern (`[]` any index).
    fn in_pattern(&self, pattern: &Pattern) -> bool {
        pattern.len() == self.path.len()
            && pattern.iter().zip(&self.path).all(|(want, step)| match (want, step) {
                (PatternStep::Key(a), Step::Key(b)) => a == b,
                (PatternStep::Each, Step::Index(_)) => true,
                _ => false,
            })
    }

    fn at(&self, path: &FieldPath) -> bool {
        path.segments().len() == self.path.len()
            && path
                .segments()
                .iter()
                .zip(&self.path)
                .all(|(segment, step)| match (segment, step) {
                    (Segment::Key(a), Step::Key(b)) => a == b,
                    (Segment::Index(a), Step::Index(b)) => a == b,
                    _ => false,
                })
    }

    fn field_path(&self) -> FieldPath {
        FieldPath(
            self.path
                .iter()
                .map(|step| match step {
                    Step::Key(k) => Segment::Key((*k).to_owned()),
                    Step::Index(i) => Segment::Index(*i),
                })
                .collect(),
        )
    }
}

fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Array(items) => items.is_empty(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use monform_model::Kind;
    use monform_model::facts::facts;
    use serde_json::json;
    use serde_json::value::RawValue;

    fn diff(desired: Value, actual: Value) -> Vec<String> {
        let facts = facts(Kind::Check, &json!({"checkType": "API"}));
        differences(&desired, &|field| actual.get(field), facts, &[])
            .iter()
            .map(|d| d.path.to_string())
            .collect()
    }

    #[test]
    fn sets_nulls_whitespace_and_numbers_do_not_differ() {
        let desired =
            json!({"tags": ["a", "b"], "locations": [], "name": "x", "frequency": 10, "request": {"url": "u"}});
        let actual = json!({"tags": ["b", "a"], "locations": null, "name": "x  ", "frequency": 10.0, "request": {"url": "u", "extra": 1}, "id": "z"});
        assert!(diff(desired, actual).is_empty());
    }

    #[test]
    fn lists_and_nested_fields_differ_at_their_path() {
        let desired = json!({"request": {"url": "new", "assertions": [{"source": "STATUS_CODE"}]}, "tags": ["a"]});
        let actual = json!({"request": {"url": "old", "assertions": []}, "tags": ["a", "b"]});
        assert_eq!(diff(desired, actual), ["request.url", "request.assertions", "tags"]);
    }

    /// Issue 45: a nested field taken out of the files goes from the
    /// service at the next update (the top-level field is sent whole), so
    /// the plan shows it; a field the model does not know is the service's.
    #[test]
    fn a_nested_field_left_out_of_the_files_differs() {
        let desired = json!({"alertSettings": {"escalationType": "RUN_BASED"}, "request": {"url": "u"}});
        let actual = json!({
            "alertSettings": {"escalationType": "RUN_BASED", "reminders": {"amount": 2, "interval": 10}},
            "request": {"url": "u", "extra": 1, "assertions": []},
        });
        assert_eq!(diff(desired, actual), ["alertSettings.reminders"]);
        let desired = json!({"request": {"url": "u", "headers": [{"key": "A", "value": "1"}]}});
        let actual = json!({"request": {"url": "u", "headers": [{"key": "A", "value": "1", "locked": true}]}});
        assert_eq!(diff(desired.clone(), actual), ["request.headers"]);
        let actual = json!({"request": {"url": "u", "headers": [{"key": "A", "value": "1", "locked": false}]}});
        assert!(diff(desired, actual).is_empty());
    }

    /// Compared by text where the actual's text is the files' value
    /// written out, by value elsewhere: the same differences either way.
    #[test]
    fn fields_read_as_text_differ_as_parsed_ones() {
        let facts = facts(Kind::Check, &json!({"checkType": "API"}));
        let cases = [
            (
                json!({"name": "x", "tags": ["a", "b"]}),
                r#"{"name":"x","tags":["b","a"]}"#,
            ),
            (
                json!({"name": "x", "frequency": 10}),
                r#"{"name":"y","frequency":10.0}"#,
            ),
            (
                json!({"request": {"url": "u", "headers": [{"key": "A", "value": "1"}]}}),
                r#"{"request":{"url":"u","headers":[{"key":"A","value":"1"}]}}"#,
            ),
            (
                json!({"request": {"url": "u", "assertions": [{"source": "A"}, {"source": "A", "target": ""}]}}),
                r#"{"request":{"url":"u","assertions":[{"source":"A"},{"source":"A","target":""}]}}"#,
            ),
            (
                json!({"name": "x", "locations": []}),
                r#"{"name":"x  ","locations":null}"#,
            ),
        ];
        for (desired, text) in cases {
            let actual: Value = serde_json::from_str(text).unwrap();
            let texts: Vec<(&str, &RawValue)> =
                monform_model::pick::pick_texts(text, &["name", "tags", "frequency", "request", "locations"]);
            let by_text = differences_read(
                &desired,
                &|field| actual.get(field),
                &|field| texts.iter().find(|(name, _)| *name == field).map(|(_, raw)| raw.get()),
                facts,
                &[],
            );
            assert_eq!(
                by_text,
                differences(&desired, &|field| actual.get(field), facts, &[]),
                "{text}"
            );
        }
    }

    #[test]
    fn a_value_writes_as_its_compact_text_only() {
        let value = json!({"a": [1, 2.5, "x\"y"], "b": {"c": null}});
        assert!(writes_as(&value, r#"{"a":[1,2.5,"x\"y"],"b":{"c":null}}"#));
        assert!(!writes_as(&value, r#"{"a":[1,2.5,"x\"y"],"b":{"c":null}},"#));
        assert!(!writes_as(&value, r#"{"a":[1,2.5,"x\"y"],"b":{"c":nul"#));
        assert!(!writes_as(&value, r#"{"b":{"c":null},"a":[1,2.5,"x\"y"]}"#));
        assert!(self_equal(&json!({"a": [[1], "x"], "b": {"c": [null]}})));
        assert!(!self_equal(&json!({"a": [[{"b": 1}]]})));
    }

    #[test]
    fn monform_only_fields_inside_lists_are_not_compared() {
        let desired = json!({"request": {"headers": [{"key": "X-Tenant", "value": "t", "secret": true}]}});
        let actual = json!({"request": {"headers": [{"key": "X-Tenant", "value": "t", "locked": false}]}});
        assert!(diff(desired, actual).is_empty());
    }
}
