//! What a status page shows (spec 2.11): its theme, its cards with each
//! service's state (operational, or the severity of its worst open
//! incident), the open incidents with their updates and the incidents of
//! the last 30 days. Pages are public by `url` or `customDomain`, across
//! accounts; rendering them is `routes::pages`.
//!
//! The names the public reaches (a status page's `url` and `customDomain`,
//! a dashboard's `customUrl`) are one namespace for all accounts, as the
//! service's subdomains are ([`check_public_names`]): the account that
//! takes one first keeps it, so no other account can serve its own page
//! under a name people know as someone else's.

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::{Value, json};

use crate::clock::iso;
use crate::domain::incidents::INCIDENTS;
use crate::error::{ApiError, ApiResult};
use crate::ids::id_text;
use crate::store::Objects;
use monform_model::Kind;

/// How far back the page lists resolved incidents.
const HISTORY_MS: i64 = 30 * 24 * 3600 * 1000;

/// The page whose `url` (or `customDomain`) is `value`, and its account.
pub fn find(db: &Connection, field: &str, value: &str) -> rusqlite::Result<Option<(String, Value)>> {
    let found: Option<(String, String)> = db
        .prepare_cached(
            "SELECT account_id, body FROM objects WHERE kind = ?1 AND json_extract(body, ?2) = ?3
             ORDER BY seq LIMIT 1",
        )?
        .query_row(params![Kind::StatusPage.section(), format!("$.{field}"), value], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .optional()?;
    Ok(found.and_then(|(account, body)| Some((account, serde_json::from_str(&body).ok()?))))
}

/// The fields of `kind` whose values are public names, unique across accounts.
fn public_names(kind: Kind) -> &'static [&'static str] {
    match kind {
        Kind::StatusPage => &["url", "customDomain"],
        Kind::Dashboard => &["customUrl"],
        _ => &[],
    }
}

/// 409 when another object, of any account, holds one of the public names
/// of `stored` (the object `except` itself, being updated, aside). Custom
/// domains compare without case, as host names do. The answer does not
/// say whose it is.
pub fn check_public_names(
    db: &Connection,
    account: &str,
    kind: Kind,
    stored: &Value,
    except: Option<&str>,
) -> ApiResult<()> {
    for field in public_names(kind) {
        let Some(value) = stored[*field].as_str().filter(|v| !v.is_empty()) else {
            continue;
        };
        let (column, wanted) = if *field == "customDomain" {
            (format!("lower(json_extract(body, '$.{field}'))"), value.to_lowercase())
        } else {
            (format!("json_extract(body, '$.{field}')"), value.to_owned())
        };
        // By the (kind, ts) index: the objects of this kind, every account.
        let holders: Vec<(String, String)> = db
            .prepare_cached(&format!(
                "SELECT account_id, id FROM objects WHERE kind = ?1 AND {column} = ?2"
            ))?
            .query_map(params![kind.section(), wanted], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?;
        let taken = holders
            .iter()
            .any(|(holder, id)| !(holder == account && except == Some(id.as_str())));
        if taken {
            return Err(ApiError::conflict(format!("{field} {value} is already taken")));
        }
    }
    Ok(())
}

/// The severities, least severe first, with how the page words them.
const SEVERITIES: [(&str, &str); 4] = [
    ("MINOR", "Degraded performance"),
    ("MEDIUM", "Partial outage"),
    ("MAJOR", "Major outage"),
    ("CRITICAL", "Critical outage"),
];

fn rank(severity: &Value) -> usize {
    SEVERITIES
        .iter()
        .position(|(s, _)| severity.as_str() == Some(*s))
        .unwrap_or(0)
}

fn severity_text(severity: &Value) -> &'static str {
    SEVERITIES[rank(severity)].1
}

fn severity_class(severity: &Value) -> String {
    SEVERITIES[rank(severity)].0.to_lowercase()
}

/// The light palette when a page sets no colours, and the dark one.
fn default_palette(dark: bool) -> Value {
    let [body, header, text, muted, card, border, accent] = if dark {
        [
            "#0F172A", "#111827", "#F8FAFC", "#CBD5E1", "#1E293B", "#334155", "#2563EB",
        ]
    } else {
        [
            "#FFFFFF", "#F8FAFC", "#0F172A", "#475569", "#FFFFFF", "#E2E8F0", "#1D4ED8",
        ]
    };
    json!({
        "bodyBackgroundColor": body, "headerBackgroundColor": header, "headerFontColor": text,
        "titleFontColor": text, "bodyFontColor": text, "bodyFontColorMuted": muted,
        "navigationFontColor": text, "linkFontColor": accent, "cardBackgroundColor": card,
        "borderColor": border, "primaryButtonBackgroundColor": accent, "primaryButtonFontColor": "#FFFFFF",
    })
}

