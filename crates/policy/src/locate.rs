//! Findings as diagnostics at the resource's (and field's) file:line, as
//! the linter's are: the loader keeps a span per resource (its logical id's
//! key); a field's span is the one the loader's parser gives its key in
//! that resource's entry (`monform_config::tree`), read again only for the
//! files a finding with a field points into, and walked by the field's
//! path (`request.assertions[0].target`): nested maps by key, lists by
//! index. A `forEach` copy's entry is its template, so its fields point at
//! the template's keys. A field the entry does not write (from `[defaults]`
//! or the group) points at the resource; a finding about no resource of
//! the files (a delete in the plan) at the policy's rule.

use std::collections::HashMap;

use monform_config::source::{FileId, Format, Sources, Span};
use monform_config::tree::{Node, NodeValue, parse_toml, parse_yaml};
use monform_config::{Desired, DesiredResource, Diagnostic};
use monform_model::Address;
use rayon::prelude::*;

use crate::evaluate::{Finding, Level};

/// One diagnostic per finding: `deny` and `violation` are errors (an
/// overridden one a warning), `warn` warnings; the code is the rule.
pub fn diagnostics(findings: &[Finding], desired: &Desired, sources: &Sources) -> Vec<Diagnostic> {
    diagnostics_placing(findings, desired, sources, usize::MAX)
}

/// [`diagnostics`] for a terminal that shows only the first `per_rule` of
/// a rule's findings (at one severity, as `summary::summarise` groups
/// them) and counts the rest: only those have their field placed, which
/// parses their file again; the others point at their resource. At
/// 100,000 checks with a finding on each, placing them all parsed every
/// file of the project again (the loader reads them from its cache).
pub fn diagnostics_placing(
    findings: &[Finding],
    desired: &Desired,
    sources: &Sources,
    per_rule: usize,
) -> Vec<Diagnostic> {
    // In parallel: at 100,000 checks each of these passes over 130,000
    // findings was a tenth of a second at the end of a plan, on one core.
    let resources: Vec<Option<&DesiredResource>> = findings
        .par_iter()
        .map(|finding| {
            finding
                .address
                .as_deref()
                .and_then(|a| a.parse::<Address>().ok())
                .and_then(|a| desired.resources.get(&a))
        })
        .collect();
    let placed = placed(findings, per_rule);
    let fields = field_spans(findings, &resources, &placed, sources);
    findings
        .par_iter()
        .zip(resources)
        .zip(fields)
        .map(|((finding, resource), field)| {
            let (span, label) = match (resource, field, finding.field.as_deref()) {
                (Some(resource), Some(span), Some(field)) => (span, format!("{field} of {}", resource.address)),
                (Some(resource), _, _) => (resource.span, resource.address.to_string()),
                (None, _, _) => (finding.rule_at, format!("rule {}", finding.rule)),
            };
            let message = match (&finding.address, resource) {
                // Not in the files (a delete): the address says what.
                (Some(address), None) => format!("{address}: {}", finding.message),
                _ => finding.message.clone(),
            };
            let diagnostic = Diagnostic::new(finding.rule, message).at(span, label).finding();
            match (finding.level, finding.overridden) {
                (Level::Warn, _) => diagnostic.warning(),
                (_, true) => diagnostic.warning().help(format!(
                    "overridden for this run by --policy-override {}",
                    finding.package
                )),
                (_, false) => diagnostic.help(format!(
                    "policy {}: fix it, or override it for one run with --policy-override {}",
                    finding.package, finding.package
                )),
            }
        })
        .collect()
}

/// The span of each finding's field, in the entry of its resource (`None`
/// when it names no field, or the entry does not write it). Each file is
/// parsed once, for all its findings, and dropped before the next: kept
/// until the end, the trees of 1,000 files with a finding each (100,000
/// checks) were a third of `validate`'s memory.
fn field_spans(
    findings: &[Finding],
    resources: &[Option<&DesiredResource>],
    placed: &[bool],
    sources: &Sources,
) -> Vec<Option<Span>> {
    let mut spans = vec![None; findings.len()];
    let mut wanted: Vec<(FileId, usize)> = findings
        .iter()
        .zip(resources)
        .enumerate()
        .filter_map(|(i, (finding, resource))| {
            finding.field.as_ref().filter(|_| placed[i])?;
            Some(((*resource)?.span.file, i))
        })
        .collect();
    wanted.sort_unstable();
    // Files apart on both cores (at 100,000 checks with a finding each,
    // parsing the 1,000 files again was most of the findings' rendering);
    // each still parsed once and dropped before that core's next.
    let files: Vec<&[(FileId, usize)]> = wanted.chunk_by(|a, b| a.0 == b.0).collect();
    let found: Vec<Vec<(usize, Span)>> = files
        .into_par_iter()
        .with_max_len(1)
        .map(|in_file| {
            let file = sources.get(in_file[0].0);
            let tree = match file.format {
                Format::Yaml => parse_yaml(in_file[0].0, &file.text).ok(),
                Format::Toml => parse_toml(in_file[0].0, &file.text).ok(),
                Format::Rego => None,
            };
            let Some(tree) = tree else { return Vec::new() };
            in_file
                .iter()
                .filter_map(|&(_, i)| {
                    let (resource, field) = (resources[i]?, findings[i].field.as_deref()?);
                    Some((i, entry_at(&tree, resource.span).and_then(|entry| walk(entry, field))?))
                })
                .collect()
        })
        .collect();
    for (i, span) in found.into_iter().flatten() {
        spans[i] = Some(span);
    }
    spans
}

