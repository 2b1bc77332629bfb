//! `[project] secret-env`, `public-env` and `pass-env` in monform.toml:
//! which environment variables substitutions may read or show, and which
//! `test --local` hands to scripts. Read before monform.toml's own
//! substitutions, which they govern.

use super::strings;
use crate::diagnostic::Diagnostic;
use crate::interpolate::EnvPolicy;
use crate::source::Span;
use crate::tree::{Node, NodeValue};

/// `[project] secret-env` and `public-env`, read from monform.toml before
/// its own substitutions are made (they decide what those may read). Their
/// items are names, never substitutions.
pub fn read_env_policy(root: &Node, diagnostics: &mut Vec<Diagnostic>) -> EnvPolicy {
    let mut policy = EnvPolicy::default();
    let Some(project) = root.get("project").and_then(|p| p.value.as_map()) else {
        return policy;
    };
    for field in project {
        let list = match field.key.as_str() {
            "secret-env" => &mut policy.secret,
            "public-env" => &mut policy.public,
            _ => continue,
        };
        let NodeValue::Seq(items) = &field.value.value else {
            continue;
        };
        let path = format!("project.{}", field.key);
        for (name, span) in strings(&path, items, &mut Vec::new()) {
            if crate::interpolate::is_name(&name) {
                list.push(name);
            } else {
                diagnostics.push(
                    Diagnostic::new(
                        "monform::env-policy",
                        format!("{path}: `{name}` is not an environment variable name"),
                    )
                    .at(span, "here")
                    .help("write the variable's name itself (letters, digits, _ and -), not a substitution"),
                );
            }
        }
    }
    if let Some(name) = policy.public.iter().find(|n| policy.is_forbidden(n)) {
        let span = project
            .iter()
            .find(|f| f.key == "public-env")
            .map_or(root.span, |f| f.value.span);
        diagnostics.push(
            Diagnostic::new(
                "monform::env-policy",
                format!("project.public-env: `{name}` is a credential and can never be read, let alone shown"),
            )
            .at(span, "here")
            .help("remove it from public-env"),
        );
    }
    policy
}

/// `[project] pass-env`, read like [`read_env_policy`] before monform.toml's
/// substitutions: names only. `test --local` runs the files' scripts, in CI
/// a pull request's, so monform's own credentials and the names `policy`
/// keeps secret are refused at the item (monform.toml is reviewed, but a
/// slip there must not hand a script the API key).
pub fn read_pass_env(root: &Node, policy: &EnvPolicy, diagnostics: &mut Vec<Diagnostic>) -> Vec<(String, Span)> {
    let Some(NodeValue::Seq(items)) = root
        .get("project")
        .and_then(|p| p.value.as_map())
        .and_then(|p| p.iter().find(|f| f.key == "pass-env"))
        .map(|f| &f.value.value)
    else {
        return Vec::new();
    };
    let mut passed = Vec::new();
    for (name, span) in strings("project.pass-env", items, &mut Vec::new()) {
        let refusal = if !crate::interpolate::is_name(&name) {
            Some((
                format!("project.pass-env: `{name}` is not an environment variable name"),
                "write the variable's name itself (letters, digits, _ and -), not a substitution",
            ))
        } else if crate::interpolate::CREDENTIAL_ENV.contains(&name.as_str()) {
            Some((
                format!("project.pass-env: `{name}` is monform's own credential: scripts never see it"),
                "remove it from pass-env; `test --local` runs the files' scripts, in CI a pull request's",
            ))
        } else if policy.is_forbidden(&name) {
            Some((
                format!("project.pass-env: `{name}` is in secret-env: scripts never see it"),
                "remove it from pass-env, or from secret-env if scripts may read it",
            ))
        } else {
            None
        };
        match refusal {
            Some((message, help)) => diagnostics.push(
                Diagnostic::new("monform::pass-env", message)
                    .at(span, "here")
                    .help(help),
            ),
            None => passed.push((name, span)),
        }
    }
    passed
}
