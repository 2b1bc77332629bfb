//! The engine's front door: the operations every front end runs (the CLI,
//! the language server, the reconciler, the bench, the tests) on
//! a [`Session`] over one project. A rule about what a plan or an apply may
//! do lives here once: declared entries that cannot be planned, objects of
//! other projects, stale saved plans, the run budget, `preventDestroy` and
//! the mass-delete threshold, the lock. Each refusal is a typed
//! [`Refusal`] the front end words; progress goes to an [`Observer`].
//! A front end opens its project with [`open`] (monform.toml, the files,
//! the policies, the state backend, the API and its credentials, from
//! what the front end read of its environment) and keeps what is its
//! own: arguments, prompts, signals and rendering.

use std::time::{Duration, Instant};

use monform_api::Client;
use monform_config::{Desired, Project};
use monform_model::{Address, AddressPattern};

use crate::actual::Actual;
use crate::budget::RunBudget;
use crate::differ::PlanOptions;
use crate::execute::{ApplyOptions, Event, Report};
use crate::lock::{Holder, LockGuard};
use crate::plan::Plan;
use crate::refresh::Refresh;
use crate::saved::SavedPlan;
use crate::state::{State, StateBackend, StateError, Target};
use crate::verify::Verification;

mod access_ops;
mod drift_ops;
mod export_ops;
mod import_ops;
mod init_ops;
mod local_env;
mod open_ops;
mod openslo;
mod policy_ops;
mod refusal;
mod slo_cache;
mod slo_ops;
mod slo_runs;
mod state_ops;
mod status_ops;
mod test_ops;
mod trust_ops;
mod validate_ops;
/// Export's logical id from a name (`monform mcp`'s `add_check` names a check so).
pub use crate::export::slug;
/// Export's rules for a secret (`monform migrate` writes secrets as export does).
pub use crate::export::{env_name, names_service_variables};
/// What `monform migrate` writes as an `import` entry's `secretFingerprints`.
pub use crate::forms::import_fingerprint;
pub use crate::identity::uses_tags;
/// For a front end's own PostgreSQL connection (the reconciler's leader
/// lock): its errors without the URL's password, as the state backend's.
pub use crate::state::postgres::scrub_url_secrets;
pub use access_ops::{
    Access, AccessRefusal, AccessRequest, Chosen, ProjectUrl, UrlSource, choose_api, project_source, user_config_dir,
};
pub use drift_ops::{Drifted, DriftedField, drifted};
pub use export_ops::{
    Adopted, EnvVar, ExportRefusal, Exported, ExportedAccount, Fold, Folded, KnownSecrets, Owner, SplitBy, Unmanaged,
    adopt_unmanaged, check_out, export_account, find_unmanaged, find_unmanaged_for, include_name, known_secrets,
    new_project_name, write_project,
};
pub use import_ops::{ImportRefusal, Imported, import_one, list_everything, write_tag};
pub use init_ops::{
    EXAMPLE_FILE, GitIgnore, IGNORED, InitRefusal, Initialised, check_init, ignore_state, init_name, init_project,
};
pub use local_env::{EnvRead, UnpassedEnv, unpassed_env};
pub use open_ops::{
    ACCOUNT_VARIABLE, API_KEY_VARIABLE, API_URL_VARIABLE, Api, ApiRequest, ApiUnopened, Connect, EnvVars, LocalService,
    ObserveClient, OpenEnv, OpenError, OpenRequest, Opened, PolicyLoad, ProjectPolicies, RATE_LIMIT_VARIABLE,
    RateLimitSource, STATE_URL_VARIABLE, StartedLocal, StateUnopened, Unopened, connect_api, find_project,
    load_policies, local_state, open, open_files, open_postgres, open_state, parse_rate_limit,
};
pub use openslo::{OpenSloError, export_openslo, import_openslo};
pub use policy_ops::{PolicyCheck, PolicyOutcome, check_plan_input, check_policies, plan_input};
pub use refusal::{OverBudget, Refusal};
pub use slo_cache::{Cached, FastBurn, SLO_CACHE, SloVerdict, read_slo_cache, slo_fingerprint, write_slo_cache};
pub use slo_ops::{
    MemberRunCost, SLO_SPARK_BUCKETS, SloRefusal, SloReport, SloRunCost, SloSchedule, SloStatusRequest, objective_of,
    pairs_of, run_of, slo_addresses, slo_fingerprints, slo_run_costs, slo_status, window_text,
};
pub use slo_runs::SLO_RUNS_CACHE;
pub use state_ops::{
    Migrated, Moved, Removed, not_in_state, state_migrate, state_mv, state_rm, state_rm_needs_service,
};
pub use status_ops::{
    CONCURRENCY, CheckStatus, Judged, LastRun, READ_EVERY_CHECK_UP_TO, SPARK_BUCKETS, Standing, StatusRefusal,
    StatusRequest, judge, status,
};
pub use test_ops::{
    DEFAULT_LOCATION, LocalCheck, Selection, TestRefusal, TestRequest, TestRun, Tested, applied_checks, local_checks,
    project_variables, run_test_sessions, test_selection,
};
pub use trust_ops::{
    LOCAL, TRUST_FILE, TrustError, TrustRecord, Trusted, USER_CONFIG_FILE, revoke_trust, trust_project,
    trusted_projects,
};
pub use validate_ops::{Findings, Revalidation, revalidate, validate};

