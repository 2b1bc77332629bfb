//! A plan for people (Terraform-like): the summary line, the change
//! blocks and their field diffs. The same plan for machines is `json`'s
//! (versioned JSON), for pull requests `markdown`'s.

use monform_config::Desired;
use monform_engine::{Action, Change, FieldChange, Plan, Refresh};
use monform_model::Kind;
use monform_model::sensitive::holds_mask;
use serde_json::Value;
use similar::TextDiff;

mod json;
mod markdown;
pub use json::{PlanJson, json};
pub use markdown::{markdown, markdown_in};

/// One line of a change's body.
struct Line {
    sign: char,
    text: String,
}

/// ANSI colours, or none.
#[derive(Clone, Copy)]
pub struct Style {
    pub color: bool,
}

impl Style {
    fn paint(self, text: &str, code: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }
    fn for_sign(self, sign: char, text: &str) -> String {
        match sign {
            '+' => self.paint(text, "32"),
            '-' => self.paint(text, "31"),
            '~' => self.paint(text, "33"),
            '±' => self.paint(text, "35"),
            _ => text.to_owned(),
        }
    }
}

fn symbol(action: Action) -> &'static str {
    match action {
        Action::Create => "+",
        Action::Update => "~",
        Action::Delete => "-",
        Action::Replace => "-/+",
        Action::Import => "<=",
        Action::Forget => ".",
        Action::Move | Action::Noop => " ",
    }
}

fn verb(action: Action) -> &'static str {
    match action {
        Action::Create => "will be created",
        Action::Update => "will be updated in place",
        Action::Delete => "will be deleted",
        Action::Replace => "must be replaced",
        Action::Move => "has moved",
        Action::Import => "will be imported",
        Action::Forget => "will be forgotten",
        Action::Noop => "is up to date",
    }
}

/// The closing line of every plan.
pub fn summary_line(plan: &Plan) -> String {
    let s = plan.summary();
    if !s.has_changes() {
        return "No changes. Your monitors match the configuration.".to_owned();
    }
    let mut line = format!(
        "Plan: {} to create, {} to update, {} to delete, {} to replace",
        s.create, s.update, s.delete, s.replace
    );
    // The declarative actions only when there are some, as Terraform does.
    for (count, text) in [(s.import, "to import"), (s.moved, "moved"), (s.forget, "to forget")] {
        if count > 0 {
            line.push_str(&format!(", {count} {text}"));
        }
    }
    if s.conflict > 0 {
        line.push_str(&format!(", {}", conflicts(s.conflict)));
    }
    line.push('.');
    line
}

/// "1 conflict", "2 conflicts".
fn conflicts(count: usize) -> String {
    format!("{count} conflict{}", if count == 1 { "" } else { "s" })
}

/// What a plan with conflicts overwrites, in a sentence; `None` without.
pub fn conflict_note(plan: &Plan) -> Option<String> {
    let count = plan.summary().conflict;
    let note = match count {
        0 => return None,
        1 => "Conflict: 1 field changed both in the files and in the service since the last apply; applying overwrites the service's value with the files'. To keep the service's, put it in the files (`monform codify` shows where).".to_owned(),
        n => format!("Conflicts: {n} fields changed both in the files and in the service since the last apply; applying overwrites the service's values with the files'. To keep the service's, put them in the files (`monform codify` shows where)."),
    };
    Some(note)
}

/// What a partial refresh did not check, in a sentence; `None` when
/// everything was read.
pub fn refresh_note(plan: &Plan) -> Option<String> {
    let n = plan.refreshed.not_refreshed;
    let objects = if n == 1 {
        "1 object".to_owned()
    } else {
        format!("{n} objects")
    };
    match plan.refreshed.mode {
        Refresh::All => None,
        Refresh::Changed if n == 0 => None,
        Refresh::Changed => Some(format!(
            "Not refreshed (--refresh=changed): {objects} the files did not change since the last apply {} not read from the service; their drift was not checked.",
            if n == 1 { "was" } else { "were" }
        )),
        Refresh::None => Some(format!(
            "Offline (--refresh=none): nothing was read from the service; {objects} planned from the state alone, their drift not checked (changed fields show only their new value)."
        )),
        Refresh::Rolling if n == 0 => None,
        Refresh::Rolling => Some(format!(
            "Rolling refresh (monform reconcile): {objects} not read in this part of the sweep {} planned from the state; each is read once a sweep.",
            if n == 1 { "was" } else { "were" }
        )),
    }
}

