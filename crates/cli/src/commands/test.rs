//! `monform test`: runs the project's applied checks once in a test session,
//! waits for it, and reports one line per check and location; with
//! `--local`, runs the files' checks here instead (`test_local`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Args;
use monform_api::{Client, MAX_WAIT_SECONDS, TestSession, TestSessionRequest};
use monform_engine::State;
use monform_model::{Address, Kind};

use super::context::{Stop, block_on, open_backend, parse_targets};
use crate::connect::connect;
use crate::render::Output;
use crate::render::test::{Line, Summary, human, junit};

/// Where a test session runs when no `--location` is given.
pub const DEFAULT_LOCATION: &str = "us-east-1";

#[derive(Args)]
pub struct TestArgs {
    /// Test only this check (repeatable), e.g. checks.homepage
    #[arg(long = "target", value_name = "ADDR")]
    pub targets: Vec<String>,
    /// Test only checks carrying this tag (repeatable: every tag given)
    #[arg(long = "tags", value_name = "T")]
    pub tags: Vec<String>,
    /// Write the results as JUnit XML to FILE (for CI)
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Run every check here instead of in its own locations: a data-center location or a private location's slug (repeatable: one session each)
    #[arg(long = "location", value_name = "LOC")]
    pub locations: Vec<String>,
    /// Give up waiting after this many seconds
    #[arg(long, value_name = "SECS", default_value_t = 600)]
    timeout: u64,
    /// Run the files' checks on this machine (nothing applied, no service); --location only labels the runs
    #[arg(long)]
    pub local: bool,
    /// With --local: how many runs at once
    #[arg(long, value_name = "N", default_value_t = 4, requires = "local")]
    pub parallelism: usize,
    /// With --local: how to print the results
    #[arg(long, value_enum, default_value_t = Format::Human, requires = "local")]
    pub format: Format,
    /// With --local: print every run's console output and notes, and an API check's request, response status and assertions
    #[arg(long, short, requires = "local")]
    pub verbose: bool,
    /// With --local: keep a screenshot and a Playwright trace of each failed browser run in DIR (a folder per check and location)
    #[arg(long, value_name = "DIR", requires = "local")]
    pub artifacts: Option<PathBuf>,
}

/// How `monform test --local` prints its results.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Human,
    /// A table for a pull-request comment, then the failures with their errors
    Markdown,
    Json,
}

/// The applied checks of the state: remote id to address.
pub fn applied_checks(state: &State) -> BTreeMap<String, Address> {
    state
        .resources
        .iter()
        .filter_map(|(key, resource)| {
            let address = key.parse::<Address>().ok()?;
            (address.kind == Kind::Check).then(|| (resource.remote_id.clone(), address))
        })
        .collect()
}

/// Where a check runs in the files (defaults applied): its public
/// locations and its private locations (by slug: a managed location's
/// `slugName`, else the name as written, the slug of a remote one), or
/// [`DEFAULT_LOCATION`] when it names none (or is no longer in the files).
/// A check of a private location runs there only, so a test of it is too.
fn own_locations(loaded: &monform_config::Loaded, address: &Address) -> Vec<String> {
    let resources = &loaded.desired.resources;
    let check = resources.get(address).map(|d| d.resource.to_json());
    let names = |field: &str| -> Vec<String> {
        check
            .as_ref()
            .and_then(|v| v.get(field)?.as_array().cloned())
            .unwrap_or_default()
            .iter()
            .filter_map(|x| x.as_str().map(str::to_owned))
            .collect()
    };
    let mut locations = names("locations");
    for name in names("privateLocations") {
        let managed = Address::new(Kind::PrivateLocation, name.clone());
        let slug = resources
            .get(&managed)
            .and_then(|d| d.resource.to_json().get("slugName")?.as_str().map(str::to_owned));
        locations.push(slug.unwrap_or(name));
    }
    if locations.is_empty() {
        vec![DEFAULT_LOCATION.to_owned()]
    } else {
        locations
    }
}

