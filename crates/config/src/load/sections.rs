//! The sections of one resource file: `moved` / `import` / `removed`
//! declarations parsed, each resource's definition expanded, and what is
//! not a resource reported.

use super::*;

/// The resources of one file's tree, reporting what is not a resource:
/// unknown sections, sections that are not maps, bad logical ids.
pub(super) fn resources_of(
    tree: Node,
    base: &Path,
    context: &Context<'_>,
    budget: &Budget,
    declarations: &mut Declarations,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<Found> {
    let mut found = Vec::new();
    let NodeValue::Map(sections) = tree.value else {
        diagnostics.push(
            Diagnostic::new(
                "monform::type",
                format!("a resource file must be a map of sections, found {}", tree.type_name()),
            )
            .at(tree.span, "here")
            .help(format!(
                "top-level keys are {}",
                Kind::sections().collect::<Vec<_>>().join(", ")
            )),
        );
        return found;
    };
    for section in sections {
        if declare::SECTIONS.contains(&section.key.as_str()) {
            declare::parse(section, context, declarations, diagnostics);
            continue;
        }
        let Some(kind) = Kind::from_section(&section.key) else {
            let diagnostic = Diagnostic::new("monform::unknown-section", format!("unknown section `{}`", section.key))
                .at(section.key_span, "not a section");
            diagnostics.push(match monform_model::suggest(&section.key, Kind::sections()) {
                Some(s) => diagnostic.help(format!("did you mean `{s}`?")),
                None => diagnostic.help(format!(
                    "sections are {}",
                    Kind::sections().collect::<Vec<_>>().join(", ")
                )),
            });
            continue;
        };
        let resources = match section.value.value {
            NodeValue::Map(resources) => resources,
            NodeValue::Null => continue,
            _ => {
                diagnostics.push(
                    Diagnostic::new(
                        "monform::type",
                        format!(
                            "{}: expected a map of logical id to resource, found {}",
                            section.key,
                            section.value.type_name()
                        ),
                    )
                    .at(section.key_span, "here"),
                );
                continue;
            }
        };
        for entry in resources {
            // Past the budget (reported), the rest of the file is not expanded.
            if budget.is_spent() {
                break;
            }
            if !monform_model::is_valid_logical_id(&entry.key) {
                diagnostics.push(
                    Diagnostic::new(
                        "monform::logical-id",
                        format!("`{}` is not a valid logical id", entry.key),
                    )
                    .at(entry.key_span, "invalid id")
                    .help("use letters, digits, - and _, starting with a letter or digit, at most 64 characters"),
                );
                continue;
            }
            let key = entry.key;
            let Some(expanded) = expand(
                kind,
                &key,
                entry.key_span,
                entry.value,
                base,
                context,
                budget,
                diagnostics,
            ) else {
                declarations.absent.push(Address::new(kind, key));
                continue;
            };
            found.extend(expanded.into_iter().map(|e| Found {
                address: e.address,
                key_span: e.key_span,
                node: e.node,
                unresolved: e.unresolved,
                item: e.item,
            }));
        }
    }
    found
}
