//! OpenSLO v1 in and out (issue 50.6): each SLO of the files as an SLI,
//! an SLO and (with alerting) an AlertPolicy document; and back, OpenSLO
//! documents as a `slos:` resource file. What OpenSLO has no field for
//! (member checks, tags, the latency threshold) travels in the SLI's
//! `metricSource` of type `monform`. Written by hand, in one fixed order
//! and quoting, so export -> import -> export is byte-identical.

use monform_config::Desired;
use monform_model::Resource;
use monform_model::resources::Slo;
use monform_model::resources::slo::{SloBudgeting, SloCalendar, SloIndicator};
use serde_json::Value;

/// Why an OpenSLO file cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum OpenSloError {
    #[error("not OpenSLO YAML: {0}")]
    Yaml(String),
    #[error("document {index} ({kind} {name}): {problem}")]
    Document {
        index: usize,
        kind: String,
        name: String,
        problem: String,
    },
}

/// `99.5` as OpenSLO's `0.995`, by moving the decimal point in the text
/// (a float division would print 0.9949999999999999).
fn ratio_text(percent: f64) -> String {
    shift(&format!("{percent}"), -2)
}

/// `0.995` as `99.5`.
fn percent_text(ratio: f64) -> String {
    shift(&format!("{ratio}"), 2)
}

/// Moves the decimal point of a plain decimal text by `places`.
fn shift(text: &str, places: i32) -> String {
    let (int, frac) = text.split_once('.').unwrap_or((text, ""));
    let digits = format!("{int}{frac}");
    let point = int.len() as i32 + places;
    let (int, frac) = if point <= 0 {
        ("0".to_owned(), format!("{}{digits}", "0".repeat((-point) as usize)))
    } else if point as usize >= digits.len() {
        (
            format!("{digits}{}", "0".repeat(point as usize - digits.len())),
            String::new(),
        )
    } else {
        (digits[..point as usize].to_owned(), digits[point as usize..].to_owned())
    };
    let int = int.trim_start_matches('0');
    let int = if int.is_empty() { "0" } else { int };
    let frac = frac.trim_end_matches('0');
    if frac.is_empty() {
        int.to_owned()
    } else {
        format!("{int}.{frac}")
    }
}

/// A YAML scalar for `text`: plain when that reads back as the same
/// string, else double-quoted (JSON's quoting is YAML's).
fn scalar(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, ' ' | '_' | '-' | '.' | '/'))
        && !text.starts_with(['-', ' ', '.'])
        && !text.ends_with(' ')
        && text.parse::<f64>().is_err()
        && !matches!(text, "true" | "false" | "null" | "yes" | "no" | "on" | "off" | "~");
    if plain {
        text.to_owned()
    } else {
        Value::String(text.to_owned()).to_string()
    }
}

fn list(items: &[String]) -> String {
    let items: Vec<String> = items.iter().map(|i| scalar(i)).collect();
    format!("[{}]", items.join(", "))
}

/// The SLOs of the files as OpenSLO v1 documents, in address order.
pub fn export_openslo(desired: &Desired, service: &str) -> String {
    let mut documents = Vec::new();
    for (address, resource) in &desired.resources {
        let Resource::Slo(slo) = resource.resource.as_ref() else {
            continue;
        };
        documents.extend(documents_of(&address.id, slo, service));
    }
    documents.join("---\n")
}