fn show(value: &Value) -> String {
    match value {
        Value::String(s) => format!("{s:?}"),
        other => other.to_string(),
    }
}

fn is_multiline(value: Option<&Value>) -> bool {
    value.and_then(Value::as_str).is_some_and(|s| s.contains('\n'))
}

/// The body lines of one change, whose fields are `fields`.
fn lines(plan: &Plan, change: &Change, fields: &[FieldChange]) -> Vec<Line> {
    let mut out = Vec::new();
    let sign = match change.action {
        Action::Create => '+',
        Action::Delete => '-',
        _ => '~',
    };
    let width = fields.iter().map(|f| f.path.len()).max().unwrap_or(0);
    for field in fields {
        out.extend(field_lines(plan, change, sign, field, width));
    }
    if change.unchanged > 0 && matches!(change.action, Action::Update | Action::Replace) {
        out.push(Line {
            sign: ' ',
            text: format!("({} unchanged fields hidden)", change.unchanged),
        });
    }
    out
}

fn field_lines(plan: &Plan, change: &Change, sign: char, field: &FieldChange, width: usize) -> Vec<Line> {
    let action = change.action;
    let name = format!("{:width$}", field.path);
    if field.sensitive {
        let text = match (action, field.drift, &field.conflict) {
            (Action::Create, ..) => format!("{name} = (sensitive)"),
            // A secret variable set outside monform: the service never
            // returns its value, its version tells.
            (_, true, _) if change.address.kind == Kind::Variable => {
                format!("{name} = (sensitive)  # drift: changed in the service; value not readable")
            }
            (_, _, Some(_)) => format!("{name} = (sensitive value changed){}", drift_mark(field, true)),
            _ => format!("{name} = (sensitive value changed)"),
        };
        return vec![Line { sign, text }];
    }
    if is_multiline(field.before.as_ref()) || is_multiline(field.after.as_ref()) {
        let before = field.before.as_ref().and_then(Value::as_str).unwrap_or("");
        let after = field.after.as_ref().and_then(Value::as_str).unwrap_or("");
        let mut out = vec![Line {
            sign,
            text: format!("{} = <<EOT{}", field.path, drift_mark(field, false)),
        }];
        if action == Action::Create {
            out.extend(after.lines().map(|l| Line {
                sign: '+',
                text: format!("    {l}"),
            }));
        } else {
            let diff = TextDiff::from_lines(before, after);
            for hunk in diff.unified_diff().context_radius(2).iter_hunks() {
                out.push(Line {
                    sign: ' ',
                    text: format!("    {}", hunk.header()),
                });
                for change in hunk.iter_changes() {
                    let sign = match change.tag() {
                        similar::ChangeTag::Delete => '-',
                        similar::ChangeTag::Insert => '+',
                        similar::ChangeTag::Equal => ' ',
                    };
                    out.push(Line {
                        sign,
                        text: format!("    {}", change.value().trim_end_matches('\n')),
                    });
                }
            }
        }
        out.push(Line {
            sign: ' ',
            text: "EOT".to_owned(),
        });
        return out;
    }
    let note = if field.known_after_apply {
        " (known after apply)".to_owned()
    } else {
        drift_mark(field, false)
    };
    let head = format!("{name} = [{note}");
    // A created list of plain values reads best on one line, as before; a
    // list of objects, or any list that changes, item by item.
    let has_objects = [&field.before, &field.after]
        .into_iter()
        .flatten()
        .filter_map(Value::as_array)
        .any(|items| items.iter().any(Value::is_object));
    let by_item = action != Action::Create || has_objects;
    if let Some(items) = Some(())
        .filter(|_| by_item)
        .and_then(|_| super::lists::lines(plan, change, field, sign, &head))
    {
        return items.into_iter().map(|(sign, text)| Line { sign, text }).collect();
    }
    let after = field.after.as_ref().map(show).unwrap_or_else(|| "null".to_owned());
    // A value on one line has room for the conflict's three values.
    let note = match field.known_after_apply {
        true => note,
        false => drift_mark(field, true),
    };
    let text = match (&field.before, action) {
        (_, Action::Create) | (None, _) => format!("{name} = {after}{note}"),
        (Some(before), _) => format!("{name} = {} -> {after}{note}", show(before)),
    };
    vec![Line { sign, text }]
}

