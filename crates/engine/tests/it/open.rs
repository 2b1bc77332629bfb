//! Opening a project with `ops::open` and applying through `ops`: the
//! project's policies judge an apply by themselves (the front end does
//! not have to ask), and the API is chosen from what the caller read.

use monform_engine::ops::{
    self, ApiRequest, ApiUnopened, ApplyRequest, Connect, OpenEnv, OpenRequest, PolicyLoad, Refusal, Unopened,
};
use monform_engine::{ApplyOptions, Event};
use monform_testkit::Emulator;

const CHECKS: &str =
    "checks:\n  home:\n    checkType: URL\n    name: Home\n    request: { url: \"https://example.com\" }\n";

/// Denies every create of a check.
const NO_NEW_CHECKS: &str = "package monform.no_new_checks\n\ndeny contains {\"msg\": \"no new checks\", \"address\": change.address} if {\n\tsome change in input.plan.changes\n\tchange.action == \"create\"\n}\n";

fn project(policy: Option<&str>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temporary folder");
    std::fs::write(dir.path().join("monform.toml"), "[project]\nname = \"opened\"\n").expect("monform.toml");
    std::fs::write(dir.path().join("checks.yaml"), CHECKS).expect("checks.yaml");
    if let Some(policy) = policy {
        std::fs::create_dir_all(dir.path().join("policies")).expect("policies folder");
        std::fs::write(dir.path().join("policies/no_new_checks.rego"), policy).expect("policy");
    }
    dir
}

fn env_of(emulator: &Emulator) -> OpenEnv {
    OpenEnv {
        api_url: Some(emulator.url()),
        api_key: Some(emulator.server.api_key.clone()),
        account_id: Some(emulator.server.account_id.clone()),
        rate_limit: Some("off".into()),
        ..OpenEnv::empty()
    }
}

fn request<'a>(dir: &'a std::path::Path, env: &'a OpenEnv) -> OpenRequest<'a> {
    OpenRequest {
        policies: PolicyLoad::Require,
        state: Some("monform apply"),
        api: ApiRequest::Connect(Connect::default()),
        ..OpenRequest::new(dir, env)
    }
}

async fn apply(opened: &ops::Opened, overrides: &[&str]) -> (Option<String>, Result<ops::Applied, Refusal>) {
    let session = opened.session().expect("opened with a state and an API");
    let request = ApplyRequest {
        command: "monform apply".into(),
        policy_overrides: overrides.iter().map(|o| o.to_string()).collect(),
        ..Default::default()
    };
    let ready = ops::prepare_apply(&session, request).await.expect("the plan is made");
    let refused = ready.refusal().map(ToString::to_string);
    let on_event = |_: Event| {};
    (refused, ops::execute(ready, &ApplyOptions::default(), &on_event).await)
}

#[test]
fn an_apply_the_policies_deny_is_refused_without_the_front_end_asking() {
    let emulator = Emulator::start();
    let dir = project(Some(NO_NEW_CHECKS));
    let env = env_of(&emulator);
    emulator.block_on(async {
        let opened = ops::open(request(dir.path(), &env)).await.expect("the project opens");
        assert_eq!(opened.policies.policies.len(), 1);
        let (refused, result) = apply(&opened, &[]).await;
        assert!(refused.is_some(), "prepare_apply judged the plan by the policies");
        let Err(Refusal::Policy(outcome)) = result else {
            panic!(
                "the apply was not refused by the policy: {:?}",
                result.map(|a| a.report.done.len())
            );
        };
        assert_eq!(outcome.findings.len(), 1, "{outcome:?}");
        assert!(
            emulator
                .client()
                .list_all(monform_model::Kind::Check)
                .await
                .expect("listed")
                .is_empty(),
            "nothing was created"
        );
        // Overridden for the run, the same apply goes through.
        let (refused, result) = apply(&opened, &["monform.no_new_checks"]).await;
        assert_eq!(refused, None);
        let applied = result.expect("applied");
        assert!(applied.is_complete() && applied.report.done.len() == 1);
    });
}

#[test]
fn the_api_is_chosen_from_what_the_caller_read() {
    let emulator = Emulator::start();
    let dir = project(None);
    emulator.block_on(async {
        // No key read: no client, said as such.
        let env = OpenEnv {
            api_key: None,
            ..env_of(&emulator)
        };
        let error = ops::open(request(dir.path(), &env)).await.err().expect("refused");
        assert!(matches!(error.why, Unopened::Api(ApiUnopened::NoKey)), "{error}");
        assert!(
            error.loaded.is_some_and(|loaded| loaded.is_ok()),
            "the files were loaded"
        );
        // `local` in a front end that does not start the emulator.
        std::fs::write(
            dir.path().join("monform.toml"),
            "[project]\nname = \"opened\"\n\n[api]\nurl = \"local\"\n",
        )
        .expect("monform.toml");
        let env = OpenEnv::empty();
        let error = ops::open(request(dir.path(), &env)).await.err().expect("refused");
        assert!(matches!(error.why, Unopened::Api(ApiUnopened::NoLocal)), "{error}");
        // No API asked: the files, policies and state open alone.
        let files = OpenRequest {
            api: ApiRequest::None,
            ..request(dir.path(), &env)
        };
        let opened = ops::open_files(files).expect("opens without an API");
        assert!(opened.api.is_none() && opened.backend.is_some());
    });
}
