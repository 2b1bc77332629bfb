//! How long `load` takes for a large project: 10,000 checks of all ten types
//! in 200 files, half YAML and half TOML, with groups, snippets (one with its
//! script in a file) and alert channels that the checks reference.
//!
//! Run with `cargo bench -p monform-config --bench load`. Prints min, median
//! and max wall time, and a PASS/FAIL line against the target: a median
//! under one second in a release build. Exits with status 1 on FAIL in an
//! optimized build. `BENCH_RUNS` sets the number of measured runs (default 5,
//! after one warm-up).

use std::path::Path;
use std::time::{Duration, Instant};

use monform_config::load;
use monform_config::tree::{parse_toml, parse_yaml};
use monform_model::resources::CheckType;
use serde_json::{Value, json};

const FILES: usize = 200;
const CHECKS_PER_FILE: usize = 50;
const GROUPS: usize = 5;
const TARGET: Duration = Duration::from_millis(1000);

const FREQUENCIES: [u32; 6] = [1, 5, 10, 15, 30, 60];

fn main() {
    let runs: usize = std::env::var("BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(5);
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    let generated = Instant::now();
    let bytes = generate(root);
    let generated = generated.elapsed();

    let env = |name: &str| (name == "API_HOST").then(|| "api.example.com".to_owned());
    let loaded = load(root, &env);
    if !loaded.diagnostics.is_empty() {
        for diagnostic in loaded.diagnostics.iter().take(10) {
            eprintln!(
                "{}: {} [{}]",
                diagnostic.location(&loaded.sources).unwrap_or_default(),
                diagnostic.message,
                diagnostic.code
            );
        }
        panic!("the generated project has {} diagnostics", loaded.diagnostics.len());
    }
    let checks = loaded
        .desired
        .resources
        .keys()
        .filter(|a| a.kind == monform_model::Kind::Check)
        .count();
    assert_eq!(checks, FILES * CHECKS_PER_FILE, "every generated check is loaded");
    assert_eq!(loaded.resource_files, FILES);
    let resources = loaded.desired.len();
    let references: usize = loaded.desired.resources.values().map(|r| r.references.len()).sum();
    drop(loaded);

    // The first run above was the warm-up.
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            let loaded = load(root, &env);
            let elapsed = start.elapsed();
            assert!(loaded.diagnostics.is_empty() && loaded.desired.len() == resources);
            drop(loaded);
            elapsed
        })
        .collect();
    let median = median(&mut times);
    let (min, max) = (times[0], times[times.len() - 1]);
    let optimized = !cfg!(debug_assertions);
    let (yaml, toml) = parse_times(root, runs);

    println!("monform-config load benchmark");
    println!(
        "  project    {checks} checks ({} types) in {FILES} files ({} YAML, {} TOML), {:.1} MiB, generated in {}",
        CheckType::ALL.len(),
        FILES.div_ceil(2),
        FILES / 2,
        bytes as f64 / (1024.0 * 1024.0),
        ms(generated),
    );
    println!("  resources  {resources} (checks, {GROUPS} groups, snippets, alert channels), {references} references");
    println!("  diagnostics 0");
    println!(
        "  load       {runs} runs after 1 warm-up: min {}  median {}  max {}",
        ms(min),
        ms(median),
        ms(max)
    );
    println!(
        "  of which   parsing (medians): YAML {}, TOML {}; the rest is interpolation, validation, typing, references",
        ms(yaml),
        ms(toml)
    );
    println!(
        "  throughput {:.0} checks/s (median), {:.1} MiB/s",
        checks as f64 / median.as_secs_f64(),
        bytes as f64 / (1024.0 * 1024.0) / median.as_secs_f64()
    );
    let pass = median < TARGET;
    println!(
        "  {}: median {} {} target {} for 10,000 checks{}",
        if pass { "PASS" } else { "FAIL" },
        ms(median),
        if pass { "<" } else { ">=" },
        ms(TARGET),
        if optimized {
            ""
        } else {
            " (debug build: the target is for release builds)"
        },
    );
    let expansion_pass = expansion(runs);
    if (!pass || !expansion_pass) && optimized {
        std::process::exit(1);
    }
}

/// Definitions and items of the expansion case: 100 x 100 = 10,000 checks.
const DEFINITIONS: usize = 100;
const ITEMS: usize = 100;
/// Loading them from forEach may take at most this much longer than
/// loading the same checks written out.
const EXPANSION_TARGET: f64 = 1.2;

