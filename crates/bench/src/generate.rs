//! The generated project: `checks` checks of all ten types in groups of 50,
//! in YAML files of 100 checks each (with the two groups those checks are
//! in), plus snippets, alert channels and variables in `monitors/shared.yaml`.
//!
//! Revision 1 renames 1% of the checks (one per file), so the same call
//! with `revision: 1` is the "1% changed" edit of the files.

use std::path::Path;

use monform_model::resources::CheckType;
use serde_json::{Map, Value, json};

/// The project's name in monform.toml.
pub const PROJECT: &str = "bench";
pub const CHECKS_PER_GROUP: usize = 50;
pub const CHECKS_PER_FILE: usize = 100;
/// One check in every `CHANGE_EVERY` is renamed by revision 1 (1%).
pub const CHANGE_EVERY: usize = 100;
/// Which check of each hundred revision 1 renames.
const CHANGED: usize = 42;

const FREQUENCIES: [u32; 6] = [1, 5, 10, 15, 30, 60];

/// How many of each kind a project of `checks` checks has.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct Shape {
    pub checks: usize,
    pub groups: usize,
    /// Check `n` is in group `n / checks_per_group`.
    pub checks_per_group: usize,
    pub snippets: usize,
    pub alert_channels: usize,
    pub variables: usize,
    /// Resource files (monform.toml not counted).
    pub files: usize,
}

impl Shape {
    pub fn new(checks: usize) -> Shape {
        let shared = (checks / 200).max(5);
        Shape {
            checks,
            groups: checks.div_ceil(CHECKS_PER_GROUP),
            checks_per_group: CHECKS_PER_GROUP,
            snippets: shared,
            alert_channels: shared,
            variables: shared,
            files: checks.div_ceil(CHECKS_PER_FILE) + 1,
        }
    }

    /// The shape of issue 29's project: the checks in (about) `groups`
    /// groups, with or without alert channels (without, no check or group
    /// names one, and every check draws the linter's "alerts nobody").
    pub fn with_groups(checks: usize, groups: usize, alert_channels: bool) -> Shape {
        let checks_per_group = checks.div_ceil(groups.clamp(1, checks.max(1)));
        Shape {
            groups: checks.div_ceil(checks_per_group),
            checks_per_group,
            alert_channels: if alert_channels {
                Shape::new(checks).alert_channels
            } else {
                0
            },
            ..Shape::new(checks)
        }
    }

    pub fn resources(&self) -> usize {
        self.checks + self.groups + self.snippets + self.alert_channels + self.variables
    }

    /// Checks that revision 1 changes.
    pub fn changed(&self) -> usize {
        (0..self.checks).filter(|n| n % CHANGE_EVERY == CHANGED).count()
    }
}

/// Writes the project at `revision` (0 or 1) into `root`; returns the bytes
/// of its resource files. Files whose text is already there are left alone.
pub fn generate(root: &Path, shape: &Shape, revision: u32) -> std::io::Result<usize> {
    generate_edited(root, shape, revision, &Edits::default())
}

/// An edit of `monitors/shared.yaml`'s sections.
pub type SharedEdit<'e> = &'e dyn Fn(&mut Map<String, Value>);
/// An edit of a check, given its number and JSON.
pub type CheckEdit<'e> = &'e dyn Fn(usize, &mut Value);

/// What a benchmark changes in the generated project (the language
/// server's: one alert channel named in 1,000 places, to rename).
#[derive(Default)]
pub struct Edits<'e> {
    pub shared: Option<SharedEdit<'e>>,
    pub check: Option<CheckEdit<'e>>,
}

