//! `monform slo status|export|import` and `monform gate` (issue 50): the
//! figures are `ops::slo_status`'s, OpenSLO is `ops::export_openslo` /
//! `ops::import_openslo`'s; this file parses flags, writes files and
//! words the verdicts. `slo status`, `gate` and the reconciler keep what
//! they computed in `.monform/slo-status.json` (`ops::write_slo_cache`);
//! `gate` takes an SLO's verdict from there when it is fresh and of the
//! definition the files hold now (`ops::slo_fingerprints`), and computes
//! the others, only them.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Subcommand, ValueEnum};
use monform_config::{Loaded, Project};
use monform_engine::ops::{self, Cached, SloReport, SloStatusRequest, SloVerdict};
use monform_model::Address;

use super::context::{Findings, Stop, block_on, open_backend, settle, write_atomically};
use crate::connect::connect;
use crate::render::Output;
use crate::render::slo::{human, json_value, markdown};

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Human,
    Json,
    Markdown,
}

#[derive(Args)]
pub struct SloArgs {
    #[command(subcommand)]
    command: SloCommand,
}

#[derive(Subcommand)]
enum SloCommand {
    /// Each SLO's SLI, error budget left and burn rates from the checks' results
    Status(StatusArgs),
    /// Write the SLOs as OpenSLO v1 YAML (SLO, SLI, AlertPolicy)
    Export(ExportArgs),
    /// Read OpenSLO v1 YAML and write it as a `slos:` resource file
    Import(ImportArgs),
}

#[derive(Args)]
struct StatusArgs {
    /// The SLOs (slos.ID); all without
    addresses: Vec<String>,
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
}

#[derive(Args)]
struct ExportArgs {
    /// OpenSLO v1, the one format (required, so another can come later)
    #[arg(long, required = true)]
    openslo: bool,
    /// The file to write (atomically); without it, standard output
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Output: the YAML (to --out or standard output), or json: what was written, the SLOs, and the YAML when
    /// there is no --out (`monform schema --output slo-export`)
    #[arg(long, value_enum, default_value_t = FileFormat::Yaml)]
    format: FileFormat,
}

