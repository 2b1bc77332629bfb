//! `monform lsp`: the language server over stdio (`monform_lsp`); the
//! project is found from each file the editor opens, not from `--dir`.

use std::process::ExitCode;

pub fn run() -> ExitCode {
    let config = monform_lsp::Config {
        environment: super::context::environment().map(str::to_owned),
        env: super::context::open_env(),
    };
    match monform_lsp::run_stdio(config) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            // stdout is the protocol's: the editor logs stderr.
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}
