//! Ten Rego policies over the generated project (issue 32): the seven of
//! `examples/policies/` and three more, evaluated over the input of the
//! loaded files as `monform validate` does. Target: under 2 s at 100,000
//! checks. The hidden `--phase policies --dir DIR --checks N` measures it
//! alone, without the emulator.

use std::path::Path;
use std::time::{Duration, Instant};

use monform_config::Loaded;

use crate::measure::cpu_time;

const POLICIES: [(&str, &str); 10] = [
    (
        "unrouted_checks.rego",
        include_str!("../../../examples/policies/unrouted_checks.rego"),
    ),
    (
        "ignored_fields.rego",
        include_str!("../../../examples/policies/ignored_fields.rego"),
    ),
    (
        "min_locations.rego",
        include_str!("../../../examples/policies/min_locations.rego"),
    ),
    (
        "frequency_by_tag.rego",
        include_str!("../../../examples/policies/frequency_by_tag.rego"),
    ),
    (
        "browser_max_response_time.rego",
        include_str!("../../../examples/policies/browser_max_response_time.rego"),
    ),
    (
        "slo_deletes.rego",
        include_str!("../../../examples/policies/slo_deletes.rego"),
    ),
    (
        "owner_tag.rego",
        include_str!("../../../examples/policies/owner_tag.rego"),
    ),
    (
        "name_length.rego",
        "package monform.name_length\n\nwarn contains {\"msg\": \"name over 60 characters\", \"address\": r.address, \"field\": \"name\"} if {\n\tsome r in input.resources\n\tcount(object.get(r.fields, \"name\", \"\")) > 60\n}\n",
    ),
    (
        "slowest_frequency.rego",
        "package monform.slowest_frequency\n\ndeny contains {\"msg\": \"runs less than once a day\", \"address\": r.address, \"field\": \"frequency\"} if {\n\tsome r in input.resources\n\tr.kind == \"checks\"\n\tobject.get(r.fields, \"frequency\", 10) > 1440\n}\n",
    ),
    (
        "tag_count.rego",
        "package monform.tag_count\n\nwarn contains {\"msg\": \"more than 20 tags\", \"address\": r.address, \"field\": \"tags\"} if {\n\tsome r in input.resources\n\tcount(object.get(r.fields, \"tags\", [])) > 20\n}\n",
    ),
];

/// What one evaluation of the ten policies took.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PolicyFigures {
    pub policies: usize,
    pub resources: usize,
    /// Reading the policies and building `input` from the loaded files
    /// (masking included).
    pub input_ms: f64,
    /// Evaluating every `deny`, `violation` and `warn`.
    pub evaluate_ms: f64,
    /// The CPU time of each (every thread of the process): on a machine
    /// others share, the wall time says more about them than about this.
    pub input_cpu_ms: f64,
    pub evaluate_cpu_ms: f64,
    pub findings: usize,
}

/// Writes the ten policies into `dir/policies/`.
pub fn write(dir: &Path) {
    let folder = dir.join(monform_policy::DEFAULT_DIR);
    std::fs::create_dir_all(&folder).expect("policies folder");
    for (name, text) in POLICIES {
        std::fs::write(folder.join(name), text).expect("policy written");
    }
}

/// Removes them again: the phases after this one run `monform` on the
/// project, which would evaluate them too.
pub fn remove(dir: &Path) {
    std::fs::remove_dir_all(dir.join(monform_policy::DEFAULT_DIR)).expect("policies removed");
}

/// Loads the policies of `dir` as a plan does (`ops::load_policies`: the
/// policies and the input of the loaded files) and evaluates them over
/// `loaded`; the input's figures include parsing the ten policies.
pub fn measure(dir: &Path, loaded: &mut Loaded) -> PolicyFigures {
    let project = loaded.project.clone().expect("a project");
    let (started, cpu) = (Instant::now(), cpu_time());
    let (policies, problems) = monform_engine::ops::load_policies(dir, loaded, &project);
    let files = policies.files(&loaded.desired);
    let (input_took, input_cpu) = (started.elapsed(), cpu_time() - cpu);
    assert!(problems.is_empty(), "the bench's policies load: {problems:?}");
    let (started, cpu) = (Instant::now(), cpu_time());
    let (findings, errors) = policies.policies.evaluate(&files, &[]);
    let (evaluate_took, evaluate_cpu) = (started.elapsed(), cpu_time() - cpu);
    assert!(errors.is_empty(), "the bench's policies run: {errors:?}");
    PolicyFigures {
        policies: policies.policies.len(),
        resources: loaded.desired.len(),
        input_ms: ms(input_took),
        evaluate_ms: ms(evaluate_took),
        input_cpu_ms: ms(input_cpu),
        evaluate_cpu_ms: ms(evaluate_cpu),
        findings: findings.len(),
    }
}