#[derive(Args)]
struct ImportArgs {
    /// The OpenSLO v1 YAML file
    file: PathBuf,
    /// The resource file to write (atomically); without it, standard output
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Output: the YAML (to --out or standard output), or json: what was written, the SLOs, and the YAML when
    /// there is no --out (`monform schema --output slo-import`)
    #[arg(long, value_enum, default_value_t = FileFormat::Yaml)]
    format: FileFormat,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum FileFormat {
    Yaml,
    Json,
}

/// `slo export --format json` and `slo import --format json`: the file
/// written (or the text that would be), and the SLOs in it.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "SloFile")]
pub struct SloFileJson {
    /// The file written (`--out`); absent when the text is in `yaml`.
    #[serde(skip_serializing_if = "Option::is_none")]
    written: Option<String>,
    /// The SLOs in it: export, their addresses (`slos.ID`); import, the
    /// addresses of the `slos:` entries written.
    slos: Vec<String>,
    /// Without `--out`: the YAML itself.
    #[serde(skip_serializing_if = "Option::is_none")]
    yaml: Option<String>,
}

/// Writes `text` to `out` (atomically) or standard output, as `format` says;
/// `slos` are the SLOs in it.
fn write_slo_file(out: Option<&Path>, text: &str, slos: Vec<String>, format: FileFormat) -> Result<(), Stop> {
    if let Some(out) = out {
        write_atomically(out, text)?;
    }
    match format {
        FileFormat::Yaml => match out {
            Some(out) => eprintln!("wrote {}", out.display()),
            None => print!("{text}"),
        },
        FileFormat::Json => crate::render::print_json(&SloFileJson {
            written: out.map(|o| o.display().to_string()),
            slos,
            yaml: out.is_none().then(|| text.to_owned()),
        }),
    }
    Ok(())
}

#[derive(Args)]
pub struct GateArgs {
    /// The SLOs that must allow the deploy (slos.ID ...)
    #[arg(long = "slo", value_name = "ADDRESS", num_args = 1.., required = true)]
    slos: Vec<String>,
    /// The error budget each must have left, in percent
    #[arg(long, value_name = "PERCENT", default_value = "25%")]
    min_budget: String,
    /// Use the figures `slo status` or the reconciler cached (.monform/slo-status.json) when younger than this many seconds; 0: always read the results
    #[arg(long, value_name = "SECONDS", default_value_t = 300)]
    max_age: u64,
    /// Output: human (the blocking SLOs, a line each) or json (`monform schema --output gate`)
    #[arg(long, value_enum, default_value_t = GateFormat::Human)]
    format: GateFormat,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum GateFormat {
    Human,
    Json,
}

/// `gate --format json`: the verdict and each SLO's figures.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "Gate")]
pub struct GateJson {
    /// Every SLO allows the deploy: the exit code is 0.
    open: bool,
    /// `--min-budget`, a fraction.
    min_budget: f64,
    slos: Vec<GateSloJson>,
}

/// One SLO's figures, where they come from, and why it blocks.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct GateSloJson {
    #[serde(flatten)]
    verdict: SloVerdict,
    /// The figures were taken from the cache (`.monform/slo-status.json`),
    /// not computed by this gate.
    cached: bool,
    /// Why this gate computed them rather than taking them from the
    /// cache; absent when cached.
    #[serde(skip_serializing_if = "Option::is_none")]
    computed_because: Option<Fresh>,
    /// Why it blocks the deploy; absent when it allows it.
    #[serde(skip_serializing_if = "Option::is_none")]
    blocks: Option<String>,
}

/// Why a gate computed an SLO's figures now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
enum Fresh {
    /// `--max-age 0`: the cache is not read.
    CacheOff,
    /// The cache holds no figures of it (or is of an older format).
    NotCached,
    /// The cached figures are older than `--max-age` (or from a clock ahead of this one).
    TooOld,
    /// The cached figures are of another definition: the SLO, its member
    /// checks or the environment changed since they were computed.
    DefinitionChanged,
}

fn parse_addresses(texts: &[String]) -> Result<Vec<Address>, Stop> {
    texts
        .iter()
        .map(|t| {
            t.parse::<Address>()
                .map_err(|e| Stop::Message(format!("{t}: {e}")))
                .and_then(|a| {
                    if a.kind == monform_model::Kind::Slo {
                        Ok(a)
                    } else {
                        Err(Stop::Message(format!("{t} is not an SLO's address (slos.ID)")))
                    }
                })
        })
        .collect()
}

/// The evaluation time: `MONFORM_SLO_NOW_MS` (tests against an emulator
/// whose clock is simulated) or the clock's; a cache's age is judged by it.
fn now_ms() -> i64 {
    std::env::var("MONFORM_SLO_NOW_MS")
        .ok()
        .and_then(|t| t.parse::<i64>().ok())
        .unwrap_or_else(|| chrono::Utc::now().timestamp_millis())
}

/// The figures of `addresses` (all SLOs when empty) as `loaded` defines
/// them, read from the service and evaluated at `now`.
fn compute(
    dir: &Path,
    api_url: Option<&str>,
    (loaded, project): (&Loaded, &Project),
    addresses: Vec<Address>,
    now: i64,
) -> Result<Vec<SloReport>, Stop> {
    let result = block_on(async {
        let backend = open_backend(dir, project, "monform slo status")?;
        let state = backend.load(&project.name).map_err(|e| Stop::Message(e.to_string()))?;
        let connection = connect(dir, api_url, project).await.map_err(Stop::Message)?;
        let request = SloStatusRequest {
            addresses,
            now_ms: Some(now),
            runs_cache: Some(dir.join(ops::SLO_RUNS_CACHE)),
            environment: project.environment.clone(),
            ..Default::default()
        };
        let reports = ops::slo_status(&connection.client, &loaded.desired, &state, &request).await;
        connection.close().await;
        reports.map_err(|refusal| Stop::Message(refusal.to_string()))
    });
    result.map_err(Stop::Message)?
}

pub fn run(dir: &Path, api_url: Option<&str>, args: SloArgs, output: &Output) -> ExitCode {
    match args.command {
        SloCommand::Status(args) => status(dir, api_url, args, output),
        SloCommand::Export(args) => export(dir, args, output),
        SloCommand::Import(args) => import(args),
    }
}

fn status(dir: &Path, api_url: Option<&str>, args: StatusArgs, output: &Output) -> ExitCode {
    let now = now_ms();
    let computed = parse_addresses(&args.addresses).and_then(|addresses| {
        let (loaded, project) = super::context::load(dir, output, Findings::Hide)?;
        compute(dir, api_url, (&loaded, &project), addresses, now)
    });
    let reports = match settle(Ok(computed)) {
        Ok(value) => value,
        Err(code) => return code,
    };
    let json = json_value(&reports, now);
    // For `gate`: best effort, a read-only folder only costs a fresh read.
    let _ = ops::write_slo_cache(dir, &reports, now, "slo status");
    match args.format {
        Format::Human => print!("{}", human(&reports)),
        Format::Json => println!("{}", serde_json::to_string_pretty(&json).unwrap_or_default()),
        Format::Markdown => print!("{}", markdown(&reports)),
    }
    ExitCode::SUCCESS
}

fn export(dir: &Path, args: ExportArgs, output: &Output) -> ExitCode {
    let result = super::context::load(dir, output, Findings::Hide).and_then(|(loaded, project)| {
        let text = ops::export_openslo(&loaded.desired, &project.name);
        let slos = loaded
            .desired
            .resources
            .keys()
            .filter(|a| a.kind == monform_model::Kind::Slo)
            .map(ToString::to_string)
            .collect();
        write_slo_file(args.out.as_deref(), &text, slos, args.format)
    });
    match settle(Ok(result)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(code) => code,
    }
}

fn import(args: ImportArgs) -> ExitCode {
    let result = std::fs::read_to_string(&args.file)
        .map_err(|e| Stop::Message(format!("cannot read {}: {e}", args.file.display())))
        .and_then(|text| ops::import_openslo(&text).map_err(|e| Stop::Message(format!("{}: {e}", args.file.display()))))
        .and_then(|yaml| write_slo_file(args.out.as_deref(), &yaml, written_slos(&yaml), args.format));
    match settle(Ok(result)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(code) => code,
    }
}

/// The addresses of the `slos:` entries of the resource file
/// `import_openslo` wrote: its keys are the lines indented by two spaces,
/// plain or quoted as JSON strings.
fn written_slos(yaml: &str) -> Vec<String> {
    yaml.lines()
        .filter_map(|line| {
            line.strip_prefix("  ")
                .filter(|l| !l.starts_with(' '))?
                .strip_suffix(':')
        })
        .map(|key| serde_json::from_str::<String>(key).unwrap_or_else(|_| key.to_owned()))
        .map(|id| format!("slos.{id}"))
        .collect()
}

/// `25%`, `25` or `0.25`... as a fraction: a number above 1 is percent.
fn parse_budget(text: &str) -> Option<f64> {
    let trimmed = text.trim();
    let (number, percent) = match trimmed.strip_suffix('%') {
        Some(n) => (n.trim(), true),
        None => (trimmed, false),
    };
    let value: f64 = number.parse().ok()?;
    let fraction = if percent || value > 1.0 { value / 100.0 } else { value };
    (0.0..=1.0).contains(&fraction).then_some(fraction)
}

/// Why an SLO blocks a deploy, in one line, or `None`: the same words
/// from a fresh read and from the cache.
fn blocking_reason(verdict: &SloVerdict, min_budget: f64) -> Option<String> {
    let address = &verdict.address;
    if let Some(pair) = &verdict.fast_burn {
        return Some(format!(
            "{address}: burning fast: {}x the budget's rate over {} and {}",
            pair.factor, pair.long, pair.short
        ));
    }
    match verdict.budget_left {
        None => Some(format!(
            "{address}: no results in its {} window: the budget is unknown",
            verdict.window
        )),
        Some(left) if left < min_budget => Some(format!(
            "{address}: {:.1}% of the error budget left, below the {:.1}% required",
            left * 100.0,
            min_budget * 100.0
        )),
        Some(_) => None,
    }
}

pub fn gate(dir: &Path, api_url: Option<&str>, args: GateArgs, output: &Output) -> ExitCode {
    let Some(min_budget) = parse_budget(&args.min_budget) else {
        eprintln!(
            "error: --min-budget {}: expected a percentage such as 25%",
            args.min_budget
        );
        return crate::exit::code(crate::exit::USAGE);
    };
    let now = now_ms();
    let decided = parse_addresses(&args.slos).and_then(|addresses| {
        // The files even when every verdict is cached: a verdict is used
        // only for the definition the files hold now.
        let (loaded, project) = super::context::load(dir, output, Findings::Hide)?;
        let prints = ops::slo_fingerprints(&loaded.desired, &addresses, project.environment.as_deref())
            .map_err(|refusal| Stop::Message(refusal.to_string()))?;
        let cached = lookups(dir, &args, &prints, now);
        let wanted: Vec<Address> = prints
            .iter()
            .zip(&cached)
            .filter(|(_, c)| !matches!(c, Cached::Fresh(_)))
            .map(|((address, _), _)| address.clone())
            .collect();
        let mut computed = Vec::new();
        if !wanted.is_empty() {
            let reports = compute(dir, api_url, (&loaded, &project), wanted, now)?;
            // Best effort, as `slo status`: the next gate reads again.
            let _ = ops::write_slo_cache(dir, &reports, now, "gate");
            computed = reports.iter().map(|r| SloVerdict::of(r, now, "gate")).collect();
        }
        Ok(merge(cached, computed, args.max_age == 0))
    });
    let verdicts = match settle(Ok(decided)) {
        Ok(verdicts) => verdicts,
        Err(code) => return code,
    };
    say_sources(&verdicts, &args, now);
    let reasons: Vec<String> = verdicts
        .iter()
        .filter_map(|(v, _)| blocking_reason(v, min_budget))
        .collect();
    let count = verdicts.len();
    if args.format == GateFormat::Json {
        crate::render::print_json(&GateJson {
            open: reasons.is_empty(),
            min_budget,
            slos: verdicts
                .into_iter()
                .map(|(verdict, source)| GateSloJson {
                    blocks: blocking_reason(&verdict, min_budget),
                    cached: source.is_cached(),
                    computed_because: source.fresh(),
                    verdict,
                })
                .collect(),
        });
    }
    if reasons.is_empty() {
        eprintln!(
            "gate: open: {count} SLO(s) with at least {:.1}% of their error budget left and none burning fast",
            min_budget * 100.0
        );
        ExitCode::SUCCESS
    } else {
        for reason in reasons.iter().filter(|_| args.format == GateFormat::Human) {
            println!("{reason}");
        }
        eprintln!("gate: closed: {} of {count} SLO(s) block the deploy", reasons.len(),);
        ExitCode::FAILURE
    }
}

/// Where a gate's verdict of one SLO comes from.
enum Source {
    /// The cache, fresh and of this definition.
    Cache,
    /// Computed now, and why; with the cached verdict it did not use.
    Computed(Fresh, Option<SloVerdict>),
}

impl Source {
    fn is_cached(&self) -> bool {
        matches!(self, Source::Cache)
    }

