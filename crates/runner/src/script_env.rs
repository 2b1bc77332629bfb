//! The environment of every process a run starts: a BROWSER or MULTI_STEP
//! script, a PLAYWRIGHT suite (the harness or a `testCommand` through
//! `sh -c`), an API check's setup and teardown scripts. It is built from
//! nothing (issue 43). Those scripts are the files' code, in CI a pull
//! request's: whatever monform's own process holds (the CI job's
//! `MONFORM_API_KEY`, `GITHUB_TOKEN`, `AWS_*`...) they could print or send
//! away. So they get what Node.js and Chromium need, the run's variables,
//! the names the project passes on purpose (`[project] pass-env`), and
//! nothing else.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::Path;
use std::sync::Arc;

use crate::browser_setup::BrowserSetup;
use crate::variables::Variables;

/// The names a script inherits from monform's own environment when they are
/// set there, each with why. Everything else of it is left behind unless
/// `[project] pass-env` names it (a proxy, `NODE_EXTRA_CA_CERTS`...).
pub const INHERITED: &[(&str, &str)] = &[
    ("PATH", "where `node`, `sh`, `npx` and a testCommand's tools are found"),
    ("LANG", "the locale Node.js and Chromium read and write text in"),
    ("LC_ALL", "the locale, where it is set over LANG"),
    ("TZ", "the time zone of a script's dates, the machine's"),
];

/// What the runner sets itself, over any inherited, passed or variable of
/// the same name (the harness must find its files and browser), each with
/// why. `HOME` and `TMPDIR` are the run's own temporary folder.
pub const SET: &[(&str, &str)] = &[
    (
        "HOME",
        "writable, and not the CI user's: Chromium keeps its NSS database, font cache and crash \
         reports below it, npm its cache; the real one holds ~/.npmrc, ~/.aws, ~/.docker credentials",
    ),
    (
        "TMPDIR",
        "Playwright's browser profiles, removed with the run's folder even when the run is killed",
    ),
    (
        "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD",
        "`1`: playwright-core never downloads a browser; the system Chromium runs",
    ),
    ("MONFORM_CHROMIUM", "the Chromium the harness launches (when found)"),
    ("NODE_PATH", "the node_modules holding playwright-core (when found)"),
];

/// Names of monform's own environment passed to scripts on purpose, with
/// their values. `Debug` shows the names only: the values may be secrets.
#[derive(Clone, Default)]
pub(crate) struct Passed(pub(crate) Arc<[(String, OsString)]>);

impl std::fmt::Debug for Passed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.0.iter().map(|(name, _)| name)).finish()
    }
}

/// The whole environment of a script of a run: [`INHERITED`] names read
/// with `parent`, then `passed` (`[project] pass-env`, values read by the
/// caller), then the run's variables (the project's, then the check's
/// `environmentVariables`), then [`SET`] with `home` as the run's folder,
/// later ones winning. The harness adds its own files' names to this.
pub(crate) fn build(
    parent: impl Fn(&str) -> Option<OsString>,
    passed: &[(String, OsString)],
    variables: &Variables,
    setup: &BrowserSetup,
    home: &Path,
) -> BTreeMap<OsString, OsString> {
    let mut env = BTreeMap::new();
    for (name, _) in INHERITED {
        if let Some(value) = parent(name) {
            env.insert(OsString::from(name), value);
        }
    }
    for (name, value) in passed {
        env.insert(OsString::from(name), value.clone());
    }
    for (name, value) in variables.values() {
        env.insert(OsString::from(name), OsString::from(value));
    }
    env.insert("HOME".into(), home.into());
    env.insert("TMPDIR".into(), home.into());
    env.insert("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD".into(), "1".into());
    if let Some(chromium) = &setup.chromium {
        env.insert("MONFORM_CHROMIUM".into(), chromium.into());
    }
    if let Some(modules) = &setup.node_modules {
        env.insert("NODE_PATH".into(), modules.into());
    }
    env
}

