//! The plan for a pull-request comment: a summary table and a collapsed
//! diff per change, kept under GitHub's comment limit.

use monform_engine::{Action, Change, Plan};

use super::{GROUPS, excluded_human, lines, refresh_note, summary_line, symbol, verb};

/// What a change without field changes does, in one sentence.
fn without_fields(change: &Change) -> String {
    let id = change
        .remote_id
        .as_deref()
        .map(|id| format!(" (remote id {id})"))
        .unwrap_or_default();
    let address = &change.address;
    match (change.action, &change.from) {
        (Action::Move, Some(from)) => format!(
            "The object{id} keeps its history and settings: only its address changes, from `{from}` to `{address}`."
        ),
        (Action::Delete, _) => format!("The object{id} and everything it holds are deleted from the account."),
        (Action::Forget, _) => {
            format!("monform stops managing the object{id}: it stays in the account as it is, and leaves the state.")
        }
        (Action::Import, _) => format!("The object{id} joins the state as it is; no field changes."),
        _ => format!("No field of the object{id} changes."),
    }
}

/// The conflicts, as a warning a reviewer cannot miss: each field with
/// what was applied, what the service holds and what the files say.
fn conflicts(plan: &Plan) -> String {
    let Some(note) = super::conflict_note(plan) else {
        return String::new();
    };
    let cell = |value: Option<&serde_json::Value>, missing: &str| match value {
        Some(value) => format!("`{}`", super::show(value).replace('`', "'").replace('|', "\\|")),
        None => missing.to_owned(),
    };
    let mut out =
        format!("\n> [!WARNING]\n> {note}\n\n| object | field | applied | service | files |\n|---|---|---|---|---|\n");
    for change in &plan.changes {
        for field in &change.fields {
            if let Some(conflict) = &field.conflict {
                out.push_str(&format!(
                    "| `{}` | `{}` | {} | {} | {} |\n",
                    change.address,
                    field.path,
                    cell(conflict.applied.as_ref(), "(not recorded)"),
                    cell(conflict.service.as_ref(), "(not readable)"),
                    super::files_shown(conflict, |v| cell(Some(v), "")),
                ));
            }
        }
    }
    out
}

/// GitHub keeps comments under 65,536 characters; stay well below.
pub const MARKDOWN_LIMIT: usize = 65_000;

/// The plan for a pull-request comment: a summary table, then a collapsed
/// diff per changed resource. The largest diffs are left out first when the
/// whole would not fit, and the comment says so.
pub fn markdown(plan: &Plan) -> String {
    markdown_in(plan, None)
}

