//! Findings as diagnostics at the resource's (and field's) file:line, as
//! the linter's are: the loader keeps a span per resource; a field is
//! found by its key inside the resource's entry (the text up to the next
//! resource of its file). A field the entry does not write (from
//! `[defaults]` or the group) points at the resource; a finding about no
//! resource of the files (a delete in the plan) at the policy's rule.

use std::collections::HashMap;

use monform_config::source::{FileId, Sources, Span};
use monform_config::{Desired, Diagnostic};
use monform_model::Address;
use regex::Regex;

use crate::evaluate::{Finding, Level};

/// One diagnostic per finding: `deny` and `violation` are errors (an
/// overridden one a warning), `warn` warnings; the code is the rule.
pub fn diagnostics(findings: &[Finding], desired: &Desired, sources: &Sources) -> Vec<Diagnostic> {
    let mut regions = Regions::default();
    findings
        .iter()
        .map(|finding| {
            let resource = finding
                .address
                .as_deref()
                .and_then(|a| a.parse::<Address>().ok())
                .and_then(|a| desired.resources.get(&a));
            let (span, label) = match resource {
                Some(resource) => {
                    let field = finding
                        .field
                        .as_deref()
                        .and_then(|field| regions.field(desired, sources, resource.span, field));
                    match (field, finding.field.as_deref()) {
                        (Some(span), Some(field)) => (span, format!("{field} of {}", resource.address)),
                        _ => (resource.span, resource.address.to_string()),
                    }
                }
                None => (finding.rule_at, format!("rule {}", finding.rule)),
            };
            let message = match (&finding.address, resource) {
                // Not in the files (a delete): the address says what.
                (Some(address), None) => format!("{address}: {}", finding.message),
                _ => finding.message.clone(),
            };
            let mut diagnostic = Diagnostic::new(finding.rule, message).at(span, label);
            diagnostic = match (finding.level, finding.overridden) {
                (Level::Warn, _) => diagnostic.warning(),
                (_, true) => diagnostic.warning().help(format!(
                    "overridden for this run by --policy-override {}",
                    finding.package
                )),
                (_, false) => diagnostic.help(format!(
                    "policy {}: fix it, or override it for one run with --policy-override {}",
                    finding.package, finding.package
                )),
            };
            diagnostic
        })
        .collect()
}

/// Where each resource's entry ends: the next resource key of its file.
#[derive(Default)]
struct Regions {
    starts: Option<HashMap<FileId, Vec<usize>>>,
}

impl Regions {
    fn end(&mut self, desired: &Desired, sources: &Sources, at: Span) -> usize {
        let starts = self.starts.get_or_insert_with(|| {
            let mut starts: HashMap<FileId, Vec<usize>> = HashMap::new();
            for resource in desired.resources.values() {
                starts.entry(resource.span.file).or_default().push(resource.span.start);
            }
            for list in starts.values_mut() {
                list.sort_unstable();
                list.dedup();
            }
            starts
        });
        let text_len = sources.get(at.file).text.len();
        starts
            .get(&at.file)
            .and_then(|list| list.get(list.partition_point(|&s| s <= at.start)).copied())
            .unwrap_or(text_len)
    }

    /// The key of `field` (`request.url`, `tags[1]`: its names, in order)
    /// inside the entry of the resource at `at`.
    fn field(&mut self, desired: &Desired, sources: &Sources, at: Span, field: &str) -> Option<Span> {
        let end = self.end(desired, sources, at);
        let text = sources.get(at.file).text.get(at.start..end)?;
        let mut from = 0;
        let mut found = None;
        for name in field
            .split('.')
            .map(|s| s.split('[').next().unwrap_or(s))
            .filter(|s| !s.is_empty())
        {
            // A YAML `name:`, a TOML `name =` or a quoted key of either.
            let key = Regex::new(&format!(r#"(?m)(?:^|[\s{{,.\[])"?{}"?\s*[:=]"#, regex::escape(name))).ok()?;
            let hit = key.find(&text[from..])?;
            let start = from + hit.start() + text[from + hit.start()..].find(name)?;
            found = Some(Span::new(at.file, at.start + start, name.len()));
            from = start + name.len();
        }
        found
    }
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
            package: "monform.t".into(),
            level: Level::Deny,
            message: "m".into(),
            address: Some(address.into()),
            field: field.map(str::to_owned),
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
}
