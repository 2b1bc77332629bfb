//! `monform status [ADDRESS...]`: the project's checks (or those named)
//! with success ratio, p95 and last status; `--format json` adds each SLO
//! of the files (or those named) with its SLI, budget left and burn rates;
//! `--format html` also draws each check's response times as a sparkline,
//! and each SLO as a section with its figures and a chart of its window.
//! What is read, and how, is `ops::status` (and `ops::slo_status` for the
//! SLOs).

use std::path::Path;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use monform_engine::ops::{self, SloStatusRequest, StatusRequest};
use monform_model::reports::QuickRange;
use monform_model::{Address, Kind};

use super::context::{Stop, block_on, open_backend, write_atomically};
use crate::connect::connect;
use crate::render::Output;
use crate::render::slo::SloJson;
use crate::render::status::{Standing, human, json_text, standing, summary_line};
use crate::render::status_html::{self, Card, Objective};

/// `--range`, under the analytics endpoints' names (`QuickRange`).
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Range {
    #[value(name = "last24Hours")]
    Last24Hours,
    #[value(name = "last7Days")]
    Last7Days,
    #[value(name = "last30Days")]
    Last30Days,
    #[value(name = "thisWeek")]
    ThisWeek,
    #[value(name = "thisMonth")]
    ThisMonth,
    #[value(name = "lastWeek")]
    LastWeek,
    #[value(name = "lastMonth")]
    LastMonth,
}