/// One project as a front end loaded it, with the service and the state
/// it is planned against.
pub struct Session<'a> {
    pub project: &'a Project,
    /// The files (validated; a front end refuses to plan files with errors).
    pub desired: &'a Desired,
    pub client: &'a Client,
    pub backend: &'a dyn StateBackend,
    /// The project's Rego policies with their input: an apply they deny
    /// does not start ([`prepare_apply`] judges it by itself); `None`:
    /// none were loaded. Made by `Opened::session`.
    pub policies: Option<&'a ProjectPolicies>,
    /// Where a rolling refresh stands (`Refresh::Rolling`; the
    /// reconciler's, kept from one plan to the next). `None`: a rolling
    /// refresh reads everything, as `Refresh::All`.
    pub sweep: Option<&'a std::sync::Mutex<crate::refresh::Sweep>>,
}

impl<'a> Session<'a> {
    /// A session of files loaded without `ops::open` (the engine's own
    /// tests), without policies.
    #[cfg(feature = "test-support")]
    pub fn for_tests(
        project: &'a Project,
        desired: &'a Desired,
        client: &'a Client,
        backend: &'a dyn StateBackend,
    ) -> Session<'a> {
        Session {
            project,
            desired,
            client,
            backend,
            policies: None,
            sweep: None,
        }
    }
}

/// Where progress goes: the CLI's progress line, a log, nothing.
pub trait Observer: Sync {
    fn event(&self, event: Event);
}

impl<F: Fn(Event) + Sync> Observer for F {
    fn event(&self, event: Event) {
        self(event)
    }
}

/// What to plan.
#[derive(Debug, Clone, Default)]
pub struct PlanRequest {
    /// Only these addresses and what they depend on; empty: everything.
    pub targets: Vec<Address>,
    /// Never these (`--exclude`, globs) nor what depends on them.
    pub excludes: Vec<AddressPattern>,
    /// Plan the removal of every object of the project (`destroy`).
    pub destroy: bool,
    /// How much of the account to read (`--refresh`); a destroy reads all.
    pub refresh: crate::refresh::Refresh,
}

/// A plan and what it was made from.
#[derive(Debug)]
pub struct Planned {
    /// The state as loaded (before declared moves).
    pub state: State,
    pub actual: Actual,
    pub plan: Plan,
    /// How long reading the account took, and comparing after it (for a
    /// front end's figures: the bench, a reconciler's metrics).
    pub fetched_in: Duration,
    pub planned_in: Duration,
    /// `moved` entries that match nothing and whose `to` has no state
    /// yet, each with a warning in words: the plan goes on without them.
    pub idle_moves: Vec<(monform_config::source::Span, String)>,
    /// The check runs a month before and after the plan, whatever it does.
    pub runs_a_month: RunBudget,
    /// Over `[budget] max-runs-per-month`, when the project sets one: such
    /// a plan is neither saved nor applied.
    pub over_budget: Option<OverBudget>,
}

impl Planned {
    /// The check runs a month before and after the plan; `None` for a
    /// destroy or a plan without changes (they only lower the runs).
    pub fn runs(&self, destroy: bool) -> Option<RunBudget> {
        (!destroy && self.plan.summary().has_changes()).then(|| self.runs_a_month.clone())
    }

    /// The plan as a file `apply PLANFILE` takes, or why it may not be
    /// saved (over the run budget: it could not be applied).
    pub fn saved(&self, session: &Session<'_>) -> Result<SavedPlan, Refusal> {
        if let Some(over) = &self.over_budget {
            return Err(Refusal::OverBudget(over.clone()));
        }
        let environment = session.project.environment.as_deref();
        Ok(SavedPlan::new(&self.plan, session.desired, &self.state, environment))
    }
}