/// How a field changed outside monform is told apart from a file edit;
/// a conflict (changed in both) with its three values when `values` and
/// they fit on a line.
fn drift_mark(field: &FieldChange, values: bool) -> String {
    if let Some(conflict) = &field.conflict {
        let one_line = |v: &Value| !v.is_array() && !v.is_object() && !is_multiline(Some(v));
        let shown = [
            conflict.applied.as_ref(),
            conflict.service.as_ref(),
            Some(&conflict.files),
        ];
        if values && shown.iter().flatten().all(|v| one_line(v)) {
            // A secret's fingerprint reads as the masks do, unquoted.
            let value = |v: &Value| match v.as_str() {
                Some(text) if holds_mask(v) => text.to_owned(),
                _ => show(v),
            };
            let applied = conflict
                .applied
                .as_ref()
                .map_or_else(|| "(not recorded)".to_owned(), value);
            let service = conflict
                .service
                .as_ref()
                .map_or_else(|| "(not readable)".to_owned(), value);
            let files = files_shown(conflict, value);
            return format!(
                "  # conflict: applied {applied}, service {service} (changed outside monform), files {files}"
            );
        }
        return "  # conflict: changed outside monform and in the files since the last apply".to_owned();
    }
    if field.drift {
        "  # drift: changed outside monform".to_owned()
    } else {
        String::new()
    }
}

/// A conflict's files' value, `(default)` when the files leave the field
/// out (`20000 (default)`; `(default)` alone for a field without one).
pub(super) fn files_shown(conflict: &monform_engine::Conflict, value: impl Fn(&Value) -> String) -> String {
    match (conflict.files_default, conflict.files.is_null()) {
        (true, true) => "(default)".to_owned(),
        (true, false) => format!("{} (default)", value(&conflict.files)),
        (false, _) => value(&conflict.files),
    }
}

fn header(change: &Change) -> String {
    if let (Action::Move, Some(from)) = (change.action, &change.from) {
        return format!("# {from} has moved to {}", change.address);
    }
    let moved = change
        .from
        .as_ref()
        .map(|from| format!("\n  # (moved from {from})"))
        .unwrap_or_default();
    let id = change
        .remote_id
        .as_deref()
        .map(|id| format!(", id {id}"))
        .unwrap_or_default();
    format!(
        "# {} {} ({}{id}){moved}",
        change.address,
        verb(change.action),
        change.reason.text()
    )
}

const GROUPS: [Action; 7] = [
    Action::Move,
    Action::Import,
    Action::Forget,
    Action::Create,
    Action::Update,
    Action::Replace,
    Action::Delete,
];

/// The plan for a terminal.
pub fn human(plan: &Plan, style: Style) -> String {
    let mut out = String::new();
    // Writing into a String cannot fail.
    let _ = write_human(plan, None, style, &mut out);
    out
}