fn ms(duration: Duration) -> f64 {
    (duration.as_secs_f64() * 10_000.0).round() / 10.0
}

/// The hidden `--phase policies` mode: generates `checks` checks into
/// `dir`, loads them and prints the figures as JSON.
pub fn child_policies(dir: &Path, checks: usize) {
    let shape = crate::generate::Shape::new(checks);
    crate::generate::generate(dir, &shape, 0).expect("project written");
    write(dir);
    let mut loaded = crate::harness::load(dir);
    let figures = measure(dir, &mut loaded);
    println!("{}", serde_json::to_string(&figures).expect("JSON"));
}

/// What a no-op `monform plan` with the ten policies spends, as the
/// binary does it (`--phase plan-policies`: the bench's own process, the
/// same engine calls in the same order, against `monform serve`): the
/// policies' own figures, which the binary does not report.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct PlanPolicyFigures {
    /// Open (files, policies, prefetched listings) + plan.
    pub plan_ms: f64,
    /// Building the files' input, after the account's objects are freed.
    pub input_ms: f64,
    /// Evaluating every rule over the files and the plan.
    pub evaluate_ms: f64,
    pub evaluate_cpu_ms: f64,
    pub findings: usize,
    /// RSS (MiB) after the plan, after the account's objects and the
    /// state are freed, after the input is built, after the evaluation;
    /// and the process's peak.
    pub rss_planned_mb: f64,
    pub rss_freed_mb: f64,
    pub rss_input_mb: f64,
    pub rss_evaluated_mb: f64,
    pub peak_rss_mb: f64,
}

/// The hidden `--phase plan-policies` mode: `monform plan`'s steps with
/// the project's policies, against the service `MONFORM_API_URL` names
/// (as `monform` reads it); prints [`PlanPolicyFigures`] as JSON.
pub fn child_plan_policies(dir: &Path) {
    use crate::measure::{peak_rss_mb, round1, rss_mb};
    use monform_engine::ops::{self, ApiRequest, Connect, OpenEnv, OpenRequest, PlanRequest, PolicyLoad};
    let env = OpenEnv::read(|name| std::env::var(name).ok());
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let mut figures = PlanPolicyFigures::default();
    runtime.block_on(async {
        let started = Instant::now();
        let request = OpenRequest {
            policies: PolicyLoad::Require,
            state: Some("monform plan"),
            api: ApiRequest::Connect(Connect {
                flag: None,
                rate_limit_flag: None,
                prefetch: true,
                local: None,
                observe: None,
            }),
            ..OpenRequest::new(dir, &env)
        };
        let opened = match ops::open(request).await {
            Ok(opened) => opened,
            Err(error) => panic!("the project does not open: {}", error.why),
        };
        let session = opened.session().expect("opened with a state and the API");
        let planned = ops::plan(&session, &PlanRequest::default())
            .await
            .expect("the plan is made");
        figures.plan_ms = ms(started.elapsed());
        figures.rss_planned_mb = round1(rss_mb());
        // As `monform plan` (commands/plan.rs).
        let (loaded, policies) = (&opened.loaded, &opened.policies);
        let ops::Planned {
            plan, actual, state, ..
        } = planned;
        let changes = ops::plan_input(&plan, &loaded.desired, &actual);
        drop((actual, state));
        figures.rss_freed_mb = round1(rss_mb());
        let started = Instant::now();
        let files = policies.files(&loaded.desired);
        figures.input_ms = ms(started.elapsed());
        figures.rss_input_mb = round1(rss_mb());
        let check = ops::PolicyCheck {
            policies: &policies.policies,
            files: &files,
            overrides: &[],
        };
        let (started, cpu) = (Instant::now(), cpu_time());
        let outcome = ops::check_plan_input(changes, &check);
        figures.evaluate_ms = ms(started.elapsed());
        figures.evaluate_cpu_ms = ms(cpu_time().saturating_sub(cpu));
        assert!(
            outcome.errors.is_empty(),
            "the bench's policies run: {:?}",
            outcome.errors
        );
        figures.findings = outcome.findings.len();
        figures.rss_evaluated_mb = round1(rss_mb());
        figures.peak_rss_mb = round1(peak_rss_mb());
        opened.close().await;
    });
    println!("{}", serde_json::to_string(&figures).expect("JSON"));
}
