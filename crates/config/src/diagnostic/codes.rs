//! Every diagnostic code monform reports, with an example that raises it and
//! how to fix it: the data `monform docs` writes the diagnostics reference
//! from. A test holds this list to the codes the sources use, so a new
//! code cannot ship undocumented.

/// What a code is about, where it comes from, and how to fix it.
pub struct CodeDoc {
    /// `monform::...`, as diagnostics carry it.
    pub code: &'static str,
    /// The problem, in a sentence.
    pub what: &'static str,
    /// A file that raises it, when one does: `(file name, text)`. The file
    /// is a resource file, or `monform.toml` (then it replaces the
    /// project's); the docs' tests load each and expect the code.
    pub example: Option<(&'static str, &'static str)>,
    /// What the message says, roughly.
    pub message: &'static str,
    /// How to make it go away.
    pub fix: &'static str,
}

/// A `[lint]` key of monform.toml and the code its findings carry.
pub struct LintKeyDoc {
    pub key: &'static str,
    pub code: &'static str,
    pub default: &'static str,
}

/// The `[lint]` keys (`Lint::KEYS`, in that order) with their codes.
pub const LINT_KEYS: &[LintKeyDoc] = &[
    LintKeyDoc {
        key: "unrouted-checks",
        code: "monform::unrouted-check",
        default: "warn",
    },
    LintKeyDoc {
        key: "ignored-fields",
        code: "monform::ignored-field",
        default: "warn",
    },
    LintKeyDoc {
        key: "global-alert-settings",
        code: "monform::global-alert-settings",
        default: "note",
    },
    LintKeyDoc {
        key: "shared-objects",
        code: "monform::shared-object",
        default: "error",
    },
];

/// Strings of the form `monform::NAME` in the sources that are not
/// diagnostic codes: `tracing` targets, and codes only tests make up.
pub const NOT_CODES: &[&str] = &[
    "monform::api",
    "monform::emulator",
    "monform::listen",
    "monform::rule",
    "monform::many",
    "monform::few",
];

const OWN_CHECK: &str =
    "checks:\n  home:\n    checkType: URL\n    name: Home\n    request: { url: \"https://example.com/\" }\n";

