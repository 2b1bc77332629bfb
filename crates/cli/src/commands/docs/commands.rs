//! The command reference, read from the command line's own definition
//! (clap's `Command`), so a flag's name, values, default and help are the
//! ones `monform` parses.

use super::schema_text::one_line;
use super::{GENERATED, Page};

/// Every command, subcommand and flag.
pub fn commands_page(root: clap::Command) -> Page {
    let mut root = root;
    root.build();
    let mut out = format!(
        "# Commands\n\n{GENERATED}\n\n{}\n\nThe guides explain what each command does at length; this page lists \
         what each takes. `monform help COMMAND` and `monform COMMAND --help` print the same.\n\n",
        root.get_about().map(|a| a.to_string()).unwrap_or_default()
    );
    out.push_str("## Global flags\n\nEvery command takes these (the agent only `--api-url` and `--color`).\n\n");
    let globals: Vec<&clap::Arg> = root.get_arguments().filter(|a| shown(a)).collect();
    out.push_str(&arguments_table(&globals));
    out.push('\n');
    let mut index = String::from("| command | what it does |\n|---|---|\n");
    let mut sections = String::new();
    for command in root
        .get_subcommands()
        .filter(|c| !c.is_hide_set() && c.get_name() != "help")
    {
        write_command(command, &mut index, &mut sections);
    }
    out.push_str("## Every command\n\n");
    out.push_str(&index);
    out.push('\n');
    out.push_str(&sections);
    Page {
        path: "commands.md".to_owned(),
        text: out,
    }
}

fn shown(arg: &clap::Arg) -> bool {
    !arg.is_hide_set() && !matches!(arg.get_id().as_str(), "help" | "version")
}

fn write_command(command: &clap::Command, index: &mut String, out: &mut String) {
    let name = command.get_bin_name().unwrap_or(command.get_name()).to_owned();
    let about = command.get_about().map(|a| a.to_string()).unwrap_or_default();
    let anchor = anchor(&name);
    index.push_str(&format!("| [`{name}`](#{anchor}) | {} |\n", one_line(&about)));
    out.push_str(&format!("## {name}\n\n"));
    let long = command.get_long_about().map(|a| a.to_string()).unwrap_or(about);
    if !long.is_empty() {
        out.push_str(&format!("{}\n\n", long.trim()));
    }
    let usage = command.clone().render_usage().to_string();
    let usage = usage.trim().trim_start_matches("Usage:").trim();
    out.push_str(&format!("```text\n{usage}\n```\n\n"));
    let arguments: Vec<&clap::Arg> = command
        .get_arguments()
        .filter(|a| shown(a) && !a.is_global_set())
        .collect();
    if !arguments.is_empty() {
        out.push_str(&arguments_table(&arguments));
        out.push('\n');
    }
    if let Some(after) = command.get_after_help() {
        // `Guide: docs/src/guide/PAGE` (the page the help names) as a link;
        // anything else (the agent's environment) as the help prints it.
        let after = after.to_string();
        let (guides, rest): (Vec<&str>, Vec<&str>) = after.lines().partition(|l| l.starts_with("Guide: "));
        let rest = rest.join("\n");
        if !rest.trim().is_empty() {
            out.push_str(&format!("```text\n{}\n```\n\n", rest.trim()));
        }
        for guide in guides {
            let path = guide.trim_start_matches("Guide: ").trim();
            let page = path.trim_start_matches("docs/src/guide/");
            out.push_str(&format!("Guide: [{page}](../guide/{page}).\n\n"));
        }
    }
    for sub in command
        .get_subcommands()
        .filter(|c| !c.is_hide_set() && c.get_name() != "help")
    {
        write_command(sub, index, out);
    }
}

/// The id mdBook gives a heading.
fn anchor(heading: &str) -> String {
    heading
        .chars()
        .filter_map(|c| match c {
            c if c.is_alphanumeric() || c == '_' || c == '-' => Some(c.to_ascii_lowercase()),
            ' ' => Some('-'),
            _ => None,
        })
        .collect()
}

fn arguments_table(arguments: &[&clap::Arg]) -> String {
    let mut out = String::from("| argument | values | default | description |\n|---|---|---|---|\n");
    for arg in arguments {
        let values: Vec<String> = arg
            .get_possible_values()
            .iter()
            .filter(|v| !v.is_hide_set())
            .map(|v| format!("`{}`", v.get_name()))
            .collect();
        let default: Vec<String> = arg
            .get_default_values()
            .iter()
            .map(|v| format!("`{}`", v.to_string_lossy()))
            .collect();
        let mut help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
        if let Some(env) = arg.get_env() {
            help.push_str(&format!(" (environment: `{}`)", env.to_string_lossy()));
        }
        out.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            spelling(arg),
            values.join(", "),
            default.join(", "),
            one_line(&help)
        ));
    }
    out
}

/// How an argument is written: `--out <FILE>`, `-o`, or `<ADDRESS>`.
fn spelling(arg: &clap::Arg) -> String {
    let value = arg
        .get_value_names()
        .map(|names| names.iter().map(|n| format!("<{n}>")).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|| format!("<{}>", arg.get_id().as_str().to_uppercase()));
    let takes_value = arg.get_action().takes_values();
    let repeated = if matches!(arg.get_action(), clap::ArgAction::Append) {
        "..."
    } else {
        ""
    };
    match (arg.get_long(), arg.get_short()) {
        (None, None) => format!("`{value}`{repeated}").replace('|', "\\|"),
        (long, short) => {
            let mut names = Vec::new();
            if let Some(short) = short {
                names.push(format!("-{short}"));
            }
            if let Some(long) = long {
                names.push(format!("--{long}"));
            }
            let value = if takes_value {
                format!(" {value}")
            } else {
                String::new()
            };
            format!("`{}{value}`{repeated}", names.join(", ")).replace('|', "\\|")
        }
    }
}