/// The plan for a terminal, written to `out` change by change: a cold
/// apply of 10,000 checks prints 11 MB of plan, which is not worth holding
/// as one string beside the plan itself (`apply` streams it to stdout).
/// With `desired` (the files it was planned from), each create's fields
/// are built as it is written (an apply's plan keeps none).
pub fn write_human(
    plan: &Plan,
    desired: Option<&Desired>,
    style: Style,
    out: &mut impl std::fmt::Write,
) -> std::fmt::Result {
    let actionable: Vec<&Change> = plan.changes.iter().filter(|c| c.action != Action::Noop).collect();
    if !actionable.is_empty() {
        out.write_str("monform will perform these actions:\n")?;
    }
    for group in GROUPS {
        for change in actionable.iter().filter(|c| c.action == group) {
            out.write_char('\n')?;
            let mut head = format!("  {}", header(change));
            if change.reason.is_drift() {
                head = style.paint(&head, "1");
            }
            out.write_str(&head)?;
            out.write_char('\n')?;
            let sign = symbol(change.action);
            let colored = style.for_sign(
                if change.action == Action::Replace {
                    '±'
                } else {
                    sign.chars().next().unwrap_or(' ')
                },
                sign,
            );
            let fields = match desired {
                Some(desired) => change.fields_in(desired),
                None => std::borrow::Cow::Borrowed(&change.fields[..]),
            };
            let body = lines(plan, change, &fields);
            if body.is_empty() {
                writeln!(out, "  {colored} {}", change.address)?;
                continue;
            }
            writeln!(out, "  {colored} {} {{", change.address)?;
            for line in body {
                let sign = style.for_sign(line.sign, &line.sign.to_string());
                writeln!(out, "      {sign} {}", line.text)?;
            }
            out.write_str("    }\n")?;
        }
    }
    if !actionable.is_empty() {
        out.write_char('\n')?;
    }
    out.write_str(&super::renames::human(plan))?;
    out.write_str(&excluded_human(plan))?;
    out.write_str(&summary_line(plan))?;
    out.write_char('\n')?;
    if let Some(note) = conflict_note(plan) {
        out.write_str(&style.paint(&note, "1;33"))?;
        out.write_char('\n')?;
    }
    if let Some(note) = refresh_note(plan) {
        out.write_str(&style.paint(&note, "33"))?;
        out.write_char('\n')?;
    }
    Ok(())
}

/// `std::fmt::Write` over a byte stream (stdout, stderr), for
/// [`write_human`]; the stream's own error is kept for the caller.
pub struct IoText<W: std::io::Write> {
    pub inner: W,
    pub error: Option<std::io::Error>,
}

impl<W: std::io::Write> IoText<W> {
    pub fn new(inner: W) -> IoText<W> {
        IoText { inner, error: None }
    }
}

impl<W: std::io::Write> std::fmt::Write for IoText<W> {
    fn write_str(&mut self, text: &str) -> std::fmt::Result {
        self.inner.write_all(text.as_bytes()).map_err(|e| {
            self.error = Some(e);
            std::fmt::Error
        })
    }
}

/// The changes `--exclude` left out, each with why (also in Markdown).
fn excluded_human(plan: &Plan) -> String {
    if plan.excluded.is_empty() {
        return String::new();
    }
    let mut out = format!("Excluded ({}), not planned:\n", plan.excluded.len());
    for excluded in &plan.excluded {
        out.push_str(&format!(
            "  {} {} ({})\n",
            symbol(excluded.action),
            excluded.address,
            excluded.by.text()
        ));
    }
    out.push('\n');
    out
}

/// The objects whose ownership tag the next apply rewrites after
/// `monform state mv`: not changes (nothing else about them differs), but
/// worth saying.
pub fn moved_note(actual: &monform_engine::Actual, plan: &monform_engine::Plan) -> String {
    let mut moved = actual.moved(&plan.project);
    moved.retain(|m| plan.changes.iter().any(|c| c.address == m.address && c.from.is_none()));
    if moved.is_empty() {
        return String::new();
    }
    let mut note = String::from("Moved by `monform state mv` (the next apply rewrites their ownership tag):\n");
    for m in moved {
        let from = m.from.map_or_else(
            || "no tag".to_owned(),
            |id| format!("tag of {}.{id}", m.address.kind.section()),
        );
        note.push_str(&format!("  {} (has the {from})\n", m.address));
    }
    note.push('\n');
    note
}
