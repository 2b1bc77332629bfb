//! Where Node.js, playwright-core and Chromium are for browser checks: a
//! module of its own so that `browser.rs` and `script_env.rs` (which puts
//! their paths in a script's environment) both use it without importing
//! each other.

use std::path::{Path, PathBuf};

/// What a user runs to get what browser checks need (Debian).
pub const INSTALL_HINT: &str = "install Node.js and Chromium (`apt-get install -y nodejs npm chromium`) and playwright-core \
     (`PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci` in monform's node/ folder, or `npm install playwright-core` in the project), \
     or point MONFORM_NODE, MONFORM_CHROMIUM and MONFORM_NODE_MODULES at them";

/// Where Node.js, playwright-core and Chromium are. Missing parts make
/// browser checks fail with [`INSTALL_HINT`]; other checks are unaffected.
#[derive(Debug, Clone, PartialEq)]
pub struct BrowserSetup {
    pub node: Option<PathBuf>,
    /// A `node_modules` folder holding `playwright-core`.
    pub node_modules: Option<PathBuf>,
    pub chromium: Option<PathBuf>,
}

impl BrowserSetup {
    /// Looks for them: `MONFORM_NODE`, `MONFORM_NODE_MODULES` and
    /// `MONFORM_CHROMIUM` first; else `node` and `chromium` (or
    /// `chromium-browser`, `google-chrome`) on PATH, and a `node_modules`
    /// (or `node/node_modules`) with playwright-core in `project` or a
    /// folder above it, the working folder or above, or above the running
    /// program (monform's own checkout).
    pub fn discover(project: Option<&Path>) -> BrowserSetup {
        let from_env = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        let node = from_env("MONFORM_NODE").or_else(|| on_path(&["node", "nodejs"]));
        let chromium =
            from_env("MONFORM_CHROMIUM").or_else(|| on_path(&["chromium", "chromium-browser", "google-chrome"]));
        let node_modules = from_env("MONFORM_NODE_MODULES").or_else(|| {
            let cwd = std::env::current_dir().ok();
            let exe = std::env::current_exe().ok();
            let starts = project.map(Path::to_path_buf).into_iter().chain(cwd).chain(exe);
            starts
                .flat_map(|s| s.ancestors().map(Path::to_path_buf).collect::<Vec<_>>())
                .find_map(|dir| {
                    [dir.join("node_modules"), dir.join("node").join("node_modules")]
                        .into_iter()
                        .find(|m| m.join("playwright-core").join("package.json").is_file())
                })
        });
        BrowserSetup {
            node,
            node_modules,
            chromium,
        }
    }

    /// Why browser checks cannot run, if they cannot (`browser`: Chromium
    /// and playwright-core are needed, not only Node).
    pub fn missing(&self, browser: bool) -> Option<String> {
        let mut missing = Vec::new();
        match &self.node {
            Some(node) if node.is_file() => {}
            Some(node) => missing.push(format!("Node.js (no {})", node.display())),
            None => missing.push("Node.js (no `node` on PATH)".to_owned()),
        }
        if browser {
            match &self.node_modules {
                Some(m) if m.join("playwright-core").join("package.json").is_file() => {}
                Some(m) => missing.push(format!("playwright-core (not in {})", m.display())),
                None => missing.push("playwright-core (no node_modules with it found)".to_owned()),
            }
            match &self.chromium {
                Some(c) if c.is_file() => {}
                Some(c) => missing.push(format!("Chromium (no {})", c.display())),
                None => missing.push("Chromium (no `chromium` on PATH)".to_owned()),
            }
        }
        (!missing.is_empty()).then(|| format!("cannot run locally: missing {}; {INSTALL_HINT}", missing.join(", ")))
    }
}

fn on_path(names: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|dir| names.iter().map(move |n| dir.join(n)))
        .find(|p| p.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_browser_says_what_to_install() {
        let setup = BrowserSetup {
            node: Some(PathBuf::from("/nonexistent/node")),
            node_modules: None,
            chromium: Some(PathBuf::from("/nonexistent/chromium")),
        };
        let message = setup.missing(true).unwrap_or_default();
        assert!(message.contains("Node.js (no /nonexistent/node)"), "{message}");
        assert!(message.contains("Chromium (no /nonexistent/chromium)"), "{message}");
        assert!(message.contains("apt-get install"), "{message}");
    }
}