impl From<Range> for QuickRange {
    fn from(range: Range) -> QuickRange {
        match range {
            Range::Last24Hours => QuickRange::Last24Hours,
            Range::Last7Days => QuickRange::Last7Days,
            Range::Last30Days => QuickRange::Last30Days,
            Range::ThisWeek => QuickRange::ThisWeek,
            Range::ThisMonth => QuickRange::ThisMonth,
            Range::LastWeek => QuickRange::LastWeek,
            Range::LastMonth => QuickRange::LastMonth,
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Human,
    Json,
    /// One self-contained HTML file (inline CSS and SVG): to --out FILE, else standard output
    Html,
}

/// When `monform status` exits 1 (for CI).
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FailOn {
    /// A check whose last run failed or timed out, or that was deleted outside monform
    Failing,
    /// As `failing`, and a check whose last run was degraded
    Degraded,
}

#[derive(Args)]
pub struct StatusArgs {
    /// Only these checks (checks.ID, each one's latest result read) and SLOs (slos.ID); every one without
    #[arg(value_name = "ADDRESS")]
    addresses: Vec<String>,
    /// The window of the figures (the last status is the latest result of the last 6 hours)
    #[arg(long, value_enum, default_value_t = Range::Last24Hours)]
    range: Range,
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    /// Where `--format html` writes its file (atomically); without it, standard output
    #[arg(long, value_name = "FILE")]
    out: Option<std::path::PathBuf>,
    /// Exit 1 when a check is failing (or also degraded), after printing the report
    #[arg(long, value_enum, value_name = "failing|degraded")]
    fail_on: Option<FailOn>,
}

/// When SLOs are evaluated: `MONFORM_SLO_NOW_MS` (UNIX milliseconds, as
/// `slo status` reads it: tests against the emulator's simulated clock),
/// else now.
fn slo_now_ms() -> Option<i64> {
    std::env::var("MONFORM_SLO_NOW_MS").ok().and_then(|t| t.parse().ok())
}

/// The addresses named, checks' and SLOs' apart; any other is an error.
fn named(texts: &[String]) -> Result<(Vec<Address>, Vec<Address>), String> {
    let (mut checks, mut slos) = (Vec::new(), Vec::new());
    for text in texts {
        let address = text.parse::<Address>().map_err(|e| format!("{text}: {e}"))?;
        match address.kind {
            Kind::Check => checks.push(address),
            Kind::Slo => slos.push(address),
            _ => return Err(format!("{text} is neither a check (checks.ID) nor an SLO (slos.ID)")),
        }
    }
    Ok((checks, slos))
}

pub fn run(dir: &Path, api_url: Option<&str>, args: StatusArgs, output: &Output) -> ExitCode {
    if args.out.is_some() && args.format != Format::Html {
        eprintln!("error: --out FILE is where --format html writes its report; human and json go to standard output");
        return crate::exit::code(crate::exit::USAGE);
    }
    let (named_checks, named_slos) = match named(&args.addresses) {
        Ok(named) => named,
        Err(message) => {
            eprintln!("error: {message}");
            return crate::exit::code(crate::exit::USAGE);
        }
    };
    let html = args.format == Format::Html;
    let now_ms = slo_now_ms().unwrap_or_else(|| chrono::Utc::now().timestamp_millis());
    let result = block_on(async {
        let (loaded, project) = super::context::load(dir, output, super::context::Findings::Hide)?;
        let backend = open_backend(dir, &project, "monform status")?;
        let state = backend.load(&project.name).map_err(|e| Stop::Message(e.to_string()))?;
        // Nothing applied: nothing to ask the service.
        if ops::applied_checks(&state).is_empty() {
            return Ok((Vec::new(), Vec::new(), Vec::new(), Vec::new(), project.name));
        }
        let connection = connect(dir, api_url, &project).await?;
        // Named SLOs alone: no check; named checks alone: no SLO.
        let figures = match named_checks.is_empty() && !named_slos.is_empty() {
            true => Ok(Vec::new()),
            false => {
                let request = StatusRequest {
                    range: args.range.into(),
                    sparklines: html,
                    addresses: named_checks.clone(),
                    now_ms: slo_now_ms(),
                };
                ops::status(&connection.client, &loaded.desired, &state, &request).await
            }
        };
        // The SLOs' figures (HTML: by day): every SLO of the files, or those named.
        let wants_slos = args.format != Format::Human && (named_checks.is_empty() || !named_slos.is_empty());
        let slos = match wants_slos && !ops::slo_addresses(&loaded.desired).is_empty() {
            true => {
                let request = SloStatusRequest {
                    addresses: named_slos.clone(),
                    now_ms: Some(now_ms),
                    history: html,
                    // The settled result blocks `slo status` keeps, read once.
                    runs_cache: Some(dir.join(ops::SLO_RUNS_CACHE)),
                    ..Default::default()
                };
                Some(ops::slo_status(&connection.client, &loaded.desired, &state, &request).await)
            }
            false => None,
        };
        connection.close().await;
        let figures = figures.map_err(|refusal| Stop::Message(refusal.to_string()))?;
        let reports = match slos {
            Some(reports) => reports.map_err(|refusal| Stop::Message(refusal.to_string()))?,
            None => Vec::new(),
        };
        let objectives: Vec<Objective> = match html {
            true => reports.iter().map(status_html::objective).collect(),
            false => Vec::new(),
        };
        let slos: Vec<SloJson> = crate::render::slo::json_value(&reports, now_ms).slos;
        let mut rows = figures;
        let mut cards: Vec<Card> = Vec::new();
        if html {
            for check in &rows {
                status_html::place(&mut cards, check.clone());
            }
        }
        crate::render::status::sort(&mut rows);
        Ok::<_, Stop>((rows, cards, objectives, slos, project.name))
    });
    let (rows, cards, objectives, slos, title) = match super::context::settle(result) {
        Ok(value) => value,
        Err(code) => return code,
    };
    match args.format {
        Format::Human => print!("{}", human(&rows, output.stdout_color())),
        Format::Json => println!("{}", json_text(QuickRange::from(args.range), &rows, slos, now_ms)),
        Format::Html => {
            let html = status_html::render(
                &title,
                QuickRange::from(args.range).analytics_name(),
                &chrono::Utc::now().format("%Y-%m-%d %H:%M UTC").to_string(),
                &summary_line(&rows),
                cards,
                &objectives,
            )
            .map_err(|e| Stop::Message(format!("cannot render the report: {e}")));
            let written = match &args.out {
                Some(out) => html.and_then(|html| write_atomically(out, &html)).map(|()| {
                    eprintln!("wrote {} ({})", out.display(), summary_line(&rows));
                }),
                None => html.map(|html| print!("{html}")),
            };
            if let Err(Stop::Message(message)) = written {
                eprintln!("error: {message}");
                return ExitCode::FAILURE;
            }
        }
    }
    let failing = |row: &ops::CheckStatus| match args.fail_on {
        Some(FailOn::Failing) => standing(row) == Standing::Failing,
        Some(FailOn::Degraded) => matches!(standing(row), Standing::Failing | Standing::Degraded),
        None => false,
    };
    if rows.iter().any(failing) {
        let flag = match args.fail_on {
            Some(FailOn::Degraded) => "degraded",
            _ => "failing",
        };
        eprintln!("error: {} (--fail-on {flag})", summary_line(&rows));
        return crate::exit::code(crate::exit::FAILURE);
    }
    crate::exit::code(crate::exit::SUCCESS)
}