/// Waits for a session with repeated completion calls (each at most 30 s;
/// a 408 means "not yet"), up to `timeout` in all.
async fn await_session(client: &Client, id: &str, timeout: Duration) -> Result<TestSession, Stop> {
    let deadline = Instant::now() + timeout;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(Stop::Message(format!(
                "test session {id} is still running after {} s (--timeout)",
                timeout.as_secs()
            )));
        }
        let wait = (left.as_secs_f64().ceil() as u32).clamp(1, MAX_WAIT_SECONDS);
        match client.await_test_session(id, wait).await {
            Ok(Some(session)) => return Ok(session),
            Ok(None) => tracing::debug!("test session {id} still running"),
            Err(e) => return Err(Stop::Message(format!("cannot await test session {id}: {e}"))),
        }
    }
}

/// A session's results of each location, with why each failed run failed:
/// the error its result names, else the message of its error group (one
/// error-group read per failing check).
async fn explain_failures(
    client: &Client,
    runs: Vec<Result<Result<TestSession, String>, Stop>>,
) -> Vec<Result<Result<TestSession, String>, Stop>> {
    let mut messages: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    let mut explained = Vec::with_capacity(runs.len());
    for run in runs {
        let mut run = run;
        if let Ok(Ok(session)) = &mut run {
            for result in session.results.iter_mut() {
                if !result.status.is_failure() || result.error.is_some() || result.error_group_ids.is_empty() {
                    continue;
                }
                if !messages.contains_key(&result.check_id) {
                    // Without the groups the line still says FAILED: the reason is a bonus.
                    let groups = client.error_messages(&result.check_id).await.unwrap_or_default();
                    messages.insert(result.check_id.clone(), groups);
                }
                result.error = messages[&result.check_id]
                    .iter()
                    .find(|(id, _)| result.error_group_ids.contains(id))
                    .map(|(_, message)| message.clone());
            }
        }
        explained.push(run);
    }
    explained
}

/// A failed run's address, location and error, as `test --local` prints them.
pub fn failure_detail(line: &Line) -> String {
    let mut out = format!("\n{} ({}):\n", line.address, line.location);
    match &line.error {
        Some(error) => out.push_str(&format!("  error: {}\n", error.replace('\n', "\n    "))),
        None => out.push_str("  error: the service gave no reason\n"),
    }
    out
}

/// Writes `text` to `path` whole or not at all (`monform_engine::durable`).
pub fn write_atomically(path: &Path, text: &str) -> Result<(), Stop> {
    monform_engine::durable::write(path, text.as_bytes())
        .map_err(|e| Stop::Message(format!("cannot write {}: {e}", path.display())))
}

struct Outcome {
    lines: Vec<Line>,
    elapsed_ms: Option<f64>,
    not_run: Vec<Address>,
    project: String,
}