fn documents_of(id: &str, slo: &Slo, service: &str) -> Vec<String> {
    let display = slo.display_name(id);
    let mut source = String::new();
    let checks: Vec<String> = slo.checks.iter().flatten().map(|c| c.0.clone()).collect();
    if !checks.is_empty() {
        source.push_str(&format!("          checks: {}\n", list(&checks)));
    }
    if let Some(tags) = &slo.tags {
        source.push_str(&format!("          tags: {}\n", list(tags)));
    }
    source.push_str(&format!("          indicator: {}\n", slo.indicator.as_str()));
    if let Some(threshold) = slo.threshold {
        source.push_str(&format!("          threshold: {threshold}\n"));
    }
    if slo.enforce {
        source.push_str("          enforce: true\n");
    }
    let metric = |part: &str| {
        format!(
            "    {part}:\n      metricSource:\n        type: monform\n        spec:\n{source}          count: {part}\n"
        )
    };
    let sli = format!(
        "apiVersion: openslo/v1\nkind: SLI\nmetadata:\n  name: {}\n  displayName: {}\nspec:\n  ratioMetric:\n    counter: true\n{}{}",
        scalar(id),
        scalar(display),
        metric("good"),
        metric("total"),
    );
    let window = match (&slo.window, slo.calendar) {
        (_, Some(SloCalendar::Month)) => {
            "  timeWindow:\n    - duration: 1M\n      isRolling: false\n      calendar:\n        startTime: \"2020-01-01 00:00:00\"\n        timeZone: UTC\n".to_owned()
        }
        (Some(window), None) => format!("  timeWindow:\n    - duration: {window}\n      isRolling: true\n"),
        (None, None) => String::new(),
    };
    let budgeting = match slo.budgeting {
        SloBudgeting::Occurrences => "Occurrences",
        SloBudgeting::Timeslices => "Timeslices",
    };
    let mut objective = format!(
        "    - displayName: {}\n      target: {}\n",
        scalar(display),
        ratio_text(slo.target)
    );
    if let Some(slice) = &slo.timeslice {
        let slice_target = slo.timeslice_target.unwrap_or(100.0);
        objective.push_str(&format!(
            "      timeSliceTarget: {}\n      timeSliceWindow: {slice}\n",
            ratio_text(slice_target)
        ));
    }
    let policy_name = format!("{id}-burn-rate");
    let mut slo_doc = format!(
        "apiVersion: openslo/v1\nkind: SLO\nmetadata:\n  name: {}\n  displayName: {}\nspec:\n",
        scalar(id),
        scalar(display)
    );
    if let Some(description) = &slo.description {
        slo_doc.push_str(&format!("  description: {}\n", scalar(description)));
    }
    slo_doc.push_str(&format!(
        "  service: {}\n  indicatorRef: {}\n{window}  budgetingMethod: {budgeting}\n  objectives:\n{objective}",
        scalar(service),
        scalar(id)
    ));
    let mut documents = vec![sli];
    match &slo.alerting {
        Some(alerting) => {
            slo_doc.push_str(&format!("  alertPolicies: [{}]\n", scalar(&policy_name)));
            documents.push(slo_doc);
            let mut policy = format!(
                "apiVersion: openslo/v1\nkind: AlertPolicy\nmetadata:\n  name: {}\n  displayName: {}\nspec:\n  description: burnRates {}\n  alertWhenBreaching: true\n  conditions:\n",
                scalar(&policy_name),
                scalar(&format!("{display} burn rate")),
                alerting.burn_rates.as_str()
            );
            let pairs = monform_slo::parse_burn_rates(alerting.burn_rates.as_str()).unwrap_or_default();
            for (i, pair) in pairs.iter().enumerate() {
                let severity = match pair.severity {
                    monform_slo::Severity::Page => "page",
                    monform_slo::Severity::Ticket => "ticket",
                };
                policy.push_str(&format!(
                    "    - kind: AlertCondition\n      metadata:\n        name: {}\n      spec:\n        severity: {severity}\n        condition:\n          kind: burnrate\n          op: gte\n          threshold: {}\n          lookbackWindow: {}\n          alertAfter: {}\n",
                    scalar(&format!("{id}-burn-rate-{}", i + 1)),
                    pair.factor,
                    monform_slo::format_duration(pair.long),
                    monform_slo::format_duration(pair.short),
                ));
            }
            if alerting.channels.is_empty() {
                policy.push_str("  notificationTargets: []\n");
            } else {
                policy.push_str("  notificationTargets:\n");
                for channel in &alerting.channels {
                    policy.push_str(&format!("    - targetRef: {}\n", scalar(channel)));
                }
            }
            documents.push(policy);
        }
        None => documents.push(slo_doc),
    }
    documents
}

