//! Every command's exit codes, declared once: the commands return these
//! constants, `monform docs` writes the table into the reference page
//! (`docs/src/reference/output.md`), and a test runs commands and holds
//! their real codes to it. A script reads a code's meaning here, never from
//! a command's wording.

use std::process::ExitCode;

/// Done as asked; nothing the command checks is wrong.
pub const SUCCESS: u8 = 0;
/// An error: the files, the service, a refusal, or what the command checks failed.
pub const FAILURE: u8 = 1;
/// A command-specific "something to do" (changes, a diff).
pub const CHANGES: u8 = 2;
/// Bad arguments: clap's own code, and a few checked after parsing. The
/// same number as [`CHANGES`] (clap's choice, kept: scripts rely on it).
pub const USAGE: u8 = 2;
/// `codify --check`: something needs a hand edit or is a secret.
pub const HAND_EDIT: u8 = 3;
/// Interrupted (Ctrl-C): the changes in flight finished first.
pub const INTERRUPTED: u8 = 130;

/// `code` as the process's exit code.
pub fn code(code: u8) -> ExitCode {
    ExitCode::from(code)
}

/// One exit code of a command and what it means.
pub struct Code {
    pub code: u8,
    pub meaning: &'static str,
}

/// A command (as typed after `monform`, with its flag when the codes
/// depend on it) and its codes.
pub struct Command {
    pub command: &'static str,
    pub codes: &'static [Code],
}

const fn c(code: u8, meaning: &'static str) -> Code {
    Code { code, meaning }
}

/// What every command's 0 and 1 mean when it says nothing more.
const PLAIN: &[Code] = &[c(SUCCESS, "done"), c(FAILURE, "an error (the message says which)")];

/// Codes every command shares, whatever the table says of it.
pub const EVERY_COMMAND: &[Code] = &[c(
    USAGE,
    "the command line is wrong (an unknown flag, a missing or malformed value); \
     the message names the argument",
)];

/// Every command's exit codes. A command missing here exits with [`PLAIN`]'s.
pub const TABLE: &[Command] = &[
    Command {
        command: "validate",
        codes: &[
            c(SUCCESS, "no error (warnings and notes may be printed)"),
            c(FAILURE, "an error in the files (a linter rule at `\"error\"` included)"),
        ],
    },
    Command {
        command: "plan",
        codes: &[
            c(SUCCESS, "planned (with `--detailed-exitcode`: and nothing to change)"),
            c(
                FAILURE,
                "an error, a plan the policies' `deny` refuses, or a plan over `[budget] max-runs-per-month`",
            ),
            c(CHANGES, "with `--detailed-exitcode`: the plan has changes"),
        ],
    },
    Command {
        command: "show",
        codes: &[
            c(SUCCESS, "shown"),
            c(FAILURE, "the file is not a saved plan or cannot be read"),
        ],
    },
    Command {
        command: "apply",
        codes: &[
            c(SUCCESS, "every change done and verified (or nothing to do)"),
            c(
                FAILURE,
                "an error, a refusal (stale plan, policies, conflicts), a change that failed or was not verified",
            ),
            c(
                INTERRUPTED,
                "interrupted (Ctrl-C) after the changes in flight were done",
            ),
        ],
    },
    Command {
        command: "destroy",
        codes: &[
            c(SUCCESS, "every object of the project deleted"),
            c(FAILURE, "an error, a refusal, or a delete that failed"),
            c(
                INTERRUPTED,
                "interrupted (Ctrl-C) after the deletes in flight were done",
            ),
        ],
    },
    Command {
        command: "reconcile --once",
        codes: &[
            c(SUCCESS, "in sync (or brought back in sync)"),
            c(FAILURE, "an error"),
            c(CHANGES, "changes found that the drift policy did not apply"),
        ],
    },
    Command {
        command: "codify",
        codes: &[
            c(SUCCESS, "nothing to write (with `--check`), or written"),
            c(FAILURE, "an error"),
            c(CHANGES, "with `--check`: a diff to write"),
            c(HAND_EDIT, "with `--check`: something needs a hand edit or is a secret"),
        ],
    },
    Command {
        command: "test",
        codes: &[
            c(SUCCESS, "every run passed"),
            c(FAILURE, "a run did not pass, or an error"),
        ],
    },
    Command {
        command: "status",
        codes: &[
            c(SUCCESS, "reported (without `--fail-on`, whatever the checks' states)"),
            c(FAILURE, "an error, or with `--fail-on`: a check failing (or degraded)"),
            c(USAGE, "`--out` without `--format html`"),
        ],
    },
    Command {
        command: "slo status",
        codes: &[c(SUCCESS, "reported"), c(FAILURE, "an error")],
    },
    Command {
        command: "gate",
        codes: &[
            c(
                SUCCESS,
                "every named SLO has its error budget left and is not burning fast",
            ),
            c(FAILURE, "an SLO is out of budget or burning fast, or an error"),
            c(USAGE, "`--min-budget` is not a percentage"),
        ],
    },
    Command {
        command: "policy test",
        codes: &[
            c(SUCCESS, "every test_* rule passed"),
            c(
                FAILURE,
                "a test failed or could not run, a policy does not load, or there are no tests",
            ),
        ],
    },
];

/// The exit-code table as Markdown, for the reference page.
pub fn markdown() -> String {
    let mut out = String::from("| command | code | meaning |\n|---|---|---|\n");
    for command in TABLE {
        for (i, code) in command.codes.iter().enumerate() {
            let name = if i == 0 {
                format!("`{}`", command.command)
            } else {
                String::new()
            };
            out.push_str(&format!("| {name} | {} | {} |\n", code.code, code.meaning));
        }
    }
    out.push_str("| every other command |");
    for (i, code) in PLAIN.iter().enumerate() {
        let lead = if i == 0 { "" } else { "| |" };
        out.push_str(&format!("{lead} {} | {} |\n", code.code, code.meaning));
    }
    for code in EVERY_COMMAND {
        out.push_str(&format!("| any command | {} | {} |\n", code.code, code.meaning));
    }
    out
}

#[cfg(test)]
mod tests {
    use monform_reconcile::Outcome;

    #[test]
    fn the_reconcilers_outcomes_exit_with_the_tables_codes() {
        assert_eq!(Outcome::InSync.code(), super::SUCCESS);
        assert_eq!(Outcome::Changes.code(), super::CHANGES);
        assert_eq!(Outcome::Error { api: false }.code(), super::FAILURE);
        assert_eq!(Outcome::Error { api: true }.code(), super::FAILURE);
    }

    #[test]
    fn each_command_declares_each_code_once() {
        for command in super::TABLE {
            let mut codes: Vec<u8> = command.codes.iter().map(|c| c.code).collect();
            codes.sort_unstable();
            codes.dedup();
            assert_eq!(codes.len(), command.codes.len(), "{}", command.command);
        }
    }
}
