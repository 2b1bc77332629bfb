//! The diagnostics reference: every code and `[lint]` key, from the table
//! in `monform_config::diagnostic::codes`.

use monform_config::diagnostic::codes::{CODES, LINT_KEYS};

use super::schema_text::one_line;
use super::{GENERATED, Page};

pub fn diagnostics_page() -> Page {
    let mut out = format!(
        "# Diagnostics and lint keys\n\n{GENERATED}\n\nEvery problem monform reports carries a code (`monform::...`), \
         shown beside it on a terminal and as `code` in `--format json`, SARIF and GitHub annotations. A finding of a \
         team's Rego policy carries its rule instead (`monform.owner.deny`: [Policies](../guide/policies.md)).\n\n"
    );
    out.push_str("## Lint keys\n\n`[lint]` in monform.toml sets each finding's level: `\"warn\"`, `\"error\"` (validate, plan and apply exit 1), `\"note\"` (only `validate` says it) or `\"off\"`.\n\n| key | code | default |\n|---|---|---|\n");
    for key in LINT_KEYS {
        let anchor = key.code.replace("::", "");
        out.push_str(&format!(
            "| `{}` | [`{}`](#{anchor}) | `\"{}\"` |\n",
            key.key, key.code, key.default
        ));
    }
    out.push_str("\n## Codes\n\n");
    for code in CODES {
        out.push_str(&format!("### {}\n\n{}\n\n", code.code, code.what));
        if let Some((file, text)) = code.example {
            let language = if file.ends_with(".toml") { "toml" } else { "yaml" };
            out.push_str(&format!("For example, `{file}`:\n\n```{language}\n{text}```\n\n"));
        }
        out.push_str(&format!(
            "Says: {}\n\nFix: {}\n\n",
            one_line(code.message),
            one_line(code.fix)
        ));
    }
    Page {
        path: "diagnostics.md".to_owned(),
        text: out,
    }
}
