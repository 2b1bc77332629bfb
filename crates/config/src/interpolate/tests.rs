use super::*;

fn env(name: &str) -> Option<String> {
    match name {
        "HOST" => Some("example.com".to_owned()),
        "HOME" => Some("/home/ci".to_owned()),
        "REGION" => Some("eu-west-1".to_owned()),
        "MONFORM_API_KEY" => Some("mk_live_secret".to_owned()),
        "DEPLOY_TOKEN" => Some("deploy-secret".to_owned()),
        _ => None,
    }
}

static POLICY: std::sync::LazyLock<EnvPolicy> = std::sync::LazyLock::new(|| EnvPolicy {
    secret: vec!["DEPLOY_TOKEN".into()],
    public: vec!["REGION".into()],
});

const SPAN: Span = Span {
    file: 0,
    start: 0,
    len: 0,
};

thread_local! {
    static BUDGET: &'static Budget = Box::leak(Box::new(Budget::default()));
}

fn scope<'a>(vars: &'a [Entry], each: Option<&'a Each>) -> Scope<'a> {
    Scope {
        env: &env,
        policy: &POLICY,
        vars: Some(vars),
        each,
        budget: BUDGET.with(|b| *b),
    }
}

fn text(s: &str) -> Result<String, Vec<InterpolationError>> {
    interpolate(s, SPAN, &scope(&[], None), 0).map(|(text, _)| text)
}

/// `text` as the value `x` of a resource: its value (JSON), whether it
/// is marked sensitive, and the errors.
fn field(s: &str, vars: &[Entry]) -> (serde_json::Value, Option<Sensitive>, Vec<InterpolationError>) {
    let mut resource = Node::new(
        SPAN,
        NodeValue::Map(vec![Entry {
            key: "x".into(),
            key_span: SPAN,
            value: Node::new(SPAN, NodeValue::Str(s.into())),
        }]),
    );
    let mut errors = Vec::new();
    interpolate_node(&mut resource, &scope(vars, None), &mut errors);
    let value = resource.get("x").unwrap().value.clone();
    (
        value.to_json(),
        value.sensitive.clone(),
        errors.into_iter().map(|(e, _)| e).collect(),
    )
}

fn node(yaml: &str) -> Node {
    parse_yaml(0, yaml).unwrap()
}

#[test]
fn replaces_set_variables_and_defaults() {
    assert_eq!(text("https://${env:HOST}/x"), Ok("https://example.com/x".into()));
    assert_eq!(text("${env:PORT:-8080}/"), Ok("8080/".into()));
    assert_eq!(text("x${env:PORT:-}"), Ok("x".into()));
}

#[test]
fn leaves_template_literals_and_escapes() {
    assert_eq!(text("`${user.name}`"), Ok("`${user.name}`".into()));
    assert_eq!(text("$${env:HOST} $${each.key}"), Ok("${env:HOST} ${each.key}".into()));
    assert_eq!(text("`${eachItem}`"), Ok("`${eachItem}`".into()));
}

#[test]
fn reports_unset_and_malformed() {
    assert_eq!(
        text("a ${env:NOPE}"),
        Err(vec![InterpolationError::Unset("NOPE".into())])
    );
    assert!(matches!(text("${env:1X} a"), Err(e) if matches!(e[0], InterpolationError::Malformed(_))));
    assert!(matches!(text("a ${env:HOST"), Err(e) if matches!(e[0], InterpolationError::Malformed(_))));
}

#[test]
fn a_whole_scalar_keeps_its_type() {
    let vars = node("base: https://x.example\ncount: 3\n").as_map().unwrap().to_vec();
    let each = Each {
        key: "orders".into(),
        key_span: SPAN,
        value: node("path: /orders\nfrequency: 1\ntags: [a, b]\n"),
    };
    let mut resource = node(concat!(
        "n: ${each.value.frequency}\nd: ${each.value.missing:-5}\nt: ${each.value.tags}\n",
        "u: \"${var:base}${each.value.path}\"\nc: ${var:count}\nk: API ${each.key}\nb: ${var:nope:-true}\n",
        "f: ${each.value.nope:-${var:count}}\ng: x${each.value.nope:-${var:count}}y\n",
    ));
    let mut errors = Vec::new();
    interpolate_node(&mut resource, &scope(&vars, Some(&each)), &mut errors);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(
        resource.to_json(),
        serde_json::json!({"n": 1, "d": 5, "t": ["a", "b"], "u": "https://x.example/orders", "c": 3, "k": "API orders", "b": true, "f": 3, "g": "x3y"})
    );
}

