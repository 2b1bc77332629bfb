//! `add_check`: one check (URL, API, TCP, DNS or ICMP) added to a
//! resource file of the project from a few arguments, written through
//! `write_file`'s path ([`files::write_checked`]: inside the root, a
//! resource file the project reads, the whole project validated with it
//! before writing, refused with the diagnostics, the diff). The rest of
//! the file stays byte for byte: the entry is added at the end of its
//! `checks:` block (YAML) or as a table at the end (TOML).

use monform_config::source::Format;
use monform_config::tree::{NodeValue, parse_yaml};
use monform_model::{Address, Kind};
use serde_json::{Map, Value, json};

use crate::Config;
use crate::files::{self, Write};
use crate::reply::{Reply, place};

/// The file a project without checks gets them in.
const DEFAULT_FILE: &str = "checks.yaml";

/// The tool's arguments, as the agent gave them.
pub struct AddCheck<'a> {
    pub check_type: &'a str,
    pub name: &'a str,
    /// URL and API checks.
    pub url: Option<&'a str>,
    /// TCP: `host:port`; DNS: the name queried (an A record); ICMP: the host.
    pub target: Option<&'a str>,
    pub id: Option<&'a str>,
    pub file: Option<&'a str>,
    pub frequency: Option<&'a Value>,
    pub locations: Option<&'a Value>,
}

/// The check's fields from the arguments; the model's rules judge them
/// when the project is validated with it.
fn check_value(args: &AddCheck<'_>) -> Result<Value, String> {
    let check_type = args.check_type.to_ascii_uppercase();
    let need = |what: Option<&str>, name: &str| {
        what.filter(|s| !s.trim().is_empty())
            .map(str::to_owned)
            .ok_or_else(|| format!("a {check_type} check needs `{name}`"))
    };
    let status_200 = json!([{"source": "STATUS_CODE", "comparison": "EQUALS", "target": "200"}]);
    let request = match check_type.as_str() {
        "URL" => json!({"url": need(args.url, "url")?, "assertions": status_200}),
        "API" => json!({"method": "GET", "url": need(args.url, "url")?, "assertions": status_200}),
        "TCP" => {
            let target = need(args.target, "target")?;
            let (host, port) = target
                .rsplit_once(':')
                .and_then(|(host, port)| Some((host, port.parse::<u32>().ok()?)))
                .ok_or_else(|| format!("a TCP check's `target` is host:port, not `{target}`"))?;
            json!({"hostname": host.trim_start_matches('[').trim_end_matches(']'), "port": port})
        }
        "DNS" => json!({"query": need(args.target, "target")?, "recordType": "A"}),
        "ICMP" => json!({"hostname": need(args.target, "target")?}),
        other => {
            return Err(format!(
                "add_check writes URL, API, TCP, DNS and ICMP checks, not `{other}`: write other checks with write_file (the schema tool has their fields)"
            ));
        }
    };
    let mut check = Map::new();
    check.insert("checkType".into(), json!(check_type));
    check.insert("name".into(), json!(args.name));
    if let Some(frequency) = args.frequency {
        check.insert("frequency".into(), frequency.clone());
    }
    if let Some(locations) = args.locations {
        check.insert("locations".into(), locations.clone());
    }
    check.insert("request".into(), request);
    Ok(Value::Object(check))
}

/// The file the project's checks mostly live in (the first such), or
/// [`DEFAULT_FILE`].
fn usual_file(loaded: &monform_config::Loaded) -> String {
    let mut counts: Vec<(String, usize)> = Vec::new();
    for resource in loaded.desired.resources.values() {
        if resource.address.kind != Kind::Check {
            continue;
        }
        let Some((file, _)) = place(resource.span, &loaded.sources) else {
            continue;
        };
        match counts.iter_mut().find(|(name, _)| *name == file) {
            Some((_, n)) => *n += 1,
            None => counts.push((file, 1)),
        }
    }
    let most = counts.iter().map(|(_, n)| *n).max().unwrap_or(0);
    counts
        .into_iter()
        .find(|(name, n)| *n == most && Format::of(std::path::Path::new(name)).is_some())
        .map(|(name, _)| name)
        .unwrap_or_else(|| DEFAULT_FILE.to_owned())
}