/// 10,000 checks as 100 forEach definitions of 100 items, and the same
/// checks written out, each loaded `runs` times: prints both medians and
/// PASS/FAIL of their ratio against the target.
fn expansion(runs: usize) -> bool {
    let env = |_: &str| None;
    let mut medians = Vec::new();
    for written_out in [false, true] {
        let dir = tempfile::tempdir().expect("temp dir");
        generate_expansion(dir.path(), written_out);
        let loaded = load(dir.path(), &env);
        assert!(loaded.diagnostics.is_empty(), "{:?}", &loaded.diagnostics[..1]);
        assert_eq!(loaded.desired.len(), DEFINITIONS * ITEMS + GROUPS + 1);
        drop(loaded);
        let mut times: Vec<Duration> = (0..runs)
            .map(|_| {
                let start = Instant::now();
                let loaded = load(dir.path(), &env);
                let elapsed = start.elapsed();
                drop(loaded);
                elapsed
            })
            .collect();
        medians.push(median(&mut times));
    }
    let ratio = medians[0].as_secs_f64() / medians[1].as_secs_f64();
    let pass = ratio <= EXPANSION_TARGET;
    println!(
        "  forEach    {DEFINITIONS} definitions x {ITEMS} items: median {}; the same {} checks written out: median {}",
        ms(medians[0]),
        DEFINITIONS * ITEMS,
        ms(medians[1])
    );
    println!(
        "  {}: forEach takes {ratio:.2}x the time of the written-out checks {} target {EXPANSION_TARGET}x",
        if pass { "PASS" } else { "FAIL" },
        if pass { "<=" } else { ">" },
    );
    pass
}

/// The expansion case's project: one file per definition, the same checks
/// either as a forEach (with `${each...}` and `${var:}`) or written out.
fn generate_expansion(root: &Path, written_out: bool) {
    write(
        root,
        "monform.toml",
        "[project]\nname = \"bench\"\n\n[vars]\nhost = \"api.example.com\"\n\n\
         [defaults]\nlocations = [\"eu-west-1\", \"us-east-1\"]\n",
    );
    let groups: serde_json::Map<String, Value> = (0..GROUPS).map(|g| (format!("g{g}"), group(g))).collect();
    let shared = json!({
        "groups": groups,
        "alertChannels": { "oncall": { "type": "EMAIL", "config": { "address": "oncall@example.com" } } },
    });
    write(
        root,
        "monitors/shared.yaml",
        &serde_saphyr::to_string(&shared).expect("YAML"),
    );
    for d in 0..DEFINITIONS {
        let item =
            |i: usize| json!({ "path": format!("/v{d}/items/{i}"), "frequency": FREQUENCIES[i % FREQUENCIES.len()] });
        let definition = |name: String, frequency: Value, url: String| {
            json!({
                "checkType": "API",
                "name": name,
                "group": format!("g{}", d % GROUPS),
                "frequency": frequency,
                "alertChannels": ["oncall"],
                "tags": [format!("service:{d}"), "bench"],
                "request": {
                    "method": "GET",
                    "url": url,
                    "headers": [{ "key": "Accept", "value": "application/json" }],
                    "assertions": [
                        { "source": "STATUS_CODE", "comparison": "LESS_THAN", "target": "300" },
                        { "source": "JSON_BODY", "property": "$.status", "comparison": "EQUALS", "target": "ok" },
                    ],
                },
            })
        };
        let checks: serde_json::Map<String, Value> = if written_out {
            (0..ITEMS)
                .map(|i| {
                    let value = item(i);
                    let check = definition(
                        format!("API {d} item-{i:03}"),
                        value["frequency"].clone(),
                        format!("https://api.example.com{}", value["path"].as_str().unwrap_or_default()),
                    );
                    (format!("api-{d}-item-{i:03}"), check)
                })
                .collect()
        } else {
            let mut check = definition(
                format!("API {d} ${{each.key}}"),
                json!("${each.value.frequency}"),
                "https://${var:host}${each.value.path}".to_owned(),
            );
            check["forEach"] = (0..ITEMS).map(|i| (format!("item-{i:03}"), item(i))).collect();
            [(format!("api-{d}"), check)].into_iter().collect()
        };
        let text = serde_saphyr::to_string(&json!({ "checks": checks })).expect("YAML");
        write(root, &format!("monitors/api-{d:03}.yaml"), &text);
    }
}

/// Median time to parse all YAML files, and all TOML files, alone.
fn parse_times(root: &Path, runs: usize) -> (Duration, Duration) {
    let mut files: Vec<(bool, String)> = Vec::new();
    for entry in walk(&root.join("monitors")) {
        let yaml = entry.extension().is_some_and(|e| e == "yaml");
        files.push((yaml, std::fs::read_to_string(&entry).expect("read")));
    }
    let mut yaml = Vec::new();
    let mut toml = Vec::new();
    for _ in 0..=runs {
        let start = Instant::now();
        for (_, text) in files.iter().filter(|(y, _)| *y) {
            parse_yaml(0, text).expect("valid YAML");
        }
        yaml.push(start.elapsed());
        let start = Instant::now();
        for (_, text) in files.iter().filter(|(y, _)| !*y) {
            parse_toml(0, text).expect("valid TOML");
        }
        toml.push(start.elapsed());
    }
    // The first round was the warm-up.
    (median(&mut yaml[1..]), median(&mut toml[1..]))
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).expect("read dir") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