/// Starts `command` with only `env` (nothing of monform's own environment).
pub(crate) fn apply(command: &mut tokio::process::Command, env: BTreeMap<OsString, OsString>) {
    command.env_clear().envs(env);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn setup() -> BrowserSetup {
        BrowserSetup {
            node: Some(PathBuf::from("/usr/bin/node")),
            node_modules: Some(PathBuf::from("/opt/node_modules")),
            chromium: Some(PathBuf::from("/usr/bin/chromium")),
        }
    }

    /// A CI job's environment: credentials next to what a script needs.
    fn ci(name: &str) -> Option<OsString> {
        let value = match name {
            "PATH" => "/usr/local/bin:/usr/bin:/bin",
            "LANG" => "C.UTF-8",
            "HOME" => "/home/runner",
            "MONFORM_API_KEY" => "marker-key",
            "GITHUB_TOKEN" => "marker-token",
            "AWS_SECRET_ACCESS_KEY" => "marker-aws",
            "HTTPS_PROXY" => "http://proxy:3128",
            _ => return None,
        };
        Some(value.into())
    }

    #[test]
    fn only_the_allow_list_the_passed_names_and_the_variables_reach_a_script() {
        let mut variables = Variables::new();
        variables.insert("BASE_URL", "https://shop.test", false);
        variables.insert("HOME", "/variables/cannot/move/home", false);
        variables.insert("LANG", "de_DE.UTF-8", false);
        let passed = [("HTTPS_PROXY".to_owned(), OsString::from("http://proxy:3128"))];
        let env = build(ci, &passed, &variables, &setup(), Path::new("/tmp/monform-run-1"));
        let names: Vec<&str> = env.keys().filter_map(|k| k.to_str()).collect();
        assert_eq!(
            names,
            [
                "BASE_URL",
                "HOME",
                "HTTPS_PROXY",
                "LANG",
                "MONFORM_CHROMIUM",
                "NODE_PATH",
                "PATH",
                "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD",
                "TMPDIR",
            ]
        );
        let get = |name: &str| env.get(&OsString::from(name)).and_then(|v| v.to_str());
        assert_eq!(get("HOME"), Some("/tmp/monform-run-1"));
        assert_eq!(get("TMPDIR"), Some("/tmp/monform-run-1"));
        assert_eq!(get("PATH"), Some("/usr/local/bin:/usr/bin:/bin"));
        // A variable wins over what is inherited, not over what the runner sets.
        assert_eq!(get("LANG"), Some("de_DE.UTF-8"));
        for value in env.values() {
            assert!(!value.to_string_lossy().contains("marker"), "{env:?}");
        }
    }

    /// A real process started the way the harness is: it sees none of the
    /// parent's environment but the allow-list.
    #[tokio::test]
    async fn a_started_process_sees_nothing_else() {
        let home = tempfile::tempdir().unwrap();
        let mut variables = Variables::new();
        variables.insert("PROJECT_VAR", "visible", false);
        let env = build(|name| std::env::var_os(name), &[], &variables, &setup(), home.path());
        let mut command = tokio::process::Command::new("/usr/bin/env");
        apply(&mut command, env);
        let output = command.output().await.unwrap();
        let printed = String::from_utf8_lossy(&output.stdout);
        let mut names: Vec<&str> = printed.lines().filter_map(|l| l.split('=').next()).collect();
        names.sort_unstable();
        let allowed: Vec<&str> = INHERITED
            .iter()
            .chain(SET)
            .map(|(n, _)| *n)
            .chain(["PROJECT_VAR"])
            .collect();
        for name in &names {
            assert!(allowed.contains(name), "{name} reached the script: {printed}");
        }
        assert!(printed.contains("PROJECT_VAR=visible"), "{printed}");
        assert!(
            printed.contains(&format!("HOME={}", home.path().display())),
            "{printed}"
        );
    }
}