pub fn add_check(config: &Config, client: &str, args: &AddCheck<'_>) -> Reply {
    if args.name.trim().is_empty() {
        return Reply::refused("`name` is required");
    }
    let check = match check_value(args) {
        Ok(check) => check,
        Err(why) => return Reply::refused(why),
    };
    let id = args
        .id
        .map_or_else(|| monform_engine::ops::slug(args.name), str::to_owned);
    if !monform_model::is_valid_logical_id(&id) {
        return Reply::refused(format!(
            "`{id}` is not a logical id (letters, digits, - and _, starting with a letter or digit, at most 64)"
        ));
    }
    let prior = monform_engine::ops::validate(&files::request(config, None));
    let address = Address::new(Kind::Check, &id);
    if let Some(taken) = prior.loaded.desired.resources.get(&address) {
        let at = place(taken.span, &prior.loaded.sources)
            .map(|(file, line)| format!(" at {file}:{line}"))
            .unwrap_or_default();
        return Reply::refused(format!("{address} already exists{at}: give another `id`"));
    }
    let file = args.file.map_or_else(|| usual_file(&prior.loaded), str::to_owned);
    let format = Format::of(std::path::Path::new(&file));
    let write = Write {
        tool: "add_check",
        client,
        path: &file,
        prior,
    };
    let reply = files::write_checked(config, write, |before| {
        let before = before.unwrap_or("");
        match format {
            Some(Format::Toml) => Ok(toml_added(before, &id, &check)),
            _ => yaml_added(before, &id, &check).map_err(Reply::refused),
        }
    });
    match reply {
        Reply::Done(mut answer) => {
            answer["address"] = json!(address.to_string());
            answer["next"] = json!("call plan to see what the service would change");
            Reply::Done(answer)
        }
        refused => refused,
    }
}

/// `text` with the check added at the end of its top-level `checks:`
/// block (made when there is none).
fn yaml_added(text: &str, id: &str, check: &Value) -> Result<String, String> {
    let root = parse_yaml(0, text).map_err(|e| format!("the file does not parse ({}): fix it first", e.message))?;
    let entry = |indent: usize, step: usize| yaml_entry(id, check, indent, step);
    let mut out = text.to_owned();
    let Some(checks) = root.get("checks") else {
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        if !out.trim().is_empty() {
            out.push('\n');
        }
        out.push_str("checks:\n");
        out.push_str(&entry(2, 2));
        return Ok(out);
    };
    let key_line_end = line_end(text, checks.key_span.start);
    match &checks.value.value {
        NodeValue::Null => {
            out.insert_str(key_line_end, &entry(2, 2));
            if key_line_end == text.len() && !text.ends_with('\n') {
                out.insert(key_line_end, '\n');
            }
            Ok(out)
        }
        NodeValue::Map(entries) if text.as_bytes().get(checks.value.span.start) != Some(&b'{') => {
            let indent = entries.first().map_or(2, |e| column(text, e.key_span.start));
            let step = indent.max(2);
            // The block ends before the first later line indented no deeper than `checks:`.
            let mut at = key_line_end;
            let mut end = key_line_end;
            while at < text.len() {
                let next = line_end(text, at);
                let line = &text[at..next];
                let content = line.trim_start();
                let blank = content.is_empty() || content.starts_with('#');
                if !blank && line.len() - content.len() == 0 {
                    break;
                }
                if !blank {
                    end = next;
                }
                at = next;
            }
            let mut added = String::new();
            if end == text.len() && !text.ends_with('\n') {
                added.push('\n');
            }
            added.push_str(&entry(indent, step));
            out.insert_str(end, &added);
            Ok(out)
        }
        NodeValue::Map(entries) if entries.is_empty() => {
            // `checks: {}`: the empty flow map becomes the block.
            let start = checks.value.span.start;
            let close = text[start..]
                .find('}')
                .map(|i| start + i + 1)
                .ok_or("the file's `checks: {` does not close")?;
            let rest_of_line = &text[close..line_end(text, close)];
            if !rest_of_line.trim().is_empty() && !rest_of_line.trim_start().starts_with('#') {
                return Err("`checks: {}` is followed by more on its line: add the check with write_file".to_owned());
            }
            let mut block = String::from("\n");
            block.push_str(entry(2, 2).trim_end_matches('\n'));
            let blank = text[..start].trim_end_matches([' ', '\t']).len();
            out.replace_range(blank..close, &block);
            Ok(out)
        }
        _ => Err(
            "the file's checks are not a block map (`checks:` then one check per entry): add the check with write_file"
                .to_owned(),
        ),
    }
}

/// The byte after the end of the line holding `offset` (its newline included).
fn line_end(text: &str, offset: usize) -> usize {
    text[offset.min(text.len())..]
        .find('\n')
        .map_or(text.len(), |i| offset + i + 1)
}

fn column(text: &str, offset: usize) -> usize {
    offset - text[..offset].rfind('\n').map_or(0, |i| i + 1)
}

/// `id:` and the check's fields below it, as block YAML at `indent`,
/// nested by `step`; lists on one line (JSON is YAML's flow style).
fn yaml_entry(id: &str, check: &Value, indent: usize, step: usize) -> String {
    fn block(value: &Map<String, Value>, indent: usize, step: usize, out: &mut String) {
        for (key, value) in value {
            out.push_str(&" ".repeat(indent));
            out.push_str(key);
            out.push(':');
            match value {
                Value::Object(inner) => {
                    out.push('\n');
                    block(inner, indent + step, step, out);
                }
                other => {
                    out.push(' ');
                    out.push_str(&yaml_scalar(other));
                    out.push('\n');
                }
            }
        }
    }
    let mut out = format!("{}{id}:\n", " ".repeat(indent));
    if let Value::Object(fields) = check {
        block(fields, indent + step, step, &mut out);
    }
    out
}