pub fn run(dir: &Path, api_url: Option<&str>, args: TestArgs, output: &Output) -> ExitCode {
    if args.local {
        return super::test_local::run(dir, args, output);
    }
    let result = block_on(async {
        let targets = parse_targets(&args.targets)?;
        if let Some(other) = targets.iter().find(|t| t.kind != Kind::Check) {
            return Err(Stop::Message(format!("--target {other}: only checks can be tested")));
        }
        let (loaded, project) = super::context::load(dir, output, super::context::Findings::Hide)?;
        let backend = open_backend(dir, &project, "monform test")?;
        let state = backend.load(&project.name).map_err(|e| Stop::Message(e.to_string()))?;
        let mut checks = applied_checks(&state);
        if checks.is_empty() {
            return Err(Stop::Message(
                "the project has no applied checks: run `monform apply` first".into(),
            ));
        }
        if !targets.is_empty() {
            if let Some(missing) = targets.iter().find(|t| !checks.values().any(|a| a == *t)) {
                return Err(Stop::Message(format!(
                    "--target {missing}: not an applied check of this project"
                )));
            }
            checks.retain(|_, address| targets.contains(address));
        }
        // Which checks run where: every `--location` for all, else each
        // check's own locations in the files.
        let mut by_location: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (id, address) in &checks {
            let own = if args.locations.is_empty() {
                own_locations(&loaded, address)
            } else {
                args.locations.clone()
            };
            for location in own {
                by_location.entry(location).or_default().push(id.clone());
            }
        }
        let connection = connect(dir, api_url, &project).await?;
        let client = &connection.client;
        let timeout = Duration::from_secs(args.timeout);
        let runs = futures_util::future::join_all(by_location.iter().map(|(location, ids)| async {
            let request = TestSessionRequest {
                name: format!("monform test: {}", project.name),
                run_location: location.clone(),
                check_ids: ids.clone(),
                tags: args.tags.clone(),
            };
            // A location where no check matches (other tags, heartbeats,
            // deactivated) is not an error unless no location has any.
            let started = match client.trigger_test_session(&request).await {
                Ok(started) => started,
                Err(e) if e.status() == Some(404) => return Ok(Err(e.to_string())),
                Err(e) => return Err(Stop::Message(format!("cannot start a test session: {e}"))),
            };
            await_session(client, &started.id, timeout).await.map(Ok)
        }))
        .await;
        let runs = explain_failures(client, runs).await;
        connection.close().await;
        let mut lines = Vec::new();
        let mut elapsed: Option<f64> = None;
        let mut ran = std::collections::BTreeSet::new();
        let mut unmatched = None;
        for session in runs {
            let session = match session? {
                Ok(session) => session,
                Err(message) => {
                    unmatched.get_or_insert(message);
                    continue;
                }
            };
            elapsed = Some(elapsed.unwrap_or(0.0).max(session.time_elapsed.unwrap_or(0.0)));
            for result in session.results {
                ran.insert(result.check_id.clone());
                let address = checks
                    .get(&result.check_id)
                    .map_or_else(|| result.check_id.clone(), ToString::to_string);
                lines.push(Line {
                    address,
                    name: result.name,
                    location: result.run_location,
                    status: result.status,
                    response_time: result.response_time,
                    error: result.error,
                    artifacts: Vec::new(),
                });
            }
        }
        if let (true, Some(message)) = (lines.is_empty(), unmatched) {
            let tags = if args.tags.is_empty() {
                String::new()
            } else {
                format!(" with tags {}", args.tags.join(", "))
            };
            return Err(Stop::Message(format!(
                "no applied check{tags} can be tested: {message}"
            )));
        }
        lines.sort_by(|a, b| (&a.address, &a.location).cmp(&(&b.address, &b.location)));
        // Checks the service left out (heartbeats, deactivated, other tags).
        let not_run = if args.tags.is_empty() {
            checks
                .iter()
                .filter(|(id, _)| !ran.contains(*id))
                .map(|(_, a)| a.clone())
                .collect()
        } else {
            Vec::new()
        };
        Ok::<_, Stop>(Outcome {
            lines,
            elapsed_ms: elapsed,
            not_run,
            project: project.name.clone(),
        })
    });
    let outcome = match super::context::settle(result) {
        Ok(value) => value,
        Err(code) => return code,
    };
    print!("{}", human(&outcome.lines, outcome.elapsed_ms, output.stdout_color()));
    for line in outcome.lines.iter().filter(|l| l.status.is_failure()) {
        print!("{}", failure_detail(line));
    }
    for address in &outcome.not_run {
        eprintln!("note: {address} was not run (heartbeat or deactivated checks are not run by test sessions)");
    }
    if let Some(path) = &args.junit {
        let xml = junit(&outcome.project, &outcome.lines, outcome.elapsed_ms);
        if let Err(Stop::Message(message)) = write_atomically(path, &xml) {
            eprintln!("error: {message}");
            return ExitCode::FAILURE;
        }
    }
    if Summary::of(&outcome.lines).any_failed() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