/// OpenSLO v1 documents (SLI, SLO, AlertPolicy) as a `slos:` resource
/// file: each SLO with its SLI's `monform` metric source; an SLI of
/// another source cannot be measured by monform and is refused.
pub fn import_openslo(text: &str) -> Result<String, OpenSloError> {
    let documents: Vec<Value> = serde_saphyr::from_multiple(text).map_err(|e| OpenSloError::Yaml(e.to_string()))?;
    let name_of = |doc: &Value| doc["metadata"]["name"].as_str().unwrap_or_default().to_owned();
    let find = |kind: &str, name: &str| {
        documents
            .iter()
            .find(|d| d["kind"] == kind && d["metadata"]["name"] == name)
    };
    let mut out = String::from("slos:\n");
    for (index, doc) in documents.iter().enumerate() {
        if doc["kind"] != "SLO" {
            continue;
        }
        let name = name_of(doc);
        let problem = |problem: &str| OpenSloError::Document {
            index: index + 1,
            kind: "SLO".to_owned(),
            name: name.clone(),
            problem: problem.to_owned(),
        };
        if doc["apiVersion"] != "openslo/v1" {
            return Err(problem("apiVersion is not openslo/v1"));
        }
        let spec = &doc["spec"];
        let sli_name = spec["indicatorRef"].as_str().unwrap_or(&name);
        let sli = find("SLI", sli_name).ok_or_else(|| problem(&format!("no SLI named {sli_name}")))?;
        let source = &sli["spec"]["ratioMetric"]["total"]["metricSource"];
        if source["type"] != "monform" {
            return Err(problem(
                "its SLI's metric source is not of type monform: monform measures its own checks",
            ));
        }
        let source = &source["spec"];
        out.push_str(&format!("  {}:\n", scalar(&name)));
        if let Some(display) = doc["metadata"]["displayName"].as_str().filter(|d| *d != name) {
            out.push_str(&format!("    name: {}\n", scalar(display)));
        }
        if let Some(description) = spec["description"].as_str() {
            out.push_str(&format!("    description: {}\n", scalar(description)));
        }
        let strings = |value: &Value| -> Vec<String> {
            value
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        };
        if source.get("checks").is_some() {
            out.push_str(&format!("    checks: {}\n", list(&strings(&source["checks"]))));
        }
        if source.get("tags").is_some() {
            out.push_str(&format!("    tags: {}\n", list(&strings(&source["tags"]))));
        }
        let indicator = source["indicator"].as_str().unwrap_or("availability");
        if indicator.parse::<SloIndicator>().is_err() {
            return Err(problem(&format!("unknown indicator {indicator}")));
        }
        out.push_str(&format!("    indicator: {indicator}\n"));
        let budgeting = match spec["budgetingMethod"].as_str() {
            Some("Timeslices") => "timeslices",
            Some("Occurrences") | None => "occurrences",
            Some(other) => {
                return Err(problem(&format!(
                    "budgetingMethod {other} is not Occurrences or Timeslices"
                )));
            }
        };
        out.push_str(&format!("    budgeting: {budgeting}\n"));
        let objective = &spec["objectives"][0];
        if let Some(slice) = objective["timeSliceWindow"].as_str() {
            out.push_str(&format!("    timeslice: {slice}\n"));
        }
        if let Some(slice_target) = objective["timeSliceTarget"].as_f64().filter(|t| *t != 1.0) {
            out.push_str(&format!("    timesliceTarget: {}\n", percent_text(slice_target)));
        }
        let target = objective["target"]
            .as_f64()
            .ok_or_else(|| problem("objectives[0].target is missing"))?;
        out.push_str(&format!("    target: {}\n", percent_text(target)));
        let window = &spec["timeWindow"][0];
        if window["isRolling"] == false {
            if window["duration"] != "1M" {
                return Err(problem("a calendar window other than a month (1M)"));
            }
            out.push_str("    calendar: month\n");
        } else {
            let duration = window["duration"]
                .as_str()
                .ok_or_else(|| problem("timeWindow[0].duration is missing"))?;
            out.push_str(&format!("    window: {duration}\n"));
        }
        if let Some(threshold) = source["threshold"].as_u64() {
            out.push_str(&format!("    threshold: {threshold}\n"));
        }
        if let Some(policy) = spec["alertPolicies"][0].as_str().and_then(|p| find("AlertPolicy", p)) {
            let channels: Vec<String> = policy["spec"]["notificationTargets"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|t| t["targetRef"].as_str().map(str::to_owned))
                .collect();
            let rates = policy["spec"]["description"]
                .as_str()
                .and_then(|d| d.strip_prefix("burnRates "))
                .unwrap_or("default");
            out.push_str(&format!(
                "    alerting: {{ channels: {}, burnRates: {} }}\n",
                list(&channels),
                scalar(rates)
            ));
        }
        if source["enforce"] == true {
            out.push_str("    enforce: true\n");
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_move_their_point_exactly() {
        assert_eq!(ratio_text(99.5), "0.995");
        assert_eq!(ratio_text(99.95), "0.9995");
        assert_eq!(ratio_text(95.0), "0.95");
        assert_eq!(ratio_text(100.0), "1");
        assert_eq!(percent_text(0.995), "99.5");
        assert_eq!(percent_text(0.9995), "99.95");
        assert_eq!(percent_text(1.0), "100");
        assert_eq!(scalar("checks.api[orders]"), "\"checks.api[orders]\"");
        assert_eq!(scalar("Checkout availability"), "Checkout availability");
        assert_eq!(scalar("team:shop"), "\"team:shop\"");
    }
}