/// Whether each finding is among the first `per_rule` of its rule at its
/// severity (a `warn`, or an overridden finding, is a warning).
fn placed(findings: &[Finding], per_rule: usize) -> Vec<bool> {
    if per_rule == usize::MAX {
        return vec![true; findings.len()];
    }
    let mut seen: HashMap<(&str, bool), usize> = HashMap::new();
    findings
        .iter()
        .map(|finding| {
            let warns = finding.level == Level::Warn || finding.overridden;
            let count = seen.entry((finding.rule, warns)).or_default();
            *count += 1;
            *count <= per_rule
        })
        .collect()
}

/// The value of the resource entry whose key is at `at` (under its
/// section: `checks:` → `home:`), or, for a `forEach` copy, whose span is
/// its item inside the entry, the entry the item is written in: the last
/// one whose key comes before it.
fn entry_at(tree: &Node, at: Span) -> Option<&Node> {
    let NodeValue::Map(sections) = &tree.value else {
        return None;
    };
    sections
        .iter()
        .filter_map(|section| match &section.value.value {
            NodeValue::Map(resources) => Some(resources),
            _ => None,
        })
        .flatten()
        .filter(|resource| resource.key_span.start <= at.start)
        .max_by_key(|resource| resource.key_span.start)
        .map(|resource| &resource.value)
}