/// Every code, by name.
pub const CODES: &[CodeDoc] = &[
    CodeDoc {
        code: "monform::allow-paths",
        what: "A folder of `[project] allow-paths` cannot be used.",
        example: Some((
            "monform.toml",
            "[project]\nname = \"docs\"\nallow-paths = [\"../no-such-folder\"]\n",
        )),
        message: "project.allow-paths: cannot use `../no-such-folder`: ...",
        fix: "Name a folder that exists, relative to the project's root.",
    },
    CodeDoc {
        code: "monform::cycle",
        what: "References that go round in a circle.",
        example: None,
        message: "reference cycle: a -> b -> a",
        fix: "Break the circle: one of the resources must not name the other.",
    },
    CodeDoc {
        code: "monform::dangling-reference",
        what: "A reference names a logical id no resource of the files has.",
        example: Some((
            "monitors/home.yaml",
            "checks:\n  home:\n    checkType: URL\n    name: Home\n    request: { url: \"https://example.com/\" }\n    alertChannels: [oncal]\nalertChannels:\n  oncall: { type: EMAIL, config: { address: oncall@example.com } }\n",
        )),
        message: "checks.home.alertChannels[0]: `oncal` is not a alertChannels of the files (did you mean `oncall`?)",
        fix: "Name a resource the files define (the help suggests the nearest), or define it.",
    },
    CodeDoc {
        code: "monform::declared",
        what: "A `moved` or `import` entry that cannot be planned against the account (an id the account does not have, another project's object, a move onto an address that has an object).",
        example: None,
        message: "monitors/home.yaml:3:5: import: ... (the plan stops)",
        fix: "Correct the entry at the file and line named, or remove it.",
    },
    CodeDoc {
        code: "monform::duplicate",
        what: "One logical id defined twice, in two files (twice in one file is a YAML or TOML syntax error).",
        example: None,
        message: "duplicate logical id: checks.home is defined twice",
        fix: "Rename one of them (and add a `moved` entry if it was applied).",
    },
    CodeDoc {
        code: "monform::each",
        what: "`${each...}` outside a `forEach` resource, or naming an item value that does not exist.",
        example: Some((
            "monitors/home.yaml",
            "checks:\n  home:\n    checkType: URL\n    name: \"Home ${each.key}\"\n    request: { url: \"https://example.com/\" }\n",
        )),
        message: "`${each.key}` is only defined in a resource with forEach or forEachFile",
        fix: "Add `forEach` to the resource, or write the value out.",
    },
    CodeDoc {
        code: "monform::encoding",
        what: "A file that is not UTF-8.",
        example: None,
        message: "monitors/home.yaml is not UTF-8 at line 3, column 9 (byte 41)",
        fix: "Save the file as UTF-8.",
    },
    CodeDoc {
        code: "monform::env",
        what: "`${env:NAME}` names a variable that is not set and has no default.",
        example: Some((
            "monitors/home.yaml",
            "checks:\n  home:\n    checkType: URL\n    name: Home\n    request: { url: \"${env:MONFORM_DOCS_UNSET_HOST}/\" }\n",
        )),
        message: "environment variable `MONFORM_DOCS_UNSET_HOST` is not set",
        fix: "Set the variable, or give a default: `${env:NAME:-value}`.",
    },
    CodeDoc {
        code: "monform::env-policy",
        what: "`[project] secret-env` or `public-env` names something that is not a variable's name, or makes a credential public.",
        example: Some((
            "monform.toml",
            "[project]\nname = \"docs\"\npublic-env = [\"MONFORM_API_KEY\"]\n",
        )),
        message: "project.public-env: `MONFORM_API_KEY` is a credential and can never be read, let alone shown",
        fix: "Write plain variable names; never list monform's credentials in public-env.",
    },
    CodeDoc {
        code: "monform::environment",
        what: "An environment monform.toml does not declare (`--env`, or a resource's `environments`).",
        example: Some((
            "monitors/home.yaml",
            "checks:\n  home:\n    checkType: URL\n    name: Home\n    environments: [prod]\n    request: { url: \"https://example.com/\" }\n",
        )),
        message: "unknown environment `prod`",
        fix: "Use a name of `[environments]` (the message lists them), or declare it.",
    },
    CodeDoc {
        code: "monform::for-each",
        what: "A `forEach` or `forEachFile` that cannot be expanded: a wrong shape, an invalid glob, a glob matching no file, both at once.",
        example: Some((
            "monitors/home.yaml",
            "checks:\n  home:\n    forEach: 5\n    checkType: URL\n    name: \"Home ${each.key}\"\n    request: { url: \"https://example.com/\" }\n",
        )),
        message: "checks.home.forEach: expected a map, a list of strings, \"${var:NAME}\" or { file: PATH }",
        fix: "Give a map, a list of strings, `\"${var:NAME}\"` or `{ file: PATH }` (see the forEach guide).",
    },
    CodeDoc {
        code: "monform::forbidden-env",
        what: "`${env:NAME}` names one of monform's credentials or a `secret-env` variable: the files may never read it.",
        example: Some((
            "monitors/home.yaml",
            "variables:\n  KEY: { value: \"${env:MONFORM_API_KEY}\", secret: true }\n",
        )),
        message: "`${env:MONFORM_API_KEY}` may not be read: it is monform's API key",
        fix: "Read the value from a variable of its own, set in the service or CI, never monform's credentials.",
    },
    CodeDoc {
        code: "monform::global-alert-settings",
        what: "Checks that reach a channel but alert by the account's global alert settings, which monform cannot read (a note; `[lint] global-alert-settings`).",
        example: None,
        message: "N checks alert by the account's global alert settings",
        fix: "Set `useGlobalAlertSettings: false` with `alertSettings`, or `[lint] global-alert-settings = \"off\"`.",
    },
    CodeDoc {
        code: "monform::ignored-field",
        what: "A grouped check writes a field its group overrides (`[lint] ignored-fields`).",
        example: Some((
            "monitors/home.yaml",
            "checks:\n  home:\n    checkType: URL\n    name: Home\n    group: web\n    locations: [eu-west-1]\n    request: { url: \"https://example.com/\" }\ngroups:\n  web: { name: Web, locations: [us-east-1] }\n",
        )),
        message: "`locations` is ignored: group `web` sets locations",
        fix: "Remove the field from the check, or set it on the group.",
    },
    CodeDoc {
        code: "monform::import",
        what: "An `import` entry that cannot be: its `to` is not in the files, or two entries import to one address.",
        example: Some((
            "monitors/home.yaml",
            "import:\n  - { to: checks.nowhere, id: \"5b0d8c1e\" }\n",
        )),
        message: "import: checks.nowhere is not defined in the files",
        fix: "Define the resource at `to`, or correct the address.",
    },
    CodeDoc {
        code: "monform::include",
        what: "A pattern of `[project] include` is not a valid glob.",
        example: Some((
            "monform.toml",
            "[project]\nname = \"docs\"\ninclude = [\"monitors/[\"]\n",
        )),
        message: "project.include: \"monitors/[\" is not a valid pattern",
        fix: "Write a valid glob (`monitors/**/*.yaml`).",
    },
    CodeDoc {
        code: "monform::interpolation",
        what: "A malformed `${...}` substitution, or one nested too deep.",
        example: Some((
            "monitors/home.yaml",
            "checks:\n  home:\n    checkType: URL\n    name: \"Home ${env:}\"\n    request: { url: \"https://example.com/\" }\n",
        )),
        message: "malformed substitution `${env:}`",
        fix: "Write `${env:NAME}`, `${var:NAME}` or `${each...}`; `$${` writes a literal `${`.",
    },
    CodeDoc {
        code: "monform::invalid",
        what: "A value the model refuses: an unknown field, out of range, too long, not one of the allowed values, a rule across fields.",
        example: Some((
            "monitors/home.yaml",
            "checks:\n  home:\n    checkType: URL\n    name: Home\n    frequency: 7\n    request: { url: \"https://example.com/\" }\n",
        )),
        message: "checks.home.frequency: 7 is not one of 0, 1, 2, 5, 10, ...",
        fix: "Use a value the field's reference lists (type, limits and allowed values are on its page).",
    },
    CodeDoc {
        code: "monform::slo-members",
        what: "An SLO's `checks` names a check the files do not define, or one of its `tags` is on no check.",
        example: Some((
            "monitors/slo.yaml",
            "checks:\n  home:\n    checkType: URL\n    name: Home\n    frequency: 1\n    request: { url: \"https://example.com/\" }\nslos:\n  home:\n    checks: [checks.hom]\n    target: 99\n    window: 28d\n",
        )),
        message: "slos.home.checks: `checks.hom` names no check of the files (did you mean `checks.home`?)",
        fix: "Name a check of the files by its address (`checks.<id>`, `checks.<id>[<key>]`, `checks.<id>[*]`), or tag the checks.",
    },
    CodeDoc {
        code: "monform::slo-cannot-fail",
        what: "An SLO member check whose runs cannot measure a failure: `shouldFail: true`, or a HEARTBEAT check with a grace of 0.",
        example: Some((
            "monitors/slo.yaml",
            "checks:\n  home:\n    checkType: URL\n    name: Home\n    frequency: 1\n    shouldFail: true\n    request: { url: \"https://example.com/\" }\nslos:\n  home:\n    checks: [checks.home]\n    target: 99\n    window: 28d\n",
        )),
        message: "slos.home: checks.home has `shouldFail: true`: its runs pass when the service fails, so they cannot measure it",
        fix: "Leave the check out of the objective (or give the heartbeat a grace).",
    },
    CodeDoc {
        code: "monform::slo-timeslice",
        what: "An SLO budgeted by time slices whose slice is shorter than a member check's frequency: most slices hold no run, which inflates the SLI.",
        example: Some((
            "monitors/slo.yaml",
            "checks:\n  home:\n    checkType: URL\n    name: Home\n    frequency: 5\n    request: { url: \"https://example.com/\" }\nslos:\n  home:\n    checks: [checks.home]\n    budgeting: timeslices\n    timeslice: 1m\n    target: 99\n    window: 28d\n",
        )),
        message: "slos.home.timeslice: a slice of 1m is shorter than checks.home's frequency (5m)",
        fix: "Use a slice of at least the members' frequency, or run them more often.",
    },
    CodeDoc {
        code: "monform::slo-samples",
        what: "A warning: an SLO's member makes too few runs in the 5-minute fast-burn window for its target, so one failed run would page.",
        example: None,
        message: "slos.home: a 99.9% target needs at least 70 runs in the 5m fast-burn window, and checks.home makes 5",
        fix: "Raise the members' frequency and locations, set `enforce: true` to let the plan set them, or lower the target.",
    },
    CodeDoc {
        code: "monform::io",
        what: "A file or folder of the project cannot be read.",
        example: None,
        message: "cannot read monitors/home.yaml: permission denied",
        fix: "Make it readable, or leave it out of `[project] include`.",
    },
    CodeDoc {
        code: "monform::lint",
        what: "A `[lint]` key or level that is not known.",
        example: Some((
            "monform.toml",
            "[project]\nname = \"docs\"\n\n[lint]\nunrouted-checks = \"loud\"\n",
        )),
        message: "lint.unrouted-checks \"loud\" is not known",
        fix: "Use \"warn\", \"error\", \"note\" or \"off\", and a key of the [lint] reference.",
    },
    CodeDoc {
        code: "monform::logical-id",
        what: "A logical id or `forEach` item key that is not valid.",
        example: Some((
            "monitors/home.yaml",
            "checks:\n  \"home page\":\n    checkType: URL\n    name: Home\n    request: { url: \"https://example.com/\" }\n",
        )),
        message: "`home page` is not a valid logical id",
        fix: "Use letters, digits, `-` and `_`, starting with a letter or digit, at most 64 characters.",
    },
    CodeDoc {
        code: "monform::moved",
        what: "A `moved` entry that cannot be: to itself, a cycle, two moves to one address, from an address still in the files, to another section, or onto an address that has an object.",
        example: Some((
            "monitors/home.yaml",
            "moved:\n  - { from: checks.home, to: checks.home }\n",
        )),
        message: "moved: checks.home is moved to itself",
        fix: "Correct or remove the entry.",
    },
    CodeDoc {
        code: "monform::nested-project",
        what: "A folder below the root holds its own monform.toml: a separate project, skipped (a warning).",
        example: None,
        message: "skipped team-b/: it holds its own monform.toml, so it is a separate project",
        fix: "Nothing, if it is another project; otherwise remove its monform.toml.",
    },
    CodeDoc {
        code: "monform::no-project",
        what: "No monform.toml in the folder (nor above it).",
        example: None,
        message: "no monform.toml in /path",
        fix: "Create one (`[project] name = \"my-monitors\"`) or point `--dir` at the project's folder.",
    },
    CodeDoc {
        code: "monform::pass-env",
        what: "`[project] pass-env` names a variable scripts may not be given: a credential or a `secret-env` name.",
        example: Some((
            "monform.toml",
            "[project]\nname = \"docs\"\npass-env = [\"MONFORM_API_KEY\"]\n",
        )),
        message: "project.pass-env: `MONFORM_API_KEY` is monform's credential ...",
        fix: "Remove it: scripts run by `test --local` never see monform's credentials.",
    },
    CodeDoc {
        code: "monform::path",
        what: "A path (a `{ file: }` script, a `forEachFile` glob, a symbolic link) that leaves the project and `allow-paths`.",
        example: Some((
            "monitors/home.yaml",
            "snippets:\n  login: { name: Login, script: { file: ../../etc/passwd } }\n",
        )),
        message: "snippets.login.script: `../../etc/passwd` is outside the project",
        fix: "Keep the file inside the project, or add its folder to `[project] allow-paths`.",
    },
    CodeDoc {
        code: "monform::policy-error",
        what: "A Rego policy that does not load or evaluate (a syntax error, a runtime error).",
        example: None,
        message: "policy: policies/owner.rego:4: ...",
        fix: "Correct the policy; `monform policy test` runs its tests.",
    },
    CodeDoc {
        code: "monform::policy-limit",
        what: "A policy rule went past `[policy] max-instructions` or `timeout`, or those settings are invalid.",
        example: Some((
            "monform.toml",
            "[project]\nname = \"docs\"\n\n[policy]\ntimeout = \"0s\"\n",
        )),
        message: "policy.timeout \"0s\" is not a duration of 1s or more",
        fix: "Make the rule cheaper, or raise the bound the message names.",
    },
    CodeDoc {
        code: "monform::policy-path",
        what: "A path of `[policy] paths` that cannot be used (missing, outside the project).",
        example: Some((
            "monform.toml",
            "[project]\nname = \"docs\"\n\n[policy]\npaths = [\"../elsewhere\"]\n",
        )),
        message: "policy.paths: `../elsewhere` ...",
        fix: "Name folders or `.rego` files inside the project.",
    },
    CodeDoc {
        code: "monform::policy-test",
        what: "A policy's `test_*` rule failed (`monform policy test`).",
        example: None,
        message: "test_owner_required failed",
        fix: "Correct the policy or the test.",
    },
    CodeDoc {
        code: "monform::project-name",
        what: "monform.toml has no `[project] name`, or an invalid one.",
        example: Some(("monform.toml", "[project]\nname = \"my monitors\"\n")),
        message: "project.name \"my monitors\" is not a valid name",
        fix: "Use letters, digits, `-` and `_`; keep it stable: it owns the objects.",
    },
    CodeDoc {
        code: "monform::reconcile",
        what: "A `[reconcile]` setting that is not valid.",
        example: Some((
            "monform.toml",
            "[project]\nname = \"docs\"\n\n[reconcile]\ndrift = \"shout\"\n",
        )),
        message: "reconcile.drift \"shout\" is not known",
        fix: "Use the values the monform.toml reference lists.",
    },
    CodeDoc {
        code: "monform::removed",
        what: "A `removed` entry whose address is still in the files.",
        example: Some((
            "monitors/home.yaml",
            "checks:\n  home: { checkType: URL, name: Home, request: { url: \"https://example.com/\" } }\nremoved:\n  - { from: checks.home }\n",
        )),
        message: "removed: checks.home is still defined in the files",
        fix: "Remove the resource from the files, or the entry.",
    },
    CodeDoc {
        code: "monform::script-file",
        what: "A `{ file: }` script that does not exist or cannot be read.",
        example: Some((
            "monitors/home.yaml",
            "snippets:\n  login: { name: Login, script: { file: login.js } }\n",
        )),
        message: "snippets.login.script: cannot read `login.js`",
        fix: "Paths are relative to the file that names them: correct it, or add the file.",
    },
    CodeDoc {
        code: "monform::sensitive-key",
        what: "A `forEach` item key made from a sensitive value (its key would go into addresses and plans).",
        example: None,
        message: "checks.api.forEach[0]: the value of `${env:TOKEN}` cannot be an item key: it is sensitive",
        fix: "Write the keys out as a map, whose values may read the environment.",
    },
    CodeDoc {
        code: "monform::sensitive-setting",
        what: "`allow-paths` or `[policy] paths` reads `${env:}` text that is not public (paths are shown in messages).",
        example: None,
        message: "project.allow-paths[]: the value of `${env:DIR}` is sensitive, and a path here is shown in messages",
        fix: "List the variable in `[project] public-env`, or write the path out.",
    },
    CodeDoc {
        code: "monform::shared-object",
        what: "Two environments in one account define one account-wide object (a variable key, a snippet name...): the second apply would be refused (`[lint] shared-objects`).",
        example: None,
        message: "variables.TOKEN: environments production and staging claim one variable key in one account",
        fix: "Make its identity per environment through `${var:}`, or limit it to one with `environments: [...]`.",
    },
    CodeDoc {
        code: "monform::state-backend",
        what: "A `[state] backend` that is not known.",
        example: Some((
            "monform.toml",
            "[project]\nname = \"docs\"\n\n[state]\nbackend = \"s3\"\n",
        )),
        message: "state.backend \"s3\" is not known",
        fix: "Use \"local\" or \"postgres\".",
    },
    CodeDoc {
        code: "monform::syntax",
        what: "A YAML or TOML syntax error.",
        example: Some(("monitors/home.yaml", "checks:\n  home: { checkType: URL\n")),
        message: "syntax error: ...",
        fix: "Correct the syntax at the line shown.",
    },
    CodeDoc {
        code: "monform::too-large",
        what: "A file that expands past 128 MiB of values (aliases, `forEach` copies, substitutions), or nests too deep.",
        example: None,
        message: "monitors/home.yaml expands to more than 128 MiB of values",
        fix: "Repeat large values (aliases) in fewer places, or split the file.",
    },
    CodeDoc {
        code: "monform::type",
        what: "A value of the wrong type (a list where a map goes, a number where text goes).",
        example: Some(("monitors/home.yaml", "checks: [home]\n")),
        message: "checks: expected a map, found a list",
        fix: "Write the type the reference gives for the field.",
    },
    CodeDoc {
        code: "monform::unknown-field",
        what: "A key monform.toml does not have (with a did-you-mean). An unknown field of a resource is `monform::invalid`.",
        example: Some(("monform.toml", "[project]\nname = \"docs\"\nnmae = \"x\"\n")),
        message: "unknown field `nmae` (did you mean `name`?)",
        fix: "Correct the name; the monform.toml reference lists every key.",
    },
    CodeDoc {
        code: "monform::unknown-section",
        what: "A top-level key of a resource file that is not a section.",
        example: Some(("monitors/home.yaml", "chekcs: {}\n")),
        message: "unknown section `chekcs` (did you mean `checks`?)",
        fix: "Use a section of the resource files reference.",
    },
    CodeDoc {
        code: "monform::unrouted-check",
        what: "An activated, unmuted check whose failures reach no channel (`[lint] unrouted-checks`).",
        example: Some(("monitors/home.yaml", OWN_CHECK)),
        message: "checks.home: a failure alerts nobody",
        fix: "Add `alertChannels: [...]` to the check or its group, with a channel whose sendFailure is true.",
    },
    CodeDoc {
        code: "monform::var",
        what: "`${var:NAME}` names a variable `[vars]` does not have, or is used in monform.toml.",
        example: Some((
            "monitors/home.yaml",
            "checks:\n  home:\n    checkType: URL\n    name: Home\n    request: { url: \"${var:base_url}/\" }\n",
        )),
        message: "unknown variable `base_url`",
        fix: "Add it to `[vars]` (or the environment's `vars`), or correct the name.",
    },
    CodeDoc {
        code: "monform::vars",
        what: "A `[vars]` name that is not valid.",
        example: Some((
            "monform.toml",
            "[project]\nname = \"docs\"\n\n[vars]\n\"base url\" = \"x\"\n",
        )),
        message: "`base url` is not a valid variable name",
        fix: "Use letters, digits, `-` and `_`, starting with a letter or `_`.",
    },
];