/// Everything the page template shows, at `now` (ms).
pub fn view(db: &Connection, account: &str, page: &Value, now: i64) -> rusqlite::Result<Value> {
    let incidents = db.records(account, INCIDENTS, None, now - HISTORY_MS, i64::MAX)?;
    let is_open = |i: &Value| i["lastUpdateStatus"] != "RESOLVED";
    let serves = |i: &Value, service: &str| {
        i["services"]
            .as_array()
            .is_some_and(|l| l.iter().any(|s| id_text(&s["id"]) == service))
    };
    let mut cards = Vec::new();
    for card in page["cards"].as_array().into_iter().flatten() {
        let mut services = Vec::new();
        for service in card["services"].as_array().into_iter().flatten() {
            let id = id_text(&service["id"]);
            let name = match db.get(account, Kind::StatusPageService.section(), &id)? {
                Some(stored) => stored["name"].clone(),
                None => service["name"].clone(),
            };
            let worst = incidents
                .iter()
                .map(|r| &r.body)
                .filter(|i| is_open(i) && serves(i, &id))
                .max_by_key(|i| rank(&i["severity"]));
            let (state_text, state_class) = match worst {
                Some(incident) => (
                    severity_text(&incident["severity"]).to_owned(),
                    severity_class(&incident["severity"]),
                ),
                None => ("Operational".to_owned(), "operational".to_owned()),
            };
            services.push(json!({ "name": name, "state_text": state_text, "state_class": state_class }));
        }
        cards.push(json!({ "name": card["name"], "services": services }));
    }
    let shown = |incident: &Value| {
        let services: Vec<&str> = incident["services"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s["name"].as_str())
            .collect();
        let mut updates: Vec<Value> = incident["incidentUpdates"].as_array().cloned().unwrap_or_default();
        updates.reverse();
        for update in &mut updates {
            update["created_text"] = json!(when(&update["created_at"], now));
        }
        json!({
            "id": incident["id"],
            "name": incident["name"],
            "severity_text": severity_text(&incident["severity"]),
            "severity_class": severity_class(&incident["severity"]),
            "services": services.join(", "),
            "created_at": incident["created_at"],
            "created_text": when(&incident["created_at"], now),
            "duration": duration(incident["duration"].as_i64().unwrap_or(0)),
            "updates": updates,
        })
    };
    let open: Vec<Value> = incidents
        .iter()
        .map(|r| &r.body)
        .filter(|i| is_open(i))
        .map(shown)
        .collect();
    let past: Vec<Value> = incidents
        .iter()
        .map(|r| &r.body)
        .filter(|i| !is_open(i))
        .map(shown)
        .collect();
    // The banner says the worst open incident, in its severity's colour.
    let (summary, summary_class) = match incidents
        .iter()
        .map(|r| &r.body)
        .filter(|i| is_open(i))
        .max_by_key(|i| rank(&i["severity"]))
    {
        Some(worst) => (
            format!(
                "{}: {} open {}",
                severity_text(&worst["severity"]),
                open.len(),
                if open.len() == 1 { "incident" } else { "incidents" }
            ),
            severity_class(&worst["severity"]),
        ),
        None => ("All systems operational".to_owned(), "operational".to_owned()),
    };
    let light = page["themeColors"]["light"].clone();
    let dark = page["themeColors"]["dark"].clone();
    let light = if light.is_object() {
        light
    } else {
        default_palette(false)
    };
    let dark = if dark.is_object() { dark } else { default_palette(true) };
    // LIGHT and DARK pin one palette; AUTO follows the reader's preference.
    let (theme, dark, scheme) = match page["defaultTheme"].as_str() {
        Some("LIGHT") => (light, Value::Null, "light"),
        Some("DARK") => (dark, Value::Null, "dark"),
        _ => (light, dark, "light dark"),
    };
    Ok(json!({
        "page": page,
        "theme": theme,
        "dark": dark,
        "color_scheme": scheme,
        "summary": summary,
        "summary_class": summary_class,
        "cards": cards,
        "open_incidents": open,
        "past_incidents": past,
        "now": iso(now),
    }))
}

/// A date-time as people read it on a status page, `25 Nov 2026, 17:28 UTC
/// (3 hours ago)`, at `now` (ms); as it came when it is not one.
fn when(at: &Value, now: i64) -> String {
    let text = at.as_str().unwrap_or_default();
    let Some(time) = crate::clock::parse(text) else {
        return text.to_owned();
    };
    let ago = (now - time.timestamp_millis()).max(0) / 1000;
    let plural = |n: i64, unit: &str| format!("{n} {unit}{} ago", if n == 1 { "" } else { "s" });
    let relative = match ago {
        0..60 => "just now".to_owned(),
        60..3600 => plural(ago / 60, "minute"),
        3600..86_400 => plural(ago / 3600, "hour"),
        86_400..172_800 => "yesterday".to_owned(),
        _ => plural(ago / 86_400, "day"),
    };
    format!("{} ({relative})", time.format("%-d %b %Y, %H:%M UTC"))
}

/// `3,700` seconds as "1 h 1 min".
fn duration(seconds: i64) -> String {
    let (hours, minutes) = (seconds / 3600, (seconds % 3600) / 60);
    match (hours, minutes) {
        (0, 0) => format!("{seconds} s"),
        (0, m) => format!("{m} min"),
        (h, m) => format!("{h} h {m} min"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_read_as_dates_and_how_long_ago() {
        let at = json!("2026-11-25T17:28:03.000Z");
        let base = crate::clock::parse("2026-11-25T17:28:03.000Z")
            .unwrap()
            .timestamp_millis();
        assert_eq!(when(&at, base + 5_000), "25 Nov 2026, 17:28 UTC (just now)");
        assert_eq!(when(&at, base + 60_000), "25 Nov 2026, 17:28 UTC (1 minute ago)");
        assert_eq!(when(&at, base + 3 * 3_600_000), "25 Nov 2026, 17:28 UTC (3 hours ago)");
        assert_eq!(when(&at, base + 30 * 3_600_000), "25 Nov 2026, 17:28 UTC (yesterday)");
        assert_eq!(when(&at, base + 5 * 86_400_000), "25 Nov 2026, 17:28 UTC (5 days ago)");
        assert_eq!(when(&json!("soon"), base), "soon");
    }

    #[test]
    fn durations_read_as_people_say_them() {
        assert_eq!(duration(42), "42 s");
        assert_eq!(duration(600), "10 min");
        assert_eq!(duration(3700), "1 h 1 min");
    }
}