/// The span of the last name (or list item) of `field` under `node`:
/// `request.url`, `tags[1]`, `request.assertions[0].target`.
fn walk(node: &Node, field: &str) -> Option<Span> {
    let mut node = node;
    let mut found = None;
    for part in field.split('.').filter(|p| !p.is_empty()) {
        let mut pieces = part.split('[');
        let name = pieces.next().unwrap_or_default();
        if !name.is_empty() {
            let NodeValue::Map(entries) = &node.value else {
                return None;
            };
            let entry = entries.iter().find(|e| e.key == name)?;
            found = Some(entry.key_span);
            node = &entry.value;
        }
        for index in pieces {
            let index: usize = index.strip_suffix(']')?.parse().ok()?;
            let NodeValue::Seq(items) = &node.value else {
                return None;
            };
            node = items.get(index)?;
            found = Some(node.span);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_finding_points_at_its_field_else_its_resource_else_its_rule() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("monform.toml"), "[project]\nname = \"p\"\n").unwrap();
        std::fs::write(
            dir.path().join("m.yaml"),
            "checks:\n  a:\n    checkType: TCP\n    name: A\n    request: { hostname: a.example, port: 443 }\n  b:\n    checkType: TCP\n    name: B\n    frequency: 60\n    request:\n      hostname: b.example\n      port: 443\n",
        )
        .unwrap();
        let loaded = monform_config::load(dir.path(), &|_: &str| None);
        assert!(loaded.is_ok(), "{:?}", loaded.diagnostics);
        let finding = |address: &str, field: Option<&str>| Finding {
            rule: "monform.t.deny",
            package: "monform.t",
            level: Level::Deny,
            message: "m".into(),
            address: Some(address.into()),
            field: field.map(Into::into),
            overridden: false,
            rule_at: Span::new(0, 0, 0),
        };
        let found = diagnostics(
            &[
                finding("checks.b", Some("frequency")),
                finding("checks.b", Some("request.port")),
                finding("checks.a", Some("frequency")),
                finding("checks.gone", None),
            ],
            &loaded.desired,
            &loaded.sources,
        );
        let at: Vec<String> = found.iter().map(|d| d.location(&loaded.sources).unwrap()).collect();
        assert_eq!(at[0], "m.yaml:9:5");
        assert_eq!(at[1], "m.yaml:12:7");
        assert_eq!(at[2], "m.yaml:2:3");
        assert_eq!(found[3].message, "checks.gone: m");
    }

    /// A terminal that shows a rule's first few findings and counts the
    /// rest: only those few are placed at their field (each rule and
    /// severity counted apart); the others at their resource, as
    /// [`diagnostics`] would place them but for the field.
    #[test]
    fn only_the_first_of_each_rule_are_placed_at_their_field() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("monform.toml"), "[project]\nname = \"p\"\n").unwrap();
        std::fs::write(
            dir.path().join("m.yaml"),
            "checks:\n  a:\n    checkType: TCP\n    name: A\n    frequency: 5\n    request: { hostname: a.example, port: 443 }\n  b:\n    checkType: TCP\n    name: B\n    frequency: 60\n    request: { hostname: b.example, port: 443 }\n",
        )
        .unwrap();
        let loaded = monform_config::load(dir.path(), &|_: &str| None);
        assert!(loaded.is_ok(), "{:?}", loaded.diagnostics);
        let finding = |rule: &'static str, level: Level, address: &str| Finding {
            rule,
            package: "monform.t",
            level,
            message: "m".into(),
            address: Some(address.into()),
            field: Some("frequency".into()),
            overridden: false,
            rule_at: Span::new(0, 0, 0),
        };
        let findings = [
            finding("monform.t.deny", Level::Deny, "checks.a"),
            finding("monform.t.warn", Level::Warn, "checks.a"),
            finding("monform.t.deny", Level::Deny, "checks.b"),
            finding("monform.t.warn", Level::Warn, "checks.b"),
        ];
        let all = diagnostics(&findings, &loaded.desired, &loaded.sources);
        let placed = diagnostics_placing(&findings, &loaded.desired, &loaded.sources, 1);
        let at = |found: &[Diagnostic]| -> Vec<String> {
            found.iter().map(|d| d.location(&loaded.sources).unwrap()).collect()
        };
        assert_eq!(at(&all), ["m.yaml:5:5", "m.yaml:5:5", "m.yaml:10:5", "m.yaml:10:5"]);
        assert_eq!(at(&placed), ["m.yaml:5:5", "m.yaml:5:5", "m.yaml:7:3", "m.yaml:7:3"]);
        assert_eq!(placed[..2], all[..2]);
        assert_eq!(
            diagnostics_placing(&findings, &loaded.desired, &loaded.sources, usize::MAX),
            all
        );
    }

    /// The loader's spans, not the key's text: a commented-out key before
    /// the real one is not it; nested fields and list items, and a forEach
    /// copy's fields (its template's keys).
    #[test]
    fn fields_are_at_their_own_keys_nested_listed_and_in_for_each_templates() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("monform.toml"), "[project]\nname = \"p\"\n").unwrap();
        std::fs::write(
            dir.path().join("m.yaml"),
            "checks:\n  a:\n    checkType: API\n    name: A\n    # frequency: the group's, once there is one\n    request:\n      method: GET\n      url: https://a.example\n      assertions:\n        - { source: STATUS_CODE, comparison: EQUALS, target: \"200\" }\n    frequency: 5\n  regional:\n    forEach: [eu, us]\n    checkType: TCP\n    name: \"R ${each.value}\"\n    frequency: 10\n    request: { hostname: r.example, port: 443 }\n",
        )
        .unwrap();
        let loaded = monform_config::load(dir.path(), &|_: &str| None);
        assert!(loaded.is_ok(), "{:?}", loaded.diagnostics);
        let finding = |address: &str, field: &str| Finding {
            rule: "monform.t.deny",
            package: "monform.t",
            level: Level::Deny,
            message: "m".into(),
            address: Some(address.into()),
            field: Some(field.into()),
            overridden: false,
            rule_at: Span::new(0, 0, 0),
        };
        let found = diagnostics(
            &[
                finding("checks.a", "frequency"),
                finding("checks.a", "request.assertions"),
                finding("checks.a", "request.assertions[0].target"),
                finding("checks.regional[us]", "frequency"),
                finding("checks.regional[eu]", "request.port"),
            ],
            &loaded.desired,
            &loaded.sources,
        );
        let at: Vec<String> = found.iter().map(|d| d.location(&loaded.sources).unwrap()).collect();
        assert_eq!(
            at,
            [
                "m.yaml:11:5",
                "m.yaml:9:7",
                "m.yaml:10:54",
                "m.yaml:16:5",
                "m.yaml:17:37"
            ]
        );
    }
}