/// A project that declares environments is planned, applied, imported
/// into and given a state only for one of them.
pub fn environment_chosen(project: &Project) -> Result<(), Refusal> {
    if project.environment.is_some() || project.environments.is_empty() {
        return Ok(());
    }
    Err(Refusal::NoEnvironment {
        project: project.name.clone(),
        environments: project.environment_names().into_iter().map(str::to_owned).collect(),
    })
}

/// Starts reading what [`plan`] reads of the service with
/// [`Refresh::All`] (every kind's listing, `crate::fetch`) in the
/// background, before the files are loaded: the listing does not depend on
/// them, and at 100,000 checks loading the files and listing the account
/// take seconds each. The plan's fetch takes the listings
/// ([`Client::prefetch`]); a front end that ends up not planning with
/// `Refresh::All` leaves them unread.
pub fn prefetch(client: &Client) {
    crate::fetch::prefetch(client);
}

/// Compares the files with the service: declared moves applied to a copy
/// of the state, the account fetched, clashes and bad entries refused, the
/// plan made and what its deletes of checks discard asked for.
pub async fn plan(session: &Session<'_>, request: &PlanRequest) -> Result<Planned, Refusal> {
    let mut planned = plan_deferred(session, request).await?;
    planned.plan.fill_create_fields(session.desired);
    Ok(planned)
}

/// [`plan`], its creates' fields left to be built when asked
/// (`Change::fields_in`): what an apply plans with, showing each create as
/// it streams the plan (at 100,000 checks they were 500 MB held at once).
async fn plan_deferred(session: &Session<'_>, request: &PlanRequest) -> Result<Planned, Refusal> {
    environment_chosen(session.project)?;
    let project = &session.project.name;
    let state = session.backend.load(project).map_err(Refusal::State)?;
    // Plans see the files' `moved` entries made, as after `state mv`; the
    // apply records them first. `destroy` deletes objects where the state has them.
    let declared = if request.destroy {
        Default::default()
    } else {
        crate::declared::state_moves(&state, session.desired)
    };
    refusal::moved_conflicts(&declared.conflicts)?;
    let idle_moves = declared.idle.iter().map(|entry| idle_warning(entry)).collect();
    // A copy only when entries move: the state of 10,000 checks is 8 MB.
    let planning = if declared.moves.is_empty() {
        std::borrow::Cow::Borrowed(&state)
    } else {
        std::borrow::Cow::Owned(crate::declared::moved_state(&state, &declared.moves))
    };
    let started = Instant::now();
    let refresh = if request.destroy { Refresh::All } else { request.refresh };
    let mut actual = match (refresh, session.sweep) {
        (Refresh::All, _) | (Refresh::Rolling, None) => {
            crate::fetch::fetch(session.client, project, session.desired, &planning).await
        }
        (Refresh::Rolling, Some(sweep)) => {
            // Taken out for the read: a lock is not held across it.
            let mut taken = std::mem::take(&mut *sweep.lock().unwrap_or_else(|p| p.into_inner()));
            let read =
                crate::refresh::fetch_rolling(session.client, project, session.desired, &planning, &mut taken).await;
            *sweep.lock().unwrap_or_else(|p| p.into_inner()) = taken;
            read
        }
        (partial, _) => {
            crate::refresh::fetch_partial(session.client, project, session.desired, &planning, partial).await
        }
    }
    .map_err(Refusal::Fetch)?;
    // Local kinds (SLOs) are not in the service: the state is their account.
    crate::refresh::trust_local(session.desired, &planning, &mut actual);
    let fetched_in = started.elapsed();
    refusal::clashes(project, session.desired, &actual)?;
    if !request.destroy {
        let problems = crate::declared::import_problems(session.desired, &actual, project);
        refusal::import_problems(&problems)?;
    }
    let empty = Desired::default();
    let desired = if request.destroy { &empty } else { session.desired };
    let options = PlanOptions {
        targets: request.targets.clone(),
        excludes: request.excludes.clone(),
        destroying: request.destroy.then_some(session.desired),
    };
    let mut plan = crate::differ::plan(project, desired, &actual, &planning, &options);
    if !plan.cycle.is_empty() {
        return Err(Refusal::Cycle(plan.cycle));
    }
    plan.refreshed.mode = refresh;
    // Offline, what deletes discard is not asked either.
    if refresh != Refresh::None {
        plan.discarded = crate::discards::discarded(session.client, &plan, &actual).await;
    }
    let runs_a_month = crate::budget::run_budget(desired, &actual);
    let over_budget = OverBudget::of(&runs_a_month, session.project.max_runs_per_month);
    Ok(Planned {
        runs_a_month,
        over_budget,
        state,
        actual,
        plan,
        fetched_in,
        planned_in: started.elapsed().saturating_sub(fetched_in),
        idle_moves,
    })
}

