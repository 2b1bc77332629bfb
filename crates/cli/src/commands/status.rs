//! `monform status`: the project's checks with success ratio, p95 and last
//! status. One report call for all checks; one result call per check of the
//! project, at most 8 at a time. `--format html` also reads each check's
//! response times for its sparkline: the analytics of the range for API and
//! BROWSER checks (the types the analytics endpoints serve) in 24 buckets,
//! else (other types, or fewer than two buckets with runs) the results of
//! the last 6 hours (up to 100, the same call as the last status).

use std::path::Path;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use futures_util::StreamExt;
use monform_api::RunStatus;
use monform_model::{Address, Kind};

use super::context::{Stop, block_on, open_backend};
use super::test::{applied_checks, write_atomically};
use crate::connect::connect;
use crate::render::Output;
use crate::render::status::{Row, Standing, human, summary_line};
use crate::render::status_html::{self, Card};

/// Result calls in flight at once.
const CONCURRENCY: usize = 8;

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

impl Range {
    /// The analytics endpoints' name of the range: as `--range` writes it.
    fn analytics_name(self) -> String {
        self.to_possible_value()
            .map(|value| value.get_name().to_owned())
            .unwrap_or_default()
    }

    /// The reporting endpoint's own name of the range.
    pub fn report_name(self) -> &'static str {
        match self {
            Range::Last24Hours => "last24Hrs",
            Range::Last7Days => "last7Days",
            Range::Last30Days => "last30Days",
            Range::ThisWeek => "thisWeek",
            Range::ThisMonth => "thisMonth",
            Range::LastWeek => "lastWeek",
            Range::LastMonth => "lastMonth",
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

/// What was read of one check: its id, its last status (or why not) and
/// its sparkline's response times.
type Fetched = (String, Result<Option<String>, String>, Vec<Option<f64>>);

/// Buckets of a sparkline drawn from the analytics of the range.
const SPARK_BUCKETS: u32 = 24;

impl Range {
    /// The range's length in minutes (calendar ranges at their longest),
    /// for the analytics' bucket width.
    fn minutes(self) -> u32 {
        match self {
            Range::Last24Hours => 24 * 60,
            Range::Last7Days | Range::ThisWeek | Range::LastWeek => 7 * 24 * 60,
            Range::Last30Days | Range::ThisMonth | Range::LastMonth => 31 * 24 * 60,
        }
    }
}

#[derive(Args)]
pub struct StatusArgs {
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

pub fn run(dir: &Path, api_url: Option<&str>, args: StatusArgs, output: &Output) -> ExitCode {
    if args.out.is_some() && args.format != Format::Html {
        eprintln!("error: --out FILE is where --format html writes its report; human and json go to standard output");
        return ExitCode::from(2);
    }
    let html = args.format == Format::Html;
    let result = block_on(async {
        let (loaded, project) = super::context::load(dir, output, super::context::Findings::Hide)?;
        let backend = open_backend(dir, &project, "monform status")?;
        let state = backend.load(&project.name).map_err(|e| Stop::Message(e.to_string()))?;
        let checks = applied_checks(&state);
        if checks.is_empty() {
            return Ok((Vec::new(), Vec::new()));
        }
        let connection = connect(dir, api_url, &project).await?;
        let client = &connection.client;
        let report = client
            .reporting(args.range.report_name())
            .await
            .map_err(|e| Stop::Message(format!("cannot read the report: {e}")));
        let check_type = |id: &String| {
            let address = &checks[id];
            loaded
                .desired
                .resources
                .get(address)
                .map(|d| d.resource.to_json()["checkType"].clone())
        };
        let lasts: Vec<Fetched> = futures_util::stream::iter(checks.keys())
            .map(|id| {
                let endpoint = match check_type(id).as_ref().and_then(|t| t.as_str()) {
                    Some("API") => Some("api-checks"),
                    Some("BROWSER") => Some("browser-checks"),
                    _ => None,
                };
                async move {
                    let results = client.recent_results(id, if html { 100 } else { 1 }).await;
                    let last = match &results {
                        Ok(results) => Ok(results.first().map(|r| RunStatus::of_result(r).as_str().to_owned())),
                        Err(e) if e.status() == Some(404) => Ok(Some("MISSING".to_owned())),
                        Err(e) => Err(e.to_string()),
                    };
                    let mut series = Vec::new();
                    if html {
                        if let Some(endpoint) = endpoint {
                            let interval = args.range.minutes() / SPARK_BUCKETS;
                            let range = &args.range.analytics_name();
                            series = client
                                .response_times(endpoint, id, range, interval)
                                .await
                                .unwrap_or_default();
                        }
                        // Too few buckets with runs (a new check): its latest runs.
                        if series.iter().flatten().count() < 2 {
                            series = results
                                .unwrap_or_default()
                                .iter()
                                .rev()
                                .map(|r| r["responseTime"].as_f64())
                                .collect();
                        }
                    }
                    (id.clone(), last, series)
                }
            })
            .buffer_unordered(CONCURRENCY)
            .collect()
            .await;
        connection.close().await;
        let report = report?;
        let mut rows = Vec::new();
        let mut cards: Vec<Card> = Vec::new();
        for (id, address) in &checks {
            let entry = report.iter().find(|e| &e.check_id == id);
            let last = lasts
                .iter()
                .find(|(i, _, _)| i == id)
                .map(|(_, l, _)| l.clone())
                .unwrap_or(Ok(None))
                .map_err(|e| Stop::Message(format!("cannot read the results of {address}: {e}")))?;
            let desired = loaded.desired.resources.get(address);
            let fallback_name = desired
                .map(|d| d.resource.to_json())
                .and_then(|v| v.get("name").and_then(|n| n.as_str()).map(str::to_owned))
                .unwrap_or_default();
            rows.push(Row {
                address: address.to_string(),
                name: entry.map_or(fallback_name, |e| e.name.clone()),
                check_type: entry.map(|e| e.check_type.clone()).unwrap_or_default(),
                success_ratio: entry.and_then(|e| e.success_ratio),
                p95: entry.and_then(|e| e.p95),
                p99: entry.and_then(|e| e.p99),
                avg: entry.and_then(|e| e.avg),
                last_status: last,
            });
            if html {
                let group = desired
                    .and_then(|d| d.resource.to_json()["group"].as_str().map(str::to_owned))
                    .and_then(|g| loaded.desired.resources.get(&Address::new(Kind::Group, &g)))
                    .and_then(|g| g.resource.to_json()["name"].as_str().map(str::to_owned));
                let series = lasts
                    .iter()
                    .find(|(i, _, _)| i == id)
                    .map(|(_, _, s)| s.clone())
                    .unwrap_or_default();
                status_html::place(&mut cards, group, rows.last().cloned(), series);
            }
        }
        crate::render::status::sort(&mut rows);
        Ok::<_, Stop>((rows, cards))
    });
    let (rows, cards) = match super::context::settle(result) {
        Ok(value) => value,
        Err(code) => return code,
    };
    match args.format {
        Format::Human => print!("{}", human(&rows, output.stdout_color())),
        Format::Json => println!("{}", serde_json::to_string_pretty(&rows).unwrap_or_default()),
        Format::Html => {
            let title = super::export::current_project(dir, output).map_or_else(String::new, |(_, p)| p.name);
            let html = status_html::render(
                &title,
                &args.range.analytics_name(),
                &chrono::Utc::now().format("%Y-%m-%d %H:%M UTC").to_string(),
                &summary_line(&rows),
                cards,
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
    let failing = |row: &Row| match args.fail_on {
        Some(FailOn::Failing) => row.standing() == Standing::Failing,
        Some(FailOn::Degraded) => matches!(row.standing(), Standing::Failing | Standing::Degraded),
        None => false,
    };
    if rows.iter().any(failing) {
        let flag = match args.fail_on {
            Some(FailOn::Degraded) => "degraded",
            _ => "failing",
        };
        eprintln!("error: {} (--fail-on {flag})", summary_line(&rows));
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
