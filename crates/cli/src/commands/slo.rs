//! `monform slo status|export|import` and `monform gate` (issue 50): the
//! figures are `ops::slo_status`'s, OpenSLO is `ops::export_openslo` /
//! `ops::import_openslo`'s; this file parses flags, writes files and
//! words the verdicts. `slo status`, `gate` and the reconciler keep what
//! they computed in `.monform/slo-status.json` (`ops::write_slo_cache`),
//! which `gate` reads when every SLO it names is fresh there.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Subcommand, ValueEnum};
use monform_engine::ops::{self, SloReport, SloStatusRequest, SloVerdict};
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

/// One SLO's figures, and why it blocks.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct GateSloJson {
    #[serde(flatten)]
    verdict: SloVerdict,
    /// Why it blocks the deploy; absent when it allows it.
    #[serde(skip_serializing_if = "Option::is_none")]
    blocks: Option<String>,
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

/// The figures of `addresses` (all SLOs when empty), read from the service.
fn compute(
    dir: &Path,
    api_url: Option<&str>,
    addresses: Vec<Address>,
    output: &Output,
) -> Result<(Vec<SloReport>, i64), Stop> {
    let now = now_ms();
    let result = block_on(async {
        let (loaded, project) = super::context::load(dir, output, Findings::Hide)?;
        let backend = open_backend(dir, &project, "monform slo status")?;
        let state = backend.load(&project.name).map_err(|e| Stop::Message(e.to_string()))?;
        let connection = connect(dir, api_url, &project).await.map_err(Stop::Message)?;
        let request = SloStatusRequest {
            addresses,
            now_ms: Some(now),
            runs_cache: Some(dir.join(ops::SLO_RUNS_CACHE)),
            ..Default::default()
        };
        let reports = ops::slo_status(&connection.client, &loaded.desired, &state, &request).await;
        connection.close().await;
        reports.map_err(|refusal| Stop::Message(refusal.to_string()))
    });
    match result {
        Ok(Ok(reports)) => Ok((reports, now)),
        Ok(Err(stop)) => Err(stop),
        Err(message) => Err(Stop::Message(message)),
    }
}

pub fn run(dir: &Path, api_url: Option<&str>, args: SloArgs, output: &Output) -> ExitCode {
    match args.command {
        SloCommand::Status(args) => status(dir, api_url, args, output),
        SloCommand::Export(args) => export(dir, args, output),
        SloCommand::Import(args) => import(args),
    }
}

fn status(dir: &Path, api_url: Option<&str>, args: StatusArgs, output: &Output) -> ExitCode {
    let computed = parse_addresses(&args.addresses).and_then(|addresses| compute(dir, api_url, addresses, output));
    let (reports, now) = match settle(Ok(computed)) {
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
    let addresses = match parse_addresses(&args.slos) {
        Ok(a) => a,
        Err(stop) => return settle::<()>(Ok(Err(stop))).err().unwrap_or(ExitCode::FAILURE),
    };
    let names: Vec<String> = addresses.iter().map(ToString::to_string).collect();
    let max_age_ms = i64::try_from(args.max_age.saturating_mul(1000)).unwrap_or(i64::MAX);
    let now = now_ms();
    let cached = (args.max_age > 0)
        .then(|| ops::read_slo_cache(dir, &names, max_age_ms, now))
        .flatten();
    let verdicts = match cached {
        Some(verdicts) => {
            // Say whose figures decide, and how old the oldest is.
            if let Some(oldest) = verdicts.iter().min_by_key(|v| v.evaluated_at) {
                eprintln!(
                    "gate: figures `{}` cached {}s ago ({}; --max-age {}s)",
                    oldest.by,
                    (now - oldest.evaluated_at) / 1000,
                    ops::SLO_CACHE,
                    args.max_age
                );
            }
            verdicts
        }
        None => match settle(Ok(compute(dir, api_url, addresses.clone(), output))) {
            Ok((reports, now)) => {
                // Best effort, as `slo status`: the next gate reads again.
                let _ = ops::write_slo_cache(dir, &reports, now, "gate");
                reports.iter().map(|r| SloVerdict::of(r, now, "gate")).collect()
            }
            Err(code) => return code,
        },
    };
    let reasons: Vec<String> = verdicts.iter().filter_map(|v| blocking_reason(v, min_budget)).collect();
    if args.format == GateFormat::Json {
        crate::render::print_json(&GateJson {
            open: reasons.is_empty(),
            min_budget,
            slos: verdicts
                .into_iter()
                .map(|verdict| GateSloJson {
                    blocks: blocking_reason(&verdict, min_budget),
                    verdict,
                })
                .collect(),
        });
    }
    if reasons.is_empty() {
        eprintln!(
            "gate: open: {} SLO(s) with at least {:.1}% of their error budget left and none burning fast",
            addresses.len(),
            min_budget * 100.0
        );
        ExitCode::SUCCESS
    } else {
        for reason in reasons.iter().filter(|_| args.format == GateFormat::Human) {
            println!("{reason}");
        }
        eprintln!(
            "gate: closed: {} of {} SLO(s) block the deploy",
            reasons.len(),
            addresses.len()
        );
        ExitCode::FAILURE
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