/// A value on one line: a word plain, anything else as JSON (which YAML reads).
fn yaml_scalar(value: &Value) -> String {
    match value {
        Value::String(s) => {
            let word = s.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
                && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            let special = ["true", "false", "yes", "no", "on", "off", "null", "y", "n"]
                .contains(&s.to_ascii_lowercase().as_str());
            match word && !special {
                true => s.clone(),
                false => value.to_string(),
            }
        }
        Value::Array(items) => format!("[{}]", items.iter().map(yaml_scalar).collect::<Vec<_>>().join(", ")),
        Value::Object(map) => format!(
            "{{ {} }}",
            map.iter()
                .map(|(k, v)| format!("{k}: {}", yaml_scalar(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => other.to_string(),
    }
}

/// `text` with the check as a `[checks.ID]` table at the end.
fn toml_added(text: &str, id: &str, check: &Value) -> String {
    let mut out = text.to_owned();
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    if !out.trim().is_empty() {
        out.push('\n');
    }
    out.push_str(&format!("[checks.{id}]\n"));
    if let Value::Object(fields) = check {
        for (key, value) in fields {
            out.push_str(&format!("{key} = {}\n", toml_value(value)));
        }
    }
    out
}

/// A TOML value on one line (strings as JSON writes them, which TOML's
/// basic strings read; tables inline).
fn toml_value(value: &Value) -> String {
    match value {
        Value::Array(items) => format!("[{}]", items.iter().map(toml_value).collect::<Vec<_>>().join(", ")),
        Value::Object(map) => format!(
            "{{ {} }}",
            map.iter()
                .map(|(k, v)| format!("{k} = {}", toml_value(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url_check() -> Value {
        let args = AddCheck {
            check_type: "url",
            name: "Shop home",
            url: Some("https://shop.example/"),
            target: None,
            id: None,
            file: None,
            frequency: Some(&json!(5)),
            locations: None,
        };
        check_value(&args).unwrap()
    }

    #[test]
    fn the_entry_goes_at_the_end_of_the_checks_block_keeping_the_rest() {
        let text = "# mine\nchecks:\n    home:\n        checkType: URL\n        script: |\n          x\n\n# trailing\ngroups:\n    web: {name: Web}\n";
        let added = yaml_added(text, "shop", &url_check()).unwrap();
        assert_eq!(
            added,
            "# mine\nchecks:\n    home:\n        checkType: URL\n        script: |\n          x\n    shop:\n        checkType: URL\n        name: \"Shop home\"\n        frequency: 5\n        request:\n            url: \"https://shop.example/\"\n            assertions: [{ source: STATUS_CODE, comparison: EQUALS, target: \"200\" }]\n\n# trailing\ngroups:\n    web: {name: Web}\n"
        );
        let root = parse_yaml(0, &added).unwrap();
        let checks = root.get("checks").unwrap().value.as_map().unwrap();
        assert_eq!(checks.len(), 2);
    }

    #[test]
    fn a_file_without_checks_gets_the_section() {
        for text in ["", "groups: {}", "checks:\n", "checks: {}\n"] {
            let added = yaml_added(text, "shop", &url_check()).unwrap();
            let root = parse_yaml(0, &added).unwrap_or_else(|e| panic!("{text:?}: {}: {added}", e.message));
            let checks = root.get("checks").unwrap().value.to_json();
            assert_eq!(checks["shop"]["request"]["url"], "https://shop.example/", "{added}");
        }
        let toml = toml_added("[checks.home]\ncheckType = \"URL\"", "shop", &url_check());
        let parsed = monform_config::tree::parse_toml(0, &toml).unwrap_or_else(|e| panic!("{e:?}: {toml}"));
        assert_eq!(
            parsed.to_json()["checks"]["shop"]["request"]["url"],
            "https://shop.example/",
            "{toml}"
        );
    }

    #[test]
    fn targets_are_read_per_check_type() {
        let args = |check_type, target| AddCheck {
            check_type,
            name: "x",
            url: None,
            target,
            id: None,
            file: None,
            frequency: None,
            locations: None,
        };
        let tcp = check_value(&args("TCP", Some("db.example:5432"))).unwrap();
        assert_eq!(tcp["request"], json!({"hostname": "db.example", "port": 5432}));
        assert!(check_value(&args("TCP", Some("db.example"))).is_err());
        assert!(check_value(&args("URL", None)).is_err());
        assert!(check_value(&args("BROWSER", Some("x"))).is_err());
    }
}
