//! `monform status`: the project's checks with success ratio, p95 and last
//! status. One report call for all checks; one result call per check of the
//! project, at most 8 at a time.

use std::path::Path;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use futures_util::StreamExt;
use monform_api::RunStatus;

use super::context::{Stop, block_on, open_backend};
use super::test::applied_checks;
use crate::connect::connect;
use crate::render::Output;
use crate::render::status::{Row, human};

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
}

#[derive(Args)]
pub struct StatusArgs {
    /// The window of the figures (the last status is the latest result of the last 6 hours)
    #[arg(long, value_enum, default_value_t = Range::Last24Hours)]
    range: Range,
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
}

pub fn run(dir: &Path, api_url: Option<&str>, args: StatusArgs, output: &Output) -> ExitCode {
    let result = block_on(async {
        let (loaded, project) = super::context::load(dir, output)?;
        let backend = open_backend(dir, &project, "monform status")?;
        let state = backend.load(&project.name).map_err(|e| Stop::Message(e.to_string()))?;
        let checks = applied_checks(&state);
        if checks.is_empty() {
            return Ok(Vec::new());
        }
        let connection = connect(dir, api_url, &project).await?;
        let client = &connection.client;
        let report = client
            .reporting(args.range.report_name())
            .await
            .map_err(|e| Stop::Message(format!("cannot read the report: {e}")));
        let lasts: Vec<(String, Result<Option<String>, String>)> = futures_util::stream::iter(checks.keys())
            .map(|id| async move {
                let last = match client.last_result(id).await {
                    Ok(Some(result)) => Ok(Some(RunStatus::of_result(&result).as_str().to_owned())),
                    Ok(None) => Ok(None),
                    Err(e) if e.status() == Some(404) => Ok(Some("MISSING".to_owned())),
                    Err(e) => Err(e.to_string()),
                };
                (id.clone(), last)
            })
            .buffer_unordered(CONCURRENCY)
            .collect()
            .await;
        connection.close().await;
        let report = report?;
        let mut rows = Vec::new();
        for (id, address) in &checks {
            let entry = report.iter().find(|e| &e.check_id == id);
            let last = lasts
                .iter()
                .find(|(i, _)| i == id)
                .map(|(_, l)| l.clone())
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
        }
        rows.sort_by(|a, b| a.address.cmp(&b.address));
        Ok::<_, Stop>(rows)
    });
    let rows = match result {
        Ok(Ok(rows)) => rows,
        Ok(Err(Stop::Reported)) => return ExitCode::FAILURE,
        Ok(Err(Stop::Message(message))) | Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::FAILURE;
        }
    };
    match args.format {
        Format::Human => print!("{}", human(&rows, output.stdout_color())),
        Format::Json => println!("{}", serde_json::to_string_pretty(&rows).unwrap_or_default()),
    }
    ExitCode::SUCCESS
}
