//! The plan's rename suggestions and the results its deletes of checks
//! discard (issue 20, item 3), kept apart from the rest of the plan's
//! rendering: one line each, the same words in every format.

use monform_engine::{DISCARD_RANGE as RANGE, Discard, Discarded};

use super::budget::thousands;
use monform_engine::{Plan, SuggestedMove};
use monform_model::{Address, Kind};

/// A quoted address: `checks.api[auth]` unquoted is a YAML list, so the
/// entry would not paste (issue 27 item 2).
fn quoted(address: &Address) -> String {
    format!("{:?}", address.to_string())
}

/// The `moved` entry of one suggestion, in YAML's flow form.
fn entry(from: &Address, to: &Address) -> String {
    format!("{{ from: {}, to: {} }}", quoted(from), quoted(to))
}

/// The advice of one suggestion, with backticks for Markdown and terminals alike.
pub fn sentence(suggestion: &SuggestedMove) -> String {
    let SuggestedMove { from, to, .. } = suggestion;
    let keep = if to.kind == Kind::Check {
        "to keep its results"
    } else {
        "to update it in place"
    };
    format!(
        "`{to}` looks like `{from}` renamed: add `moved: [{}]` {keep}",
        entry(from, to)
    )
}

/// `api[auth]` as (`api`, `auth`).
fn item_of(id: &str) -> Option<(&str, &str)> {
    let (base, rest) = id.split_once('[')?;
    Some((base, rest.strip_suffix(']')?))
}

/// Suggestions as the plan prints them: one per rename, or one per
/// `forEach` definition every item of which was renamed the same way.
pub enum Advice<'p> {
    One(&'p SuggestedMove),
    /// (old definition, new definition, the suggestions in order)
    Every(Address, Address, Vec<&'p SuggestedMove>),
}

pub fn advice(plan: &Plan) -> Vec<Advice<'_>> {
    let mut groups: Vec<(Address, Address, Vec<&SuggestedMove>)> = Vec::new();
    let mut out = Vec::new();
    for s in &plan.suggested_moves {
        let pair = item_of(&s.from.id)
            .zip(item_of(&s.to.id))
            .filter(|((_, a), (_, b))| a == b && s.from.kind == s.to.kind)
            .map(|((from, _), (to, _))| (Address::new(s.from.kind, from), Address::new(s.to.kind, to)));
        match pair {
            Some((from, to)) => match groups.iter_mut().find(|g| g.0 == from && g.1 == to) {
                Some(group) => group.2.push(s),
                None => groups.push((from, to, vec![s])),
            },
            None => out.push(Advice::One(s)),
        }
    }
    for (from, to, members) in groups {
        // Every item of the old definition still in the account is among them.
        let items = plan
            .changes
            .iter()
            .filter(|c| c.address.kind == from.kind && item_of(&c.address.id).is_some_and(|(b, _)| b == from.id))
            .count();
        if members.len() >= 2 && members.len() == items {
            out.push(Advice::Every(from, to, members));
        } else {
            out.extend(members.into_iter().map(Advice::One));
        }
    }
    out
}

/// A group's sentence and its YAML block (without fences or indentation):
/// one entry naming both definitions, which moves every item
/// (`checks.api[k]` to `checks.backend-api[k]`), as a Terraform user writes
/// it for a `for_each` resource; ten renamed items are one line, not ten.
fn every(from: &Address, to: &Address, members: &[&SuggestedMove]) -> (String, Vec<String>) {
    let keep = if to.kind == Kind::Check {
        "to keep their results"
    } else {
        "to update them in place"
    };
    let sentence = format!(
        "every item of `{from}` ({}) looks renamed to the same item of `{to}` ({}): add this `moved` entry, which moves every item, {keep}",
        members.len(),
        members[0].reason
    );
    (sentence, vec!["moved:".to_owned(), format!("  - {}", entry(from, to))])
}

/// What the deletes of checks discard, one sentence each.
fn discards(plan: &Plan) -> Vec<String> {
    match &plan.discarded {
        Discarded::Nothing => Vec::new(),
        Discarded::Unknown(error) => vec![format!(
            "the results of the last 30 days the deleted checks discard are unknown (the report failed: {error})"
        )],
        Discarded::Known(lines) => lines
            .iter()
            .map(|Discard { address, report, estimated }| match report {
                None => format!("deleting `{address}` discards no results (none in the last 30 days)"),
                Some(e) => format!(
                    "deleting `{address}` discards about {} result{} of the last 30 days (estimated from its schedule; success {:.2}%, average {:.0} ms, p95 {:.0} ms)",
                    thousands(*estimated),
                    if *estimated == 1 { "" } else { "s" },
                    e.success_ratio.unwrap_or(0.0) * 100.0,
                    e.avg.unwrap_or(0.0),
                    e.p95.unwrap_or(0.0)
                ),
            })
            .collect(),
    }
}