fn median(times: &mut [Duration]) -> Duration {
    times.sort();
    let n = times.len();
    if n % 2 == 1 {
        times[n / 2]
    } else {
        (times[n / 2 - 1] + times[n / 2]) / 2
    }
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

/// Writes the project; returns the bytes of its resource files.
fn generate(root: &Path) -> usize {
    write(
        root,
        "monform.toml",
        "[project]\nname = \"bench\"\ninclude = [\"monitors/**/*.yaml\", \"monitors/**/*.toml\"]\n\n\
         [defaults]\nlocations = [\"eu-west-1\", \"us-east-1\"]\ntags = [\"bench\"]\n",
    );
    write(
        root,
        "scripts/login.js",
        "const { test, expect } = require('@playwright/test')\n\
         test('login', async ({ page }) => {\n  await page.goto(`${process.env.BASE_URL}/login`)\n  \
         await expect(page).toHaveTitle(/Login/)\n})\n",
    );
    write(
        root,
        "scripts/sign.js",
        "request.headers['X-Signature'] = sign(request.body, process.env.SIGNING_KEY)\n",
    );
    let mut bytes = 0;
    for file in 0..FILES {
        let mut sections = serde_json::Map::new();
        // The shared resources live in the first files, as in a real project.
        match file {
            0 => {
                let groups = (0..GROUPS).map(|g| (format!("g{g}"), group(g))).collect();
                sections.insert("groups".into(), Value::Object(groups));
            }
            1 => {
                sections.insert("alertChannels".into(), alert_channels());
            }
            2 => {
                sections.insert("snippets".into(), snippets());
            }
            _ => {}
        }
        let checks = (0..CHECKS_PER_FILE)
            .map(|i| {
                let n = file * CHECKS_PER_FILE + i;
                (format!("check-{n:05}"), check(n))
            })
            .collect();
        sections.insert("checks".into(), Value::Object(checks));
        let document = Value::Object(sections);
        let (name, text) = if file % 2 == 0 {
            (
                format!("monitors/team-{}/checks-{file:03}.yaml", file % 4),
                serde_saphyr::to_string(&document).expect("YAML"),
            )
        } else {
            (
                format!("monitors/team-{}/checks-{file:03}.toml", file % 4),
                toml::to_string(&document).expect("TOML"),
            )
        };
        bytes += text.len();
        write(root, &name, &text);
    }
    bytes
}

fn write(root: &Path, relative: &str, text: &str) {
    let path = root.join(relative);
    std::fs::create_dir_all(path.parent().expect("has a parent")).expect("create dir");
    std::fs::write(path, text).expect("write file");
}

fn group(g: usize) -> Value {
    json!({
        "name": format!("Group {g}"),
        "concurrency": 3,
        "locations": ["eu-west-1", "us-east-1"],
        "tags": [format!("team:{g}")],
        "alertChannels": ["oncall"],
        "apiCheckDefaults": {
            "url": "https://api.example.com",
            "headers": [{ "key": "User-Agent", "value": "monform-bench" }],
        },
    })
}

fn alert_channels() -> Value {
    json!({
        "oncall": { "type": "EMAIL", "config": { "address": "oncall@example.com" } },
        "ops-webhook": {
            "type": "WEBHOOK",
            "config": {
                "name": "Ops bot",
                "url": "https://hooks.example.com/monform",
                "method": "POST",
                "webhookSecret": "${env:OPS_WEBHOOK_SECRET:-dev-secret}",
            },
        },
        "sms-oncall": { "type": "SMS", "config": { "number": "+31612345678", "name": "On-call" } },
    })
}

fn snippets() -> Value {
    json!({
        "sign-request": { "name": "Sign request", "script": { "file": "../../scripts/sign.js" } },
        "cleanup": { "name": "Clean up", "script": "await fetch('https://api.example.com/test', { method: 'DELETE' })\n" },
    })
}

/// Check `n`: its type cycles through all ten; it is in one of the groups
/// and alerts one or two channels.
fn check(n: usize) -> Value {
    let check_type = CheckType::ALL[n % CheckType::ALL.len()];
    let mut check = json!({
        "checkType": check_type.as_str(),
        "name": format!("{} check {n}", check_type.as_str().to_lowercase()),
        "group": format!("g{}", n % GROUPS),
        "alertChannels": if n.is_multiple_of(3) { json!(["oncall", "ops-webhook"]) } else { json!(["oncall"]) },
        "tags": [format!("service:{}", n % 17), "bench"],
    });
    if check_type != CheckType::Heartbeat {
        check["frequency"] = json!(FREQUENCIES[n % FREQUENCIES.len()]);
    }
    let mut spec = monform_model::samples::check_spec(check_type, n);
    // Exercise what only files have: snippets by logical id, `${env:}`, script files.
    match check_type {
        CheckType::Api => {
            spec["setupSnippet"] = json!("sign-request");
            spec["tearDownSnippet"] = json!("cleanup");
            spec["request"]["url"] = json!(format!("https://${{env:API_HOST}}/orders/{n}"));
        }
        CheckType::Browser => spec["script"] = json!({ "file": "../../scripts/login.js" }),
        _ => {}
    }
    if let (Value::Object(check), Value::Object(spec)) = (&mut check, spec) {
        check.extend(spec);
    }
    check
}