#[test]
fn unknown_names_are_errors() {
    let vars = node("base: x\n").as_map().unwrap().to_vec();
    let each = Each {
        key: "a".into(),
        key_span: SPAN,
        value: node("[1]"),
    };
    let mut resource = node("a: ${var:bsae}\nb: ${each.value.x}\nc: ${each.kee}\nd: x ${each.value}\n");
    let mut errors = Vec::new();
    interpolate_node(&mut resource, &scope(&vars, Some(&each)), &mut errors);
    let kinds: Vec<_> = errors.into_iter().map(|(e, _)| e).collect();
    assert!(matches!(&kinds[0], InterpolationError::UnknownVar { name, .. } if name == "bsae"));
    assert!(matches!(&kinds[1], InterpolationError::UnknownEach(_)));
    assert!(matches!(&kinds[2], InterpolationError::UnknownEach(_)));
    assert!(matches!(&kinds[3], InterpolationError::NotScalar(_)));
    let mut outside = node("a: ${each.key}\n");
    let mut errors = Vec::new();
    interpolate_node(&mut outside, &scope(&vars, None), &mut errors);
    assert!(matches!(&errors[0].0, InterpolationError::NoEach(_)));
}

/// Issue 25 item 9: `${env:}` defaults are substitutions as `${var:}`
/// ones are, not literal text.
#[test]
fn env_defaults_may_be_substitutions() {
    assert_eq!(text("${env:UNSET:-${env:HOME}}"), Ok("/home/ci".into()));
    assert_eq!(
        text("a ${env:UNSET:-${env:NOPE:-${env:HOST}}} b"),
        Ok("a example.com b".into())
    );
    assert_eq!(text("${env:UNSET:-x-${env:HOST}}"), Ok("x-example.com".into()));
    let vars = node("port: 8080\n").as_map().unwrap().to_vec();
    // Environment values are strings, their defaults too.
    assert_eq!(field("${env:PORT:-${var:port}}", &vars).0, serde_json::json!("8080"));
    assert_eq!(field("${env:PORT:-8080}", &vars).0, serde_json::json!("8080"));
    // An unset default is reported as itself.
    assert_eq!(
        text("${env:UNSET:-${env:ALSO_UNSET}}"),
        Err(vec![InterpolationError::Unset("ALSO_UNSET".into())])
    );
}

/// Issue 25 item 1: monform's credentials and `secret-env` are never
/// read, also through defaults that would not be used, or nested.
#[test]
fn credentials_are_never_read() {
    for s in [
        "${env:MONFORM_API_KEY}",
        "k=${env:MONFORM_API_KEY}",
        "${env:UNSET:-${env:MONFORM_API_KEY}}",
        "${env:HOST:-${env:MONFORM_API_KEY}}",
        "${var:nope:-x${env:UNSET:-${env:MONFORM_API_KEY}}}",
    ] {
        let (value, _, errors) = field(s, &[]);
        assert_eq!(
            errors,
            vec![InterpolationError::Forbidden("MONFORM_API_KEY".into())],
            "{s}"
        );
        assert!(!value.to_string().contains("mk_live"), "{s}: {value}");
    }
    for name in CREDENTIAL_ENV {
        assert_eq!(
            field(&format!("${{env:{name}}}"), &[]).2,
            vec![InterpolationError::Forbidden((*name).into())]
        );
    }
    assert_eq!(
        field("${env:DEPLOY_TOKEN:-none}", &[]).2,
        vec![InterpolationError::Forbidden("DEPLOY_TOKEN".into())]
    );
    // `$${` is text, not a read.
    assert_eq!(text("$${env:MONFORM_API_KEY}"), Ok("${env:MONFORM_API_KEY}".into()));
    assert_eq!(field("$${env:MONFORM_API_KEY}", &[]).2, vec![]);
}

