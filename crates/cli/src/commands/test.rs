//! `monform test`: the project's applied checks in the service's test
//! sessions (`service`), or with `--local` the files' checks on this
//! machine (`local`); `args` holds what both read.

mod args;
mod local;
mod service;

use std::path::Path;
use std::process::ExitCode;

pub use args::TestArgs;

use crate::render::Output;

pub fn run(dir: &Path, api_url: Option<&str>, args: TestArgs, output: &Output) -> ExitCode {
    if args.local {
        local::run(dir, args, output)
    } else {
        service::run(dir, api_url, args, output)
    }
}