    fn fresh(&self) -> Option<Fresh> {
        match self {
            Source::Cache => None,
            Source::Computed(why, _) => Some(*why),
        }
    }
}

/// What the cache holds for each SLO of `prints` (all missing with
/// `--max-age 0`, the cache not read).
fn lookups(dir: &Path, args: &GateArgs, prints: &[(Address, String)], now: i64) -> Vec<Cached> {
    if args.max_age == 0 {
        return vec![Cached::Missing; prints.len()];
    }
    let max_age_ms = i64::try_from(args.max_age.saturating_mul(1000)).unwrap_or(i64::MAX);
    let wanted: Vec<(String, String)> = prints
        .iter()
        .map(|(address, print)| (address.to_string(), print.clone()))
        .collect();
    ops::read_slo_cache(dir, &wanted, max_age_ms, now)
}

/// Each SLO's verdict in the order asked: the cached ones as they are,
/// the others from `computed` (in the same order), each with its source
/// (`cache_off`: `--max-age 0`, the cache not read).
fn merge(cached: Vec<Cached>, computed: Vec<SloVerdict>, cache_off: bool) -> Vec<(SloVerdict, Source)> {
    let mut computed = computed.into_iter();
    cached
        .into_iter()
        .filter_map(|lookup| {
            let (why, old) = match lookup {
                Cached::Fresh(verdict) => return Some((verdict, Source::Cache)),
                Cached::Missing if cache_off => (Fresh::CacheOff, None),
                Cached::Missing => (Fresh::NotCached, None),
                Cached::TooOld(old) => (Fresh::TooOld, Some(old)),
                Cached::DefinitionChanged(old) => (Fresh::DefinitionChanged, Some(old)),
            };
            computed.next().map(|verdict| (verdict, Source::Computed(why, old)))
        })
        .collect()
}

/// Definition changes named one a line up to this many, then counted.
const CHANGED_LINES: usize = 10;

/// Says on stderr whose figures decide: the cache's (by whom, how old the
/// oldest), and each SLO computed now because its definition changed
/// since its cached figures.
fn say_sources(verdicts: &[(SloVerdict, Source)], args: &GateArgs, now: i64) {
    let ago = |at: i64| (now - at).max(0) / 1000;
    let from_cache: Vec<&SloVerdict> = verdicts
        .iter()
        .filter(|(_, source)| source.is_cached())
        .map(|(v, _)| v)
        .collect();
    if let Some(oldest) = from_cache.iter().min_by_key(|v| v.evaluated_at) {
        let share = match from_cache.len() == verdicts.len() {
            true => String::new(),
            false => format!("{} of {} SLO(s): ", from_cache.len(), verdicts.len()),
        };
        eprintln!(
            "gate: {share}figures `{}` cached {}s ago ({}; --max-age {}s)",
            oldest.by,
            ago(oldest.evaluated_at),
            ops::SLO_CACHE,
            args.max_age
        );
    }
    let changed: Vec<(&SloVerdict, &SloVerdict)> = verdicts
        .iter()
        .filter_map(|(verdict, source)| match source {
            Source::Computed(Fresh::DefinitionChanged, Some(old)) => Some((verdict, old)),
            _ => None,
        })
        .collect();
    for (verdict, old) in changed.iter().take(CHANGED_LINES) {
        eprintln!(
            "gate: {}: computed now: its definition changed since the figures `{}` cached {}s ago",
            verdict.address,
            old.by,
            ago(old.evaluated_at)
        );
    }
    if changed.len() > CHANGED_LINES {
        eprintln!(
            "gate: {} more SLO(s) computed now: their definitions changed since their cached figures",
            changed.len() - CHANGED_LINES
        );
    }
    let others = verdicts
        .iter()
        .filter(|(_, source)| matches!(source.fresh(), Some(Fresh::NotCached | Fresh::TooOld)))
        .count();
    if others > 0 && args.max_age > 0 {
        eprintln!(
            "gate: {others} SLO(s) computed now: no figures cached in the last {}s ({})",
            args.max_age,
            ops::SLO_CACHE
        );
    }
}

#[cfg(test)]
mod tests {
    use super::parse_budget;

    #[test]
    fn budgets_read_as_fractions() {
        assert_eq!(parse_budget("25%"), Some(0.25));
        assert_eq!(parse_budget("25"), Some(0.25));
        assert_eq!(parse_budget("0.5"), Some(0.5));
        assert_eq!(parse_budget("150%"), None);
        assert_eq!(parse_budget("x"), None);
    }
}