/// [`markdown`] of a plan for `environment`, which its heading names.
pub fn markdown_in(plan: &Plan, environment: Option<&str>) -> String {
    let summary = plan.summary();
    let mut head = match environment {
        Some(environment) => format!(
            "### monform plan for `{}`, environment `{environment}`\n\n",
            plan.project
        ),
        None => format!("### monform plan for `{}`\n\n", plan.project),
    };
    // Every count the summary line has, so the two never disagree; moved
    // objects are their own column, never "unchanged".
    let columns = [
        ("create", summary.create),
        ("update", summary.update),
        ("delete", summary.delete),
        ("replace", summary.replace),
        ("import", summary.import),
        ("moved", summary.moved),
        ("forget", summary.forget),
        ("unchanged", summary.noop),
    ];
    let row = |cell: &dyn Fn(&(&str, usize)) -> String| columns.iter().map(cell).collect::<Vec<_>>().join(" | ");
    head.push_str(&format!(
        "| {} |\n|{}\n",
        row(&|(name, _)| (*name).to_owned()),
        "---:|".repeat(columns.len())
    ));
    head.push_str(&format!("| {} |\n\n", row(&|(_, count)| count.to_string())));
    head.push_str(&format!("**{}**\n", summary_line(plan)));
    head.push_str(&conflicts(plan));
    if let Some(note) = refresh_note(plan) {
        head.push_str(&format!("\n> {note}\n"));
    }
    head.push_str(&crate::render::renames::markdown(plan));
    head.push_str(&crate::render::renames::markdown_discards(plan));
    if !plan.excluded.is_empty() {
        head.push_str(&format!("\n```\n{}```\n", excluded_human(plan)));
    }
    let mut blocks: Vec<(String, String)> = Vec::new();
    for group in GROUPS {
        for change in plan.changes.iter().filter(|c| c.action == group) {
            let moved = change
                .from
                .as_ref()
                .map(|from| format!(", moved from <code>{from}</code>"))
                .unwrap_or_default();
            let title = format!(
                "<details><summary><code>{} {}</code>: {} ({}){moved}</summary>\n\n",
                symbol(change.action),
                change.address,
                verb(change.action),
                change.reason.text()
            );
            let body_lines = lines(plan, change, &change.fields);
            // An entry without field changes says what happens in words:
            // an empty diff block reads as "nothing", which a delete is not.
            let mut body = if body_lines.is_empty() {
                format!("{}\n\n", without_fields(change))
            } else {
                let mut body = String::from("```diff\n");
                for line in body_lines {
                    body.push_str(&format!("{} {}\n", line.sign, line.text));
                }
                body.push_str("```\n\n");
                body
            };
            body.push_str("</details>\n");
            blocks.push((title, body));
        }
    }
    let mut total: usize = head.len() + blocks.iter().map(|(t, b)| t.len() + b.len() + 1).sum::<usize>();
    let mut collapsed = 0;
    if total > MARKDOWN_LIMIT {
        let mut by_size: Vec<usize> = (0..blocks.len()).collect();
        by_size.sort_by_key(|&i| std::cmp::Reverse(blocks[i].1.len()));
        let note = "_Diff left out to fit the comment: run `monform plan` to see it._\n\n</details>\n";
        for i in by_size {
            if total <= MARKDOWN_LIMIT - 200 {
                break;
            }
            total -= blocks[i].1.len();
            total += note.len();
            blocks[i].1 = note.to_owned();
            collapsed += 1;
        }
    }
    let mut out = head;
    if collapsed > 0 {
        out.push_str(&format!(
            "\n> {collapsed} of {} diffs were too large for one comment and are left out (largest first).\n",
            blocks.len()
        ));
    }
    for (title, body) in blocks {
        out.push('\n');
        out.push_str(&title);
        out.push_str(&body);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use monform_engine::{FieldChange, Reason};
    use monform_model::{Address, Kind};
    use serde_json::Value;

    fn huge_plan(changes: usize, lines: usize) -> Plan {
        let script = |tag: &str| (0..lines).map(|i| format!("line {i} {tag}\n")).collect::<String>();
        let changes = (0..changes)
            .map(|i| Change {
                address: Address::new(Kind::Snippet, format!("s{i:02}")),
                action: Action::Update,
                remote_id: Some(i.to_string()),
                from: None,
                reason: Reason::ConfigChanged,
                fields: vec![FieldChange {
                    path: "script".into(),
                    before: Some(Value::String(script("old"))),
                    after: Some(Value::String(script(if i == 0 { "new but short" } else { "new" }))),
                    sensitive: false,
                    drift: false,
                    known_after_apply: false,
                    cleared: false,
                    conflict: None,
                }],
                unchanged: 1,
                remote_version: None,
                deferred: None,
            })
            .collect();
        Plan {
            project: "big".into(),
            changes,
            ..Plan::default()
        }
    }

    #[test]
    fn markdown_stays_under_the_comment_limit_collapsing_the_largest_first() {
        let plan = huge_plan(30, 400);
        let text = markdown(&plan);
        assert!(text.len() <= MARKDOWN_LIMIT, "{} characters", text.len());
        assert!(text.contains("diffs were too large for one comment"), "says so");
        assert_eq!(text.matches("<details>").count(), 30, "every resource keeps its block");
    }

    #[test]
    fn small_plans_are_not_collapsed() {
        let text = markdown(&huge_plan(2, 5));
        assert!(!text.contains("too large"));
        assert!(text.contains("```diff\n~ script = <<EOT\n"), "{text}");
    }
}
