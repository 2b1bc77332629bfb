//! `${env:NAME}` and `${env:NAME:-default}` in any string. `$${` writes a
//! literal `${`. Other `${...}` (JavaScript template literals in scripts)
//! are left alone.

/// Why a string could not be interpolated.
#[derive(Debug, Clone, PartialEq)]
pub enum InterpolationError {
    Unset(String),
    Malformed(String),
}

/// Replaces every `${env:...}` in `text` using `lookup`.
pub fn interpolate(text: &str, lookup: &dyn Fn(&str) -> Option<String>) -> Result<String, Vec<InterpolationError>> {
    if !text.contains("${") {
        return Ok(text.to_owned());
    }
    let mut out = String::with_capacity(text.len());
    let mut errors = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        if rest[..start].ends_with('$') {
            // `$${` escapes: emit `${` and go on after it.
            out.push_str(&rest[..start - 1]);
            out.push_str("${");
            rest = &rest[start + 2..];
            continue;
        }
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        if !after.starts_with("env:") {
            out.push_str("${");
            rest = after;
            continue;
        }
        let Some(end) = after.find('}') else {
            errors.push(InterpolationError::Malformed(rest[start..].to_owned()));
            break;
        };
        let body = &after[4..end];
        let (name, default) = match body.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (body, None),
        };
        if !is_env_name(name) {
            errors.push(InterpolationError::Malformed(format!("${{{}}}", &after[..end])));
        } else {
            match lookup(name).or_else(|| default.map(str::to_owned)) {
                Some(value) => out.push_str(&value),
                None => errors.push(InterpolationError::Unset(name.to_owned())),
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    if errors.is_empty() { Ok(out) } else { Err(errors) }
}

fn is_env_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        (name == "HOST").then(|| "example.com".to_owned())
    }

    #[test]
    fn replaces_set_variables_and_defaults() {
        assert_eq!(
            interpolate("https://${env:HOST}/x", &env),
            Ok("https://example.com/x".into())
        );
        assert_eq!(interpolate("${env:PORT:-8080}", &env), Ok("8080".into()));
        assert_eq!(interpolate("${env:PORT:-}", &env), Ok("".into()));
    }

    #[test]
    fn leaves_template_literals_and_escapes() {
        assert_eq!(interpolate("`${user.name}`", &env), Ok("`${user.name}`".into()));
        assert_eq!(interpolate("$${env:HOST}", &env), Ok("${env:HOST}".into()));
    }

    #[test]
    fn reports_unset_and_malformed() {
        assert_eq!(
            interpolate("${env:NOPE}", &env),
            Err(vec![InterpolationError::Unset("NOPE".into())])
        );
        assert!(matches!(interpolate("${env:1X}", &env), Err(e) if matches!(e[0], InterpolationError::Malformed(_))));
        assert!(matches!(interpolate("${env:HOST", &env), Err(e) if matches!(e[0], InterpolationError::Malformed(_))));
    }
}