/// The entry of `code`.
pub fn find(code: &str) -> Option<&'static CodeDoc> {
    CODES.iter().find(|c| c.code == code)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every `"monform::NAME"` of the workspace's sources is documented here
    /// (or listed as not a code), and nothing here is stale.
    #[test]
    fn every_code_of_the_sources_is_documented() {
        let crates = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut found = std::collections::BTreeSet::new();
        let mut stack = vec![crates];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).expect("a folder of crates/").flatten() {
                let path = entry.path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") && !path.ends_with("codes.rs") {
                    let text = std::fs::read_to_string(&path).unwrap_or_default();
                    for (at, _) in text.match_indices("\"monform::") {
                        let rest = &text[at + 1..];
                        let end = rest.find('"').unwrap_or(rest.len());
                        let code = &rest[..end];
                        let name = &code["monform::".len()..];
                        if !name.is_empty() && name.chars().all(|c| c.is_ascii_lowercase() || c == '-') {
                            found.insert(code.to_owned());
                        }
                    }
                }
            }
        }
        let undocumented: Vec<&String> = found
            .iter()
            .filter(|c| find(c).is_none() && !NOT_CODES.contains(&c.as_str()))
            .collect();
        assert!(
            undocumented.is_empty(),
            "codes without an entry in crates/config/src/diagnostic/codes.rs: {undocumented:?}"
        );
        let stale: Vec<&str> = CODES.iter().map(|c| c.code).filter(|c| !found.contains(*c)).collect();
        assert!(stale.is_empty(), "codes.rs documents codes no source uses: {stale:?}");
        let keys: Vec<&str> = LINT_KEYS.iter().map(|k| k.key).collect();
        assert_eq!(keys, crate::project::Lint::KEYS, "LINT_KEYS follows Lint::KEYS");
        for key in LINT_KEYS {
            assert!(find(key.code).is_some(), "{}", key.code);
        }
    }
}