/// [`generate`], with `edits` made.
pub fn generate_edited(root: &Path, shape: &Shape, revision: u32, edits: &Edits<'_>) -> std::io::Result<usize> {
    write(
        root,
        "monform.toml",
        "[project]\nname = \"bench\"\ninclude = [\"monitors/**/*.yaml\"]\n\n\
         [defaults]\nlocations = [\"eu-west-1\", \"us-east-1\"]\ntags = [\"bench\"]\n\n\
         [state]\nbackend = \"local\"\n",
    )?;
    let mut bytes = 0;
    let mut shared = Map::new();
    shared.insert("snippets".into(), snippets(shape));
    shared.insert("alertChannels".into(), alert_channels(shape));
    shared.insert("variables".into(), variables(shape));
    if let Some(edit) = edits.shared {
        edit(&mut shared);
    }
    bytes += write(root, "monitors/shared.yaml", &yaml(&Value::Object(shared)))?;
    for file in 0..shape.checks.div_ceil(CHECKS_PER_FILE) {
        let first = file * CHECKS_PER_FILE;
        let last = (first + CHECKS_PER_FILE).min(shape.checks);
        let mut sections = Map::new();
        let per_group = shape.checks_per_group;
        let groups: Map<String, Value> = (first / per_group..last.div_ceil(per_group))
            .map(|g| (group_id(g), group(g, shape)))
            .collect();
        sections.insert("groups".into(), Value::Object(groups));
        let checks: Map<String, Value> = (first..last)
            .map(|n| {
                let mut check = check(n, shape, revision);
                if let Some(edit) = edits.check {
                    edit(n, &mut check);
                }
                (format!("check-{n:05}"), check)
            })
            .collect();
        sections.insert("checks".into(), Value::Object(checks));
        let name = format!("monitors/team-{}/checks-{file:03}.yaml", file % 8);
        bytes += write(root, &name, &yaml(&Value::Object(sections)))?;
    }
    Ok(bytes)
}

fn yaml(document: &Value) -> String {
    format!(
        "# generated by monform-bench\n{}",
        serde_saphyr::to_string(document).expect("a JSON value is YAML")
    )
}

