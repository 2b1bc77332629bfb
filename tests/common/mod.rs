//! Shared set-up for the end-to-end tests: the real `monform` binary run on
//! project folders.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("repository root")
}

/// `monform` with a clean, colourless environment.
pub fn monform() -> assert_cmd::Command {
    let mut command = assert_cmd::Command::cargo_bin("monform").expect("monform binary");
    command
        .env("NO_COLOR", "1")
        .env_remove("MONFORM_API_KEY")
        .env_remove("MONFORM_ACCOUNT_ID");
    command
}

/// A copy of `examples/<name>` in a fresh temporary folder.
pub fn copy_example(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temporary folder");
    copy_dir(&repo_root().join("examples").join(name), dir.path());
    dir
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create folder");
    for entry in std::fs::read_dir(from).expect("read folder") {
        let entry = entry.expect("folder entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy file");
        }
    }
}

/// Replaces `from` by `to` in a file of a project, failing if `from` is absent
/// (so a changed example cannot silently make a test pointless).
pub fn edit(project: &Path, file: &str, from: &str, to: &str) {
    let path = project.join(file);
    let text = std::fs::read_to_string(&path).expect("read file");
    assert!(text.contains(from), "{file} does not contain {from:?}");
    std::fs::write(&path, text.replacen(from, to, 1)).expect("write file");
}

pub fn stdout(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}
