//! Files written whole or not at all: a temporary file beside the target,
//! synced, renamed over it, and the folder synced, so a crash or a full
//! disk leaves the old file or the new one, never half of one. Every file
//! monform writes for the user (state snapshots, saved plans, reports,
//! JUnit, exported files) goes through here.

use std::fs::File;
use std::io::Write;
use std::path::Path;

/// Writes `bytes` to `path` durably and atomically.
pub fn write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_with(path, |file| file.write_all(bytes))
}

/// As [`write`], the contents written by `contents` through a buffer (a
/// large file need not be held whole in memory first).
pub fn write_with(
    path: &Path,
    contents: impl FnOnce(&mut std::io::BufWriter<File>) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let name = path.file_name().map_or_else(|| "file".into(), |n| n.to_string_lossy());
    let temporary = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let written = (|| {
        let mut file = std::io::BufWriter::with_capacity(1 << 16, File::create(&temporary)?);
        contents(&mut file)?;
        let file = file.into_inner().map_err(std::io::IntoInnerError::into_error)?;
        file.sync_all()?;
        drop(file);
        std::fs::rename(&temporary, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written?;
    sync_dir(dir);
    Ok(())
}

/// Makes a rename or a new file in `dir` durable.
pub(crate) fn sync_dir(dir: &Path) {
    if let Ok(directory) = File::open(dir) {
        let _ = directory.sync_all();
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn replaces_the_file_whole_and_leaves_nothing_beside_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plan.json");
        std::fs::write(&path, "old").unwrap();
        super::write(&path, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["plan.json"]);
        // A folder that does not exist: an error, and nothing written.
        assert!(super::write(&dir.path().join("missing/plan.json"), b"x").is_err());
    }
}
