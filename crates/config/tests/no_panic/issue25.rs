//! The shapes of issue 25: alias, `forEach` and substitution bombs (stopped
//! by the byte budget), substitutions nested thousands deep, one-line files
//! of 70 KB and more.

use super::*;

/// A substitution nested `depth` deep in defaults, of mixed kinds, maybe
/// unbalanced, maybe inside a longer string.
pub(crate) fn nested_substitution() -> impl Strategy<Value = String> {
    (
        0usize..20_000,
        prop::collection::vec(
            select(
                &[
                    "${var:x:-",
                    "${env:UNSET:-",
                    "${each.value.x:-",
                    "${env:MONFORM_API_KEY:-",
                ][..],
            ),
            1..4,
        ),
        0usize..3,
        any::<bool>(),
    )
        .prop_map(|(depth, kinds, cut, inside)| {
            let open: String = (0..depth).map(|i| kinds[i % kinds.len()]).collect();
            let close = "}".repeat(depth.saturating_sub(cut));
            let value = format!("{open}x{close}");
            if inside { format!("a {value} b") } else { value }
        })
}

/// A one-line flow-style file: `count` resources, with an unknown field
/// (and maybe a bad value) near its end, so a diagnostic points past
/// column 65,535.
pub(crate) fn long_line() -> impl Strategy<Value = String> {
    (
        1_000usize..1_500,
        select(&["colour: red", "frequency: often", "name: ${env:UNSET}", "bogus"][..]),
    )
        .prop_map(|(count, last)| {
            let resources: Vec<String> = (0..count)
                .map(|i| format!("s{i}: {{name: \"Snippet number {i} with a fairly long name\", script: x}}"))
                .collect();
            format!(
                "{{snippets: {{{}, last: {{name: L, script: x, {last}}}}}}}",
                resources.join(", ")
            )
        })
}

/// Files that expand far past their size: aliases doubling, aliases of a
/// large string, a `forEach` over a large definition, a `[vars]` value
/// substituted many times.
pub(crate) fn bomb() -> impl Strategy<Value = (String, String)> {
    let doubling = (1usize..4, 24usize..30).prop_map(|(width, levels)| {
        let mut text = format!("a0: &a0 [{}]\n", vec!["x"; width + 1].join(", "));
        for i in 1..levels {
            let aliases = vec![format!("*a{}", i - 1); width + 1].join(", ");
            text.push_str(&format!("a{i}: &a{i} [{aliases}]\n"));
        }
        (MINIMAL_PROJECT.to_owned(), text)
    });
    let large = (30_000usize..60_000, 5_000usize..8_000).prop_map(|(size, count)| {
        let text = format!("s: &s {}\nl: [{}]\n", "x".repeat(size), "*s, ".repeat(count));
        (MINIMAL_PROJECT.to_owned(), text)
    });
    let for_each = (300usize..400, 100_000usize..150_000).prop_map(|(items, size)| {
        let items: String = (0..items).map(|i| format!("i{i}, ")).collect();
        let text = format!(
            "x: &big \"{}\"\nsnippets:\n  s:\n    forEach: [{items}]\n    name: S\n    script: x\n    description: [{}]\n",
            "y".repeat(size),
            "*big, ".repeat(10)
        );
        (MINIMAL_PROJECT.to_owned(), text)
    });
    let vars = (500_000usize..2_000_000, 300usize..400).prop_map(|(size, count)| {
        let project = format!("{MINIMAL_PROJECT}\n[vars]\nbig = \"{}\"\n", "z".repeat(size));
        let text = format!(
            "snippets:\n  s: {{ name: \"${{var:big}}\", script: x, tags: [{}] }}\n",
            "\"a${var:big}\", ".repeat(count)
        );
        (project, text)
    });
    prop_oneof![doubling, large, for_each, vars]
}

/// Bombs allocate up to the budget (128 MiB) each: fewer cases, and no
/// more than 12 however many CI asks for (each takes about a second).
pub(crate) fn bomb_config() -> ProptestConfig {
    ProptestConfig {
        cases: (config().cases / 64).clamp(4, 12),
        ..config()
    }
}

/// Each case reads and renders files of up to a few hundred kilobytes:
/// a quarter of the cases, at most 128 (CI's 5,000 cases would take half
/// an hour).
pub(crate) fn large_config() -> ProptestConfig {
    ProptestConfig {
        cases: (config().cases / 4).clamp(16, 128),
        ..config()
    }
}

proptest! {
    #![proptest_config(large_config())]

    #[test]
    fn deeply_nested_substitutions(value in nested_substitution(), toml in any::<bool>()) {
        let quoted = value.replace('\\', "\\\\").replace('"', "\\\"");
        let project = format!("{MINIMAL_PROJECT}\n[vars]\nv = \"{quoted}\"\n");
        let file = if toml {
            ("monitors/deep.toml".to_owned(), format!("[snippets.s]\nname = \"{quoted}\"\nscript = \"x\"\n"))
        } else {
            ("monitors/deep.yaml".to_owned(), format!("snippets:\n  s: {{ name: \"{quoted}\", script: x }}\n"))
        };
        let loaded = load_project(project.as_bytes(), &[(file.0, file.1.into_bytes())]);
        let shown = format!("{:?}", loaded.diagnostics);
        prop_assert!(!shown.contains("fuzz-credential"));
    }

    #[test]
    fn one_line_files_of_70_kb_and_more(text in long_line()) {
        prop_assert!(text.len() > 70_000);
        // Rendered as the CLI renders them (miette panicked past column
        // 65,535): each shows a window of the line, never the 70 KB.
        let loaded = load_project(MINIMAL_PROJECT.as_bytes(), &[("monitors/long.yaml".to_owned(), text.into_bytes())]);
        prop_assert!(!loaded.diagnostics.is_empty());
        let handler = GraphicalReportHandler::new_themed(GraphicalTheme::unicode_nocolor()).with_width(100);
        for diagnostic in &loaded.diagnostics {
            let mut rendered = String::new();
            prop_assert!(handler.render_report(&mut rendered, &diagnostic.to_report(&loaded.sources)).is_ok());
            prop_assert!(rendered.len() < 4_000, "{} bytes:\n{}", rendered.len(), rendered.chars().take(600).collect::<String>());
        }
    }
}

proptest! {
    #![proptest_config(bomb_config())]

    #[test]
    fn expansion_bombs_stop_at_the_budget((project, text) in bomb()) {
        // Unrendered: rendering 100 diagnostics in a file of 1 MB lines
        // costs more than the load; the other properties render.
        let loaded = load_project_unrendered(project.as_bytes(), &[("monitors/bomb.yaml".to_owned(), text.into_bytes())]);
        prop_assert!(
            loaded.diagnostics.iter().any(|d| d.message.contains("expands to more than 128 MiB")),
            "{:?}",
            loaded.diagnostics.iter().map(|d| d.message.chars().take(120).collect::<String>()).collect::<Vec<_>>()
        );
    }
}