/// Issue 25 item 1: what `${env:}` substitutes is sensitive unless the
/// variable is public, whole or part of a string, directly or through
/// a default; `[vars]` values are only as sensitive as what they read.
#[test]
fn environment_values_are_sensitive_unless_public() {
    let mut vars = node("plain: text\nsecret: x\n").as_map().unwrap().to_vec();
    vars[1].value.sensitive = Some(Sensitive::env("S"));
    for (text, sensitive) in [
        ("${env:HOST}", true),
        ("https://${env:HOST}/x", true),
        ("${env:UNSET:-${env:HOST}}", true),
        ("${env:REGION}", false),
        ("${env:UNSET:-literal}", false),
        ("${env:UNSET:-${env:REGION}}", false),
        ("plain", false),
        ("${var:plain}", false),
        ("${var:secret}", true),
        ("a-${var:secret}", true),
        ("${var:nope:-${env:HOST}}", true),
        ("${var:nope:-${var:plain}}", false),
    ] {
        assert_eq!(field(text, &vars).1.is_some(), sensitive, "{text}");
    }
    // Issue 43: which variables, for diagnostics to name in the value's place.
    let names = |text: &str| field(text, &vars).1.map(|s| s.names().to_vec()).unwrap_or_default();
    assert_eq!(names("${env:HOST}"), ["HOST"]);
    assert_eq!(names("${var:secret}"), ["S"]);
    assert_eq!(names("a-${env:HOST}-${var:secret}-${env:HOST}"), ["HOST", "S"]);
}

/// Issue 25 item 5: nesting past `MAX_NESTING` is an error, not a stack
/// overflow, however deep the text goes (a test thread's stack, debug).
#[test]
fn nesting_is_capped() {
    let nested = |depth: usize| format!("{}x{}", "${var:x:-".repeat(depth), "}".repeat(depth));
    assert_eq!(field(&nested(MAX_NESTING), &[]).0, serde_json::json!("x"));
    for depth in [MAX_NESTING + 2, 14_000] {
        assert_eq!(
            field(&nested(depth), &[]).2,
            vec![InterpolationError::TooDeep],
            "{depth}"
        );
        let env = format!("{}x{}", "${env:UNSET:-".repeat(depth), "}".repeat(depth));
        assert_eq!(field(&env, &[]).2, vec![InterpolationError::TooDeep], "{depth}");
        assert_eq!(
            field(&format!("a {}", nested(depth)), &[]).2,
            vec![InterpolationError::TooDeep]
        );
    }
}

/// Issue 25 item 4: a substitution repeated is charged to the file's budget.
#[test]
fn substitutions_are_charged_to_the_budget() {
    let vars = vec![Entry {
        key: "big".into(),
        key_span: SPAN,
        value: Node::new(SPAN, NodeValue::Str("x".repeat(1000))),
    }];
    let budget = Budget::new(10_000);
    let scope = Scope {
        budget: &budget,
        ..scope(&vars, None)
    };
    let mut list = Node::new(
        SPAN,
        NodeValue::Seq(vec![Node::new(SPAN, NodeValue::Str("${var:big}".into())); 20]),
    );
    let mut errors = Vec::new();
    interpolate_node(&mut list, &scope, &mut errors);
    assert!(!errors.is_empty());
    assert!(
        errors.iter().all(|(e, _)| matches!(e, InterpolationError::TooLarge(_))),
        "{errors:?}"
    );
    assert!(budget.used() > 10_000);
}

#[test]
fn the_schemas_name_pattern_says_what_is_name_accepts() {
    let pattern = regex::Regex::new(NAME_PATTERN).expect("a valid pattern");
    for name in [
        "A",
        "_",
        "api_key",
        "API-KEY-2",
        "a1",
        "",
        "1a",
        "-a",
        "a.b",
        "a b",
        "é",
        "a$",
    ] {
        assert_eq!(pattern.is_match(name), is_name(name), "{name:?}");
    }
}
