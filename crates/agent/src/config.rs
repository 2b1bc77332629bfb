//! The agent's configuration, from the environment (agents run in
//! containers and systemd units): `MONFORM_API_URL`, `MONFORM_AGENT_KEY`,
//! `AGENT_HEALTH_PORT`, `EXTERNAL_OBSERVABILITY`, `MONFORM_AGENT_CONCURRENCY`,
//! `MONFORM_AGENT_SHUTDOWN_GRACE`.

use monform_api::Secret;

pub const API_URL: &str = "MONFORM_API_URL";
pub const KEY: &str = "MONFORM_AGENT_KEY";
pub const HEALTH_PORT: &str = "AGENT_HEALTH_PORT";
pub const EXTERNAL_OBSERVABILITY: &str = OBSERVABILITY;
pub const OBSERVABILITY: &str = "EXTERNAL_OBSERVABILITY";
pub const CONCURRENCY: &str = "MONFORM_AGENT_CONCURRENCY";
pub const SHUTDOWN_GRACE: &str = "MONFORM_AGENT_SHUTDOWN_GRACE";

pub const DEFAULT_HEALTH_PORT: u16 = 8081;
pub const DEFAULT_CONCURRENCY: usize = 4;
const MAX_CONCURRENCY: usize = 50;
/// Seconds runs in flight may take to finish once shutdown begins: within
/// the 30 s a container platform waits by default before it kills.
pub const DEFAULT_SHUTDOWN_GRACE_SECONDS: u64 = 30;
const MAX_SHUTDOWN_GRACE_SECONDS: u64 = 3600;

/// The environment variables the agent reads, with what each means: what
/// `monform agent --help` lists, one per line.
pub const VARIABLES: &[(&str, &str)] = &[
    (API_URL, "the service's URL (required; --api-url overrides it)"),
    (
        KEY,
        "a key of the private location (required; `monform location-keys create ADDRESS`)",
    ),
    (
        HEALTH_PORT,
        "port of the probes /-/readiness, /-/liveness and /health (default 8081)",
    ),
    (
        EXTERNAL_OBSERVABILITY,
        "`off`: send no error events to the service (default: send them)",
    ),
    (CONCURRENCY, "runs executed at once, 1 to 50 (default 4)"),
    (
        SHUTDOWN_GRACE,
        "seconds runs in flight may take to finish at SIGTERM, 1 to 3600 (default 30)",
    ),
    ("RUST_LOG", "log level or filter (default info)"),
];

#[derive(Debug, Clone)]
pub struct Config {
    /// The service, without a trailing `/`.
    pub api_url: String,
    /// The private location's key: never printed (`Secret`'s `Debug` shows `***`).
    pub key: Secret,
    pub health_port: u16,
    /// Error events are sent to the service unless `EXTERNAL_OBSERVABILITY=off`.
    pub external_observability: bool,
    /// Runs executed at once.
    pub concurrency: usize,
    /// How long runs in flight may take to finish once shutdown begins.
    pub shutdown_grace: std::time::Duration,
}

impl Config {
    /// Reads the configuration through `lookup` (`std::env::var` in the
    /// binary); every problem is reported, one per line.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Config, String> {
        let mut problems = Vec::new();
        let value = |name: &str| lookup(name).map(|v| v.trim().to_owned()).filter(|v| !v.is_empty());
        let api_url = value(API_URL).unwrap_or_default();
        if api_url.is_empty() {
            problems.push(format!("{API_URL} is not set: set it to the service's URL"));
        } else if !(api_url.starts_with("http://") || api_url.starts_with("https://")) {
            problems.push(format!("{API_URL} must start with http:// or https://"));
        }
        let key = value(KEY).unwrap_or_default();
        if key.is_empty() {
            problems.push(format!(
                "{KEY} is not set: set it to a key of the private location (the service shows it once, when the key is created)"
            ));
        }
        let health_port = match value(HEALTH_PORT) {
            None => DEFAULT_HEALTH_PORT,
            Some(text) => text.parse().unwrap_or_else(|_| {
                problems.push(format!("{HEALTH_PORT} `{text}` is not a port number (0 to 65535)"));
                DEFAULT_HEALTH_PORT
            }),
        };
        let external_observability = !value(OBSERVABILITY).is_some_and(|v| v.eq_ignore_ascii_case("off"));
        let concurrency = match value(CONCURRENCY) {
            None => DEFAULT_CONCURRENCY,
            Some(text) => match text.parse::<usize>() {
                Ok(n) if (1..=MAX_CONCURRENCY).contains(&n) => n,
                _ => {
                    problems.push(format!(
                        "{CONCURRENCY} `{text}` is not a number of runs from 1 to {MAX_CONCURRENCY}"
                    ));
                    DEFAULT_CONCURRENCY
                }
            },
        };
        let shutdown_grace = match value(SHUTDOWN_GRACE) {
            None => DEFAULT_SHUTDOWN_GRACE_SECONDS,
            Some(text) => match text.parse::<u64>() {
                Ok(n) if (1..=MAX_SHUTDOWN_GRACE_SECONDS).contains(&n) => n,
                _ => {
                    problems.push(format!(
                        "{SHUTDOWN_GRACE} `{text}` is not a number of seconds from 1 to {MAX_SHUTDOWN_GRACE_SECONDS}"
                    ));
                    DEFAULT_SHUTDOWN_GRACE_SECONDS
                }
            },
        };
        if !problems.is_empty() {
            return Err(problems.join("\n"));
        }
        Ok(Config {
            api_url: api_url.trim_end_matches('/').to_owned(),
            key: Secret::new(key),
            health_port,
            external_observability,
            concurrency,
            shutdown_grace: std::time::Duration::from_secs(shutdown_grace),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from(pairs: &[(&str, &str)]) -> Result<Config, String> {
        let pairs: Vec<(String, String)> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        Config::from_lookup(|name| pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()))
    }

    #[test]
    fn defaults_and_every_problem_at_once() {
        let config = from(&[(API_URL, "http://svc:8080/"), (KEY, "pl_secret")]).unwrap();
        assert_eq!(config.api_url, "http://svc:8080");
        assert_eq!((config.health_port, config.concurrency), (8081, 4));
        assert!(config.external_observability);
        assert_eq!(format!("{config:?}").matches("pl_secret").count(), 0);
        let off = from(&[(API_URL, "http://svc"), (KEY, "k"), (OBSERVABILITY, "OFF")]).unwrap();
        assert!(!off.external_observability);
        assert_eq!(config.shutdown_grace.as_secs(), 30);
        let problems = from(&[(HEALTH_PORT, "http"), (CONCURRENCY, "0"), (SHUTDOWN_GRACE, "0")]).unwrap_err();
        assert_eq!(problems.lines().count(), 5, "{problems}");
    }
}