/// Writes `text` unless the file already holds it; returns its length.
fn write(root: &Path, relative: &str, text: &str) -> std::io::Result<usize> {
    let path = root.join(relative);
    if std::fs::read_to_string(&path).is_ok_and(|old| old == text) {
        return Ok(text.len());
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(path, text)?;
    Ok(text.len())
}

fn group_id(g: usize) -> String {
    format!("g-{g:04}")
}

fn channel_id(c: usize) -> String {
    format!("channel-{c:03}")
}

fn snippet_id(s: usize) -> String {
    format!("snippet-{s:03}")
}

fn group(g: usize, shape: &Shape) -> Value {
    let mut group = json!({
        "name": format!("Group {g}"),
        "concurrency": 3,
        "locations": ["eu-west-1", "us-east-1"],
        "tags": [format!("team:{}", g % 8)],
    });
    if shape.alert_channels > 0 {
        group["alertChannels"] = json!([channel_id(g % shape.alert_channels)]);
    }
    group
}

fn snippets(shape: &Shape) -> Value {
    let map: Map<String, Value> = (0..shape.snippets)
        .map(|s| {
            (
                snippet_id(s),
                json!({
                    "name": format!("Snippet {s}"),
                    "script": format!(
                        "request.headers['X-Signature'] = sign(request.body, process.env.SIGNING_KEY_{s})\n"
                    ),
                }),
            )
        })
        .collect();
    Value::Object(map)
}

/// Mostly e-mail channels, every fifth a webhook.
fn alert_channels(shape: &Shape) -> Value {
    let map: Map<String, Value> = (0..shape.alert_channels)
        .map(|c| {
            let channel = if c % 5 == 4 {
                json!({
                    "type": "WEBHOOK",
                    "config": {
                        "name": format!("Ops bot {c}"),
                        "url": format!("https://hooks.example.com/monform/{c}"),
                        "method": "POST",
                    },
                })
            } else {
                json!({
                    "type": "EMAIL",
                    "config": { "address": format!("oncall-{c}@example.com") },
                    "sendDegraded": c % 2 == 0,
                })
            };
            (channel_id(c), channel)
        })
        .collect();
    Value::Object(map)
}

/// Every tenth variable is secret.
fn variables(shape: &Shape) -> Value {
    let map: Map<String, Value> = (0..shape.variables)
        .map(|v| {
            let mut variable = json!({ "value": format!("value-{v}") });
            if v % 10 == 3 {
                variable["secret"] = json!(true);
            }
            if v % 10 == 5 {
                variable["locked"] = json!(true);
            }
            (format!("BENCH_VAR_{v:03}"), variable)
        })
        .collect();
    Value::Object(map)
}

/// Check `n`: its type cycles through all ten; it is in group `n / 50` and
/// alerts one or two channels; API checks use a setup snippet.
fn check(n: usize, shape: &Shape, revision: u32) -> Value {
    let check_type = CheckType::ALL[n % CheckType::ALL.len()];
    let renamed = revision > 0 && n % CHANGE_EVERY == CHANGED;
    let channels: Vec<String> = if shape.alert_channels == 0 {
        Vec::new()
    } else if n.is_multiple_of(3) {
        vec![
            channel_id(n % shape.alert_channels),
            channel_id((n + 1) % shape.alert_channels),
        ]
    } else {
        vec![channel_id(n % shape.alert_channels)]
    };
    let mut check = json!({
        "checkType": check_type.as_str(),
        "name": format!("{} check {n}{}", check_type.as_str().to_lowercase(), if renamed { " (renamed)" } else { "" }),
        "group": group_id(n / shape.checks_per_group),
        "tags": [format!("service:{}", n % 17), "bench"],
    });
    if !channels.is_empty() {
        check["alertChannels"] = json!(channels);
    }
    if check_type != CheckType::Heartbeat {
        check["frequency"] = json!(FREQUENCIES[n % FREQUENCIES.len()]);
    }
    let mut spec = monform_model::samples::check_spec(check_type, n);
    if check_type == CheckType::Api {
        spec["setupSnippet"] = json!(snippet_id(n % shape.snippets));
    }
    if let (Value::Object(check), Value::Object(spec)) = (&mut check, spec) {
        check.extend(spec);
    }
    check
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_generated_project_loads_without_diagnostics() {
        let dir = tempfile::tempdir().unwrap();
        let shape = Shape::new(250);
        generate(dir.path(), &shape, 0).unwrap();
        let loaded = monform_config::load(dir.path(), &|_: &str| None);
        let problems: Vec<String> = loaded
            .diagnostics
            .iter()
            .take(5)
            .map(|d| format!("{}: {}", d.location(&loaded.sources).unwrap_or_default(), d.message))
            .collect();
        assert!(problems.is_empty(), "{problems:#?}");
        assert_eq!(loaded.desired.resources.len(), shape.resources());
        assert_eq!(loaded.resource_files, shape.files);
        // Revision 1 changes 1% of the checks and nothing else.
        generate(dir.path(), &shape, 1).unwrap();
        let changed = monform_config::load(dir.path(), &|_: &str| None);
        assert!(changed.is_ok());
        let differing = loaded
            .desired
            .resources
            .iter()
            .filter(|(a, r)| changed.desired.resources[*a].resource != r.resource)
            .count();
        assert_eq!(differing, shape.changed());
        assert_eq!(shape.changed(), 3);
    }

    #[test]
    fn the_shape_of_issue_29_has_its_groups_and_no_alert_channel() {
        let dir = tempfile::tempdir().unwrap();
        let shape = Shape::with_groups(1_000, 200, false);
        assert_eq!(
            (shape.groups, shape.checks_per_group, shape.alert_channels),
            (200, 5, 0)
        );
        generate(dir.path(), &shape, 0).unwrap();
        let loaded = monform_config::load(dir.path(), &|_: &str| None);
        assert!(loaded.is_ok(), "{:?}", loaded.diagnostics.first().map(|d| &d.message));
        assert_eq!(loaded.desired.resources.len(), shape.resources());
        let text = std::fs::read_to_string(dir.path().join("monitors/team-0/checks-000.yaml")).unwrap();
        assert!(!text.contains("alertChannels"), "{text}");
        assert!(text.contains("g-0019:"), "20 groups of 5 in a file of 100 checks");
    }
}
