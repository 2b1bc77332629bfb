//! `monform agent`: the private-location agent (`monform-agent`), until
//! SIGINT or SIGTERM. Configured by environment, as agents are deployed.

use std::io::IsTerminal;
use std::process::ExitCode;

use monform_agent::Config;

/// Runs the agent; `api_url` (`--api-url`) overrides `MONFORM_API_URL`.
pub fn run(api_url: Option<&str>, color: crate::ColorChoice) -> ExitCode {
    let ansi = match color {
        crate::ColorChoice::Always => true,
        crate::ColorChoice::Never => false,
        crate::ColorChoice::Auto => std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
    };
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
        .with_writer(std::io::stderr)
        .with_ansi(ansi)
        .init();
    let config = Config::from_lookup(|name| match (name, api_url) {
        (monform_agent::config::API_URL, Some(url)) => Some(url.to_owned()),
        _ => std::env::var(name).ok(),
    });
    let config = match config {
        Ok(config) => config,
        Err(problems) => {
            for problem in problems.lines() {
                eprintln!("error: {problem}");
            }
            return ExitCode::FAILURE;
        }
    };
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(monform_agent::run(config, super::context::shutdown_signal())) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}
