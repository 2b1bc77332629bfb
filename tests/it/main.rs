//! The end-to-end tests: the real `monform` binary, most of them against
//! the real emulator on a loopback port. One test binary (as uv and jj keep
//! theirs), so the crates are linked once instead of once per file.

mod common;

mod agent;
mod apply;
mod apply_json;
mod budget;
mod codify;
mod conflicts;
mod declare;
mod declare_for_each;
mod destroy;
mod docs;
mod entry_environments;
mod environments;
mod examples;
mod exclude;
mod for_each_data;
mod for_each_typo;
mod import_export;
mod lifecycle;
mod lint;
mod location_keys;
mod lsp;
mod lsp_live;
mod ownership;
mod plan;
mod policy;
mod policy_runs;
mod rate_limit;
mod reconcile;
mod refresh;
mod reliability;
mod renames;
mod repo_paths;
mod review;
mod saved_env;
mod schema;
mod script_env;
mod secrets;
mod serve;
mod service_text;
mod state;
mod status_report;
mod targets;
mod test_local;
mod test_status;
mod trust;
mod unreachable;
mod untrusted_files;
mod url_secrets;
mod validate;
mod verify;
mod wording;
mod zero_diff;
