//! The bench's `policies` phase alone, without the emulator and the rest
//! of the bench to build: loads a project (one `monform-bench --phase
//! policies` left, or `--phase generate` with the ten policies added),
//! then times building the input and evaluating every `deny`, `violation`
//! and `warn`, in wall and CPU time (the CPU time says more on a machine
//! others share). Prints one JSON line per run, with a digest of the
//! findings in their order (the same digest: the same findings).
//!
//! With `--costs` instead of RUNS: each rule's instructions on the VM and
//! wall time, one JSON line each, against the default `[policy]
//! max-instructions` and `timeout` (issue 43).
//!
//! `cargo run --release -p monform-policy --example policy_phase -- DIR [RUNS | --costs]`

use std::path::Path;
use std::time::{Duration, Instant};

// `monform`'s allocator (crates/cli/src/main.rs): the input is 100,000
// small objects, built from both cores, where glibc's malloc measured
// slower than the binary runs.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(dir) = args.next() else {
        eprintln!("usage: policy_phase DIR [RUNS | --costs]");
        std::process::exit(2);
    };
    let second = args.next();
    let costs = second.as_deref() == Some("--costs");
    let runs: usize = second.and_then(|r| r.parse().ok()).unwrap_or(1);
    let dir = Path::new(&dir);
    let mut loaded = monform_config::load(dir, &|_: &str| None);
    if !loaded.is_ok() {
        eprintln!("the project does not load: {:?}", loaded.diagnostics.first());
        std::process::exit(1);
    }
    let Some(project) = loaded.project.clone() else {
        eprintln!("no project");
        std::process::exit(1);
    };
    let (policies, problems) = monform_policy::load(dir, &project, &mut loaded.sources);
    if !problems.is_empty() {
        eprintln!("the policies do not load: {problems:?}");
        std::process::exit(1);
    }
    if costs {
        let input = monform_policy::input::files(&loaded.desired, &project, &loaded.sources);
        let limits = monform_config::project::PolicyLimits::default();
        for cost in policies.costs(&input) {
            println!(
                "{{\"rule\":\"{}\",\"vm\":{},\"instructions\":{},\"ms\":{},\"default_max_instructions\":{},\"default_timeout_ms\":{}}}",
                cost.rule,
                cost.on_vm,
                cost.instructions.map_or("null".to_owned(), |n| n.to_string()),
                cost.took.as_millis(),
                limits.max_instructions,
                limits.timeout.as_millis()
            );
        }
        return;
    }
    for _ in 0..runs {
        let (started, cpu) = (Instant::now(), cpu_time());
        let input = monform_policy::input::files(&loaded.desired, &project, &loaded.sources);
        let (input_wall, input_cpu) = (started.elapsed(), cpu_time().saturating_sub(cpu));
        let (started, cpu) = (Instant::now(), cpu_time());
        let (findings, errors) = policies.evaluate(&input, &[]);
        let (evaluate_wall, evaluate_cpu) = (started.elapsed(), cpu_time().saturating_sub(cpu));
        println!(
            "{{\"policies\":{},\"resources\":{},\"findings\":{},\"digest\":\"{:016x}\",\"errors\":{},\"input_ms\":{},\"input_cpu_ms\":{},\"evaluate_ms\":{},\"evaluate_cpu_ms\":{}}}",
            policies.len(),
            loaded.desired.len(),
            findings.len(),
            digest(&findings),
            errors.len(),
            input_wall.as_millis(),
            input_cpu.as_millis(),
            evaluate_wall.as_millis(),
            evaluate_cpu.as_millis()
        );
    }
}

/// A digest of the findings in their order (rule, message, address,
/// field): two builds that give the same digest gave the same findings.
fn digest(findings: &[monform_policy::Finding]) -> u64 {
    use std::hash::{Hash, Hasher};
    // SipHash with fixed keys: the same findings give the same digest.
    let mut hasher = std::hash::DefaultHasher::new();
    for finding in findings {
        (finding.rule, &finding.message, &finding.address, &finding.field).hash(&mut hasher);
    }
    hasher.finish()
}

/// The process's CPU time, every thread (`/proc/self/stat`, in clock
/// ticks of 10 ms).
fn cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after_name = stat.rsplit_once(") ").map_or("", |(_, rest)| rest);
    let fields: Vec<u64> = after_name
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|f| f.parse().ok())
        .collect();
    Duration::from_millis(fields.iter().sum::<u64>() * 10)
}