/// A plan against another service or account than the state was applied
/// to, which would create again objects the state has: most likely the
/// wrong URL or key, not a project to create.
#[derive(Debug, Clone, PartialEq)]
pub struct OtherTarget {
    /// Where the state was applied.
    pub recorded: Target,
    /// Where this plan looked.
    pub now: Target,
    /// Objects of the state the plan creates (they are not there).
    pub recreated: usize,
    /// Objects in the state.
    pub in_state: usize,
}

impl Planned {
    /// [`OtherTarget`] when the plan is against `now`, another service
    /// than the state's, and creates objects the state has. A state from
    /// before targets were recorded, or a service holding the objects
    /// (`monform serve` on the database `local` used), says nothing.
    pub fn other_target(&self, now: &Target) -> Option<OtherTarget> {
        let recorded = self.state.target.as_ref().filter(|t| *t != now)?;
        let recreated = self
            .plan
            .changes
            .iter()
            .filter(|c| {
                c.action == crate::plan::Action::Create && self.state.resources.contains_key(&c.address.to_string())
            })
            .count();
        (recreated > 0).then(|| OtherTarget {
            recorded: recorded.clone(),
            now: now.clone(),
            recreated,
            in_state: self.state.resources.len(),
        })
    }
}

/// A `moved` entry that does nothing, in words.
fn idle_warning(entry: &monform_config::Moved) -> (monform_config::source::Span, String) {
    (
        entry.span,
        format!(
            "moved: neither {} nor {} is in the state: this entry moves nothing",
            entry.from, entry.to
        ),
    )
}

/// What to apply.
#[derive(Debug, Default)]
pub struct ApplyRequest {
    pub plan: PlanRequest,
    /// A reviewed plan (`plan --out`): applied only if planning again gives
    /// exactly it. Its addresses are the targets.
    pub saved: Option<SavedPlan>,
    pub allow_mass_delete: bool,
    /// Overwrite changes made outside monform that the files change too
    /// (conflicts) without a person's yes ([`Ready::approve_conflicts`]).
    pub allow_conflicts: bool,
    /// The policies' rules to let pass for this run (`--policy-override`:
    /// a package or one rule of it).
    pub policy_overrides: Vec<String>,
    /// Who takes the lock, as its holder shows it (`monform apply`).
    pub command: String,
}

/// A plan ready to apply: the lock held, the plan made and checked.
pub struct Ready<'s> {
    session: &'s Session<'s>,
    _lock: LockGuard,
    /// A stale lock taken over, to warn about.
    pub took_over: Option<Holder>,
    pub planned: Planned,
    /// The runs a month (see [`Planned::runs`]).
    pub runs: Option<RunBudget>,
    destroy: bool,
    /// Why it may not run (over the budget, unsafe): found before any
    /// confirmation, so a front end shows the plan and then the refusal.
    refused: Option<Refusal>,
    /// The policies' findings, when the project has policies.
    pub policy: Option<PolicyOutcome>,
    /// The conflicts nobody approved yet (`safety::conflicts_to_approve`).
    conflicts: Vec<crate::safety::Overwrite>,
}

impl Ready<'_> {
    pub fn plan(&self) -> &Plan {
        &self.planned.plan
    }

    /// Why [`execute`] would refuse this plan, if it would.
    pub fn refusal(&self) -> Option<&Refusal> {
        self.refused.as_ref()
    }

    /// The conflicts [`execute`] refuses to overwrite until a person
    /// approves them: a front end asks, as it asks before a destroy.
    pub fn conflicts(&self) -> &[crate::safety::Overwrite] {
        &self.conflicts
    }

    /// A person saw the conflicts and answered yes to overwriting them.
    pub fn approve_conflicts(&mut self) {
        self.conflicts.clear();
    }
}

