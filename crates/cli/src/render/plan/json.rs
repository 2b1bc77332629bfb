//! The plan for machines: the versioned JSON of design.md.

use monform_engine::{Action, Plan, Refresh};
use serde_json::{Value, json};

/// The versioned JSON of design.md: stable key order, no secrets.
pub fn json(plan: &Plan) -> Value {
    let changes: Vec<Value> = plan
        .changes
        .iter()
        .filter(|c| c.action != Action::Noop)
        .map(|c| {
            let mut change = json!({
                "address": c.address.to_string(),
                "action": c.action,
                "remoteId": c.remote_id,
                "reason": c.reason.text(),
                "fields": c.fields.iter().map(|f| {
                    let mut field = json!({
                        "path": f.path, "before": f.before, "after": f.after, "sensitive": f.sensitive,
                        "drift": f.drift,
                    });
                    // Changed in the files and in the service: the three values (masked as before and after are).
                    if let Some(conflict) = &f.conflict {
                        field["conflict"] = json!({"applied": conflict.applied, "service": conflict.service, "files": conflict.files});
                        // Taken out of the files: `files` is the model's default (null: none).
                        if conflict.files_default {
                            field["conflict"]["filesDefault"] = json!(true);
                        }
                    }
                    // Item by item as well, for lists (never for a sensitive field).
                    if let Some(items) = Some(f).filter(|f| !f.sensitive && matches!(c.action, Action::Update | Action::Replace)).and_then(|f| crate::render::lists::json_items(plan, c, f)) {
                        field["items"] = items;
                    }
                    field
                }).collect::<Vec<_>>(),
            });
            if let Some(from) = &c.from {
                change["from"] = json!(from.to_string());
            }
            change
        })
        .collect();
    let mut out = json!({
        "formatVersion": 1,
        "project": plan.project,
        "summary": plan.summary(),
        "changes": changes,
        "suggestedMoves": crate::render::renames::json(plan),
    });
    if let Some(discarded) = crate::render::renames::json_discards(plan) {
        out["discardedResults"] = discarded;
    }
    // Only after a partial refresh: a full plan's JSON is as it was.
    if plan.refreshed.mode != Refresh::All {
        out["refresh"] = json!({
            "mode": plan.refreshed.mode.as_str(),
            "notRefreshed": plan.refreshed.not_refreshed,
            "driftChecked": plan.refreshed.mode == Refresh::Changed && plan.refreshed.not_refreshed == 0,
        });
    }
    if !plan.excluded.is_empty() {
        let excluded: Vec<Value> = plan
            .excluded
            .iter()
            .map(|e| json!({"address": e.address.to_string(), "action": e.action, "reason": e.by.text()}))
            .collect();
        out["excluded"] = Value::Array(excluded);
    }
    out
}