/// The block a terminal plan shows before its summary, or nothing.
pub fn human(plan: &Plan) -> String {
    let suggestions = advice(plan).into_iter().map(|a| match a {
        Advice::One(s) => format!("Suggestion: {} ({}).\n", sentence(s), s.reason),
        Advice::Every(from, to, members) => {
            let (sentence, yaml) = every(&from, &to, &members);
            let block: String = yaml.iter().map(|l| format!("  {l}\n")).collect();
            format!("Suggestion: {sentence}:\n{block}")
        }
    });
    let discards = discards(plan).into_iter().map(|d| format!("Results: {d}.\n"));
    suggestions.chain(discards).collect()
}

/// The Markdown section, or nothing.
pub fn markdown(plan: &Plan) -> String {
    if plan.suggested_moves.is_empty() {
        return String::new();
    }
    let mut out = String::from("\n#### Possible renames\n\n");
    for a in advice(plan) {
        match a {
            Advice::One(s) => out.push_str(&format!("- {} ({}).\n", sentence(s), s.reason)),
            Advice::Every(from, to, members) => {
                let (sentence, yaml) = every(&from, &to, &members);
                out.push_str(&format!("- {sentence}:\n\n  ```yaml\n"));
                out.extend(yaml.iter().map(|l| format!("  {l}\n")));
                out.push_str("  ```\n");
            }
        }
    }
    out
}

/// The Markdown section on discarded results, or nothing.
pub fn markdown_discards(plan: &Plan) -> String {
    let lines = discards(plan);
    if lines.is_empty() {
        return String::new();
    }
    let mut out = String::from("\n#### Results discarded\n\n");
    for line in lines {
        out.push_str(&format!("- {line}.\n"));
    }
    out
}

/// What a plan's deletes of checks discard: their results of the range.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DiscardedJson {
    /// The report's range (`last30Days`).
    pub range: &'static str,
    /// Whether the report could be read (else `error` says why).
    pub known: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Per deleted check, when `known`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checks: Option<Vec<DiscardJson>>,
}

/// One deleted check's results.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DiscardJson {
    pub address: String,
    pub has_results: bool,
    /// About how many results (an estimate; 0 without results).
    pub estimated_results: u64,
    pub success_ratio: Option<f64>,
    /// Milliseconds.
    pub avg: Option<f64>,
    /// Milliseconds.
    pub p95: Option<f64>,
}

/// `discardedResults` of the plan's JSON: `None` when it deletes no check.
pub fn json_discards(plan: &Plan) -> Option<DiscardedJson> {
    match &plan.discarded {
        Discarded::Nothing => None,
        Discarded::Unknown(error) => Some(DiscardedJson {
            range: RANGE,
            known: false,
            error: Some(error.clone()),
            checks: None,
        }),
        Discarded::Known(lines) => {
            let checks = lines
                .iter()
                .map(
                    |Discard {
                         address,
                         report,
                         estimated,
                     }| DiscardJson {
                        address: address.to_string(),
                        has_results: report.is_some(),
                        estimated_results: *estimated,
                        success_ratio: report.as_ref().and_then(|e| e.success_ratio),
                        avg: report.as_ref().and_then(|e| e.avg),
                        p95: report.as_ref().and_then(|e| e.p95),
                    },
                )
                .collect();
            Some(DiscardedJson {
                range: RANGE,
                known: true,
                error: None,
                checks: Some(checks),
            })
        }
    }
}

/// A rename the plan suggests.
#[derive(serde::Serialize, schemars::JsonSchema)]
pub struct MoveJson {
    pub from: String,
    pub to: String,
    /// Why the two look like one object.
    pub reason: String,
}

/// `suggestedMoves` of the plan's JSON.
pub fn json(plan: &Plan) -> Vec<MoveJson> {
    plan.suggested_moves
        .iter()
        .map(|s| MoveJson {
            from: s.from.to_string(),
            to: s.to.to_string(),
            reason: s.reason.clone(),
        })
        .collect()
}