/// Takes the lock and plans for an apply (or a destroy). A stale saved
/// plan is refused at once; the run budget and the safety guards are
/// checked, and the project's policies evaluated ([`Session::policies`]),
/// and kept for [`execute`] to refuse on.
pub async fn prepare_apply<'s>(session: &'s Session<'s>, request: ApplyRequest) -> Result<Ready<'s>, Refusal> {
    let mut plan_request = request.plan;
    if plan_request.refresh == Refresh::None && !plan_request.destroy {
        return Err(Refusal::OfflineApply);
    }
    if let Some(saved) = &request.saved {
        plan_request.targets = saved.addresses();
    }
    // One apply at a time: the lock is taken before anything is read.
    let lock = session.backend.lock(&request.command).map_err(Refusal::Lock)?;
    let took_over = lock.took_over.clone();
    let planned = plan_deferred(session, &plan_request).await?;
    if let Some(saved) = &request.saved {
        saved
            .verify(&planned.plan, session.desired, &planned.state)
            .map_err(Refusal::Stale)?;
    }
    let runs = planned.runs(plan_request.destroy);
    let over = runs
        .as_ref()
        .and_then(|runs| OverBudget::of(runs, session.project.max_runs_per_month));
    // Deleting everything is what `destroy` is for, after its own
    // confirmation: the mass-delete guard is for applies, where so many
    // deletes are a surprise. `preventDestroy` holds for both.
    let allow_mass_delete = request.allow_mass_delete || plan_request.destroy;
    let unsafe_changes = crate::safety::check(&planned.plan, session.desired, &planned.state, allow_mass_delete);
    // A destroy overwrites nothing: it deletes, and says so.
    let conflicts = match request.allow_conflicts || plan_request.destroy {
        true => Vec::new(),
        false => crate::safety::conflicts_to_approve(&planned.plan, session.desired),
    };
    let refused = match (over, unsafe_changes.is_empty()) {
        (Some(over), _) => Some(Refusal::OverBudget(over)),
        (None, false) => Some(Refusal::Unsafe(unsafe_changes)),
        (None, true) => None,
    };
    let mut ready = Ready {
        session,
        _lock: lock,
        took_over,
        planned,
        runs,
        destroy: plan_request.destroy,
        refused,
        policy: None,
        conflicts,
    };
    // The project's policies judge every apply: no front end has to ask.
    if let Some(policies) = session.policies.filter(|p| !p.is_empty()) {
        ready.judge(policies, &request.policy_overrides);
    }
    Ok(ready)
}

/// What an apply did.
pub struct Applied {
    pub report: Report,
    /// Reading back what changed; `None` when nothing changed.
    pub verification: Option<Result<Verification, monform_api::Error>>,
    /// Whether the service's normal forms verification found were
    /// recorded; `None` when there were none.
    pub normal_forms_saved: Option<Result<(), StateError>>,
}

impl Applied {
    /// Every change done and, if anything changed, each read back as planned.
    pub fn is_complete(&self) -> bool {
        let verified = self
            .verification
            .as_ref()
            .is_none_or(|v| v.as_ref().is_ok_and(|v| v.failures.is_empty()));
        self.report.is_success() && verified
    }
}

/// Applies a ready plan: the changes in dependency order, each recorded in
/// the state as it completes; then what changed is read back and the
/// service's normal forms are recorded. The lock is released at the end.
pub async fn execute(ready: Ready<'_>, options: &ApplyOptions, observer: &dyn Observer) -> Result<Applied, Refusal> {
    if let Some(refusal) = ready.refused {
        return Err(refusal);
    }
    if !ready.conflicts.is_empty() {
        return Err(Refusal::Conflicts(ready.conflicts));
    }
    // The lock is held until the end, through the read-back.
    let Ready {
        session,
        _lock,
        mut planned,
        destroy,
        ..
    } = ready;
    let has_changes = planned.plan.summary().has_changes();
    // A destroy wants nothing: the files only guard it (preventDestroy).
    let nothing = Desired::default();
    let desired = if destroy { &nothing } else { session.desired };
    let input = crate::execute::ApplyInput {
        client: session.client,
        plan: &planned.plan,
        desired,
        actual: &planned.actual,
        backend: session.backend,
    };
    let on_event = |event: Event| observer.event(event);
    // The state is the apply's to change: taken, not copied.
    let state = std::mem::replace(&mut planned.state, State::new(&session.project.name));
    let (report, state) = crate::execute::apply(input, state, options, &on_event)
        .await
        .map_err(Refusal::Apply)?;
    // The read-back needs the changes' addresses and ids only: the
    // remaining fields and the account as fetched go before it reads the
    // objects back.
    planned.actual = Actual::default();
    for change in &mut planned.plan.changes {
        change.fields = Vec::new();
    }
    let verification = if has_changes {
        Some(crate::verify::verify(session.client, &planned.plan, &report.done, session.desired, &state).await)
    } else {
        None
    };
    let normal_forms_saved = match &verification {
        Some(Ok(v)) if !v.normal_forms.is_empty() => {
            Some(crate::normal::save(session.backend, state, &v.normal_forms).map(|_| ()))
        }
        _ => None,
    };
    Ok(Applied {
        report,
        verification,
        normal_forms_saved,
    })
}
