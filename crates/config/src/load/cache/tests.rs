use super::*;
use crate::load::load_with_cache;

const SECRET: &str = "hunter2-secret-token";

fn check(id: &str, name: &str) -> String {
    format!("  {id}: {{ checkType: ICMP, name: {name}, group: web, request: {{ hostname: {id}.example.com }} }}\n")
}

/// A project of three files: a group and two files of checks.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(
        root.join("monform.toml"),
        "[project]\nname = \"p\"\n\n[defaults]\nfrequency = 10\n",
    )
    .unwrap();
    std::fs::write(root.join("groups.yaml"), "groups:\n  web: { name: Web }\n").unwrap();
    std::fs::write(
        root.join("a.yaml"),
        format!("checks:\n{}{}", check("a1", "A1"), check("a2", "A2")),
    )
    .unwrap();
    std::fs::write(root.join("b.toml"), "[checks.b1]\ncheckType = \"ICMP\"\nname = \"B1\"\ngroup = \"web\"\nrequest = { hostname = \"b.example.com\" }\n").unwrap();
    dir
}

fn cached(root: &Path, env: &(dyn Fn(&str) -> Option<String> + Sync)) -> crate::Loaded {
    let loaded = load_with_cache(root, env, None, Some(&root.join(CACHE_DIR)));
    assert!(loaded.is_ok(), "{:?}", loaded.diagnostics);
    // Its entries written, as when the process exits.
    super::settle();
    loaded
}

fn no_env(_: &str) -> Option<String> {
    None
}

fn entries(root: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(root.join(CACHE_DIR).join("files"))
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    found.sort();
    found
}

#[test]
fn a_second_load_parses_only_the_edited_file_and_loads_the_same() {
    let dir = project();
    let root = dir.path();
    let first = cached(root, &no_env);
    assert_eq!(first.cache, CacheStats { hits: 0, parsed: 3 });
    assert_eq!(entries(root).len(), 3);
    let second = cached(root, &no_env);
    assert_eq!(second.cache, CacheStats { hits: 3, parsed: 0 });
    // The same resources, spans and references as parsing gives.
    let plain = crate::load(root, &no_env);
    assert_eq!(second.desired.resources, plain.desired.resources);
    assert_eq!(second.warnings, plain.warnings);

    std::fs::write(
        root.join("a.yaml"),
        format!("checks:\n{}{}", check("a1", "A1 edited"), check("a2", "A2")),
    )
    .unwrap();
    let third = cached(root, &no_env);
    assert_eq!(third.cache, CacheStats { hits: 2, parsed: 1 });
    assert_eq!(third.desired.resources, crate::load(root, &no_env).desired.resources);
    let a1 = third.desired.resources.keys().find(|a| a.id == "a1").unwrap();
    assert_eq!(third.desired.resources[a1].resource.to_json()["name"], "A1 edited");
}

#[test]
fn what_else_a_file_reads_is_in_its_key() {
    let dir = project();
    let root = dir.path();
    cached(root, &no_env);
    std::fs::write(
        root.join("monform.toml"),
        "[project]\nname = \"p\"\n\n[defaults]\nfrequency = 5\n",
    )
    .unwrap();
    let changed = cached(root, &no_env);
    assert_eq!(changed.cache, CacheStats { hits: 0, parsed: 3 });
    let check = changed
        .desired
        .resources
        .values()
        .find(|r| r.address.id == "a1")
        .unwrap();
    assert_eq!(check.resource.to_json()["frequency"], 5);
}

#[test]
fn a_corrupt_or_foreign_entry_is_ignored_and_rewritten() {
    let dir = project();
    let root = dir.path();
    cached(root, &no_env);
    let files = entries(root);
    std::fs::write(&files[0], b"{ not json").unwrap();
    let text = std::fs::read_to_string(&files[1]).unwrap();
    // Another version's entry, and one holding another key's resources.
    let format = format!("\"format\":{CACHE_FORMAT}");
    assert!(text.contains(&format), "{text}");
    std::fs::write(&files[1], text.replace(&format, "\"format\":999")).unwrap();
    // Another file's entry under this file's name (its key is not this one's).
    std::fs::copy(&files[2], &files[0]).unwrap();
    std::fs::write(&files[2], b"").unwrap();
    let loaded = cached(root, &no_env);
    assert_eq!(loaded.cache, CacheStats { hits: 0, parsed: 3 });
    assert_eq!(loaded.desired.resources, crate::load(root, &no_env).desired.resources);
    let again = cached(root, &no_env);
    assert_eq!(again.cache.parsed, 0, "every entry was rewritten");
    for file in entries(root) {
        let stored: Stored<ReadResource> = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
        assert_eq!(stored.format, CACHE_FORMAT);
        assert_eq!(Some(stored.key.as_str()), file.file_stem().and_then(|s| s.to_str()));
    }
}

/// A resource is read in place by the kind its address names: an entry
/// whose resource is not of that kind is ignored like a corrupt one.
#[test]
fn an_entry_whose_resource_is_not_of_its_kind_is_ignored() {
    let dir = project();
    let root = dir.path();
    cached(root, &no_env);
    for file in entries(root) {
        let text = std::fs::read_to_string(&file).unwrap();
        std::fs::write(&file, text.replace("[\"checks.", "[\"groups.")).unwrap();
    }
    let loaded = cached(root, &no_env);
    // groups.yaml's entry is as it was; the two files of checks are parsed again.
    assert_eq!(loaded.cache, CacheStats { hits: 1, parsed: 2 });
    assert_eq!(loaded.desired.resources, crate::load(root, &no_env).desired.resources);
}

#[test]
fn secrets_are_never_written_into_the_cache() {
    let dir = project();
    let root = dir.path();
    std::fs::write(
        root.join("monform.toml"),
        "[project]\nname = \"p\"\n\n[vars]\ntoken = \"${env:TOKEN}\"\n\n[defaults]\nfrequency = 10\n",
    )
    .unwrap();
    std::fs::write(
        root.join("secret.yaml"),
        "variables:\n  API_TOKEN: { value: \"${env:TOKEN}\", secret: true }\n",
    )
    .unwrap();
    std::fs::write(
        root.join("uses-var.yaml"),
        "checks:\n  v1: { checkType: ICMP, name: \"V ${var:token}\", request: { hostname: v.example.com } }\n",
    )
    .unwrap();
    let env = |name: &str| (name == "TOKEN").then(|| SECRET.to_owned());
    let loaded = cached(root, &env);
    assert_eq!(loaded.cache.parsed, 5);
    let found = entries(root);
    // The three files without secrets are cached; neither secret file is.
    assert_eq!(found.len(), 3);
    for file in &found {
        let text = std::fs::read_to_string(file).unwrap();
        assert!(!text.contains(SECRET), "{}", file.display());
        assert!(!file.to_string_lossy().contains(SECRET));
    }
    // Another secret value: the cached files still hit, the rest is loaded afresh.
    let other = |name: &str| (name == "TOKEN").then(|| "another-value".to_owned());
    let again = cached(root, &other);
    assert_eq!(again.cache, CacheStats { hits: 3, parsed: 2 });
    let v1 = again.desired.resources.values().find(|r| r.address.id == "v1").unwrap();
    assert_eq!(v1.resource.to_json()["name"], "V another-value");
}

/// A `forEach` over a data file depends on the data file's bytes, which no
/// key holds: such a file is loaded afresh, so an edit of the data is seen.
#[test]
fn a_data_file_edit_is_seen() {
    let dir = project();
    let root = dir.path();
    std::fs::write(root.join("hosts.csv"), "key,host\nx,x.example.com\n").unwrap();
    std::fs::write(
        root.join("d.yaml"),
        "checks:\n  ping:\n    forEach: { file: hosts.csv }\n    checkType: ICMP\n    name: \"Ping ${each.key}\"\n    group: web\n    request: { hostname: \"${each.value.host}\" }\n",
    )
    .unwrap();
    let first = cached(root, &no_env);
    assert_eq!(first.desired.resources.len(), 5, "{:?}", first.desired.resources.keys());
    std::fs::write(root.join("hosts.csv"), "key,host\nx,x.example.com\ny,y.example.com\n").unwrap();
    let second = cached(root, &no_env);
    assert_eq!(second.desired.resources.len(), 6);
}

/// The entries' files, by the digest of the file name they are for.
fn entries_of(root: &Path, file: &str) -> Vec<PathBuf> {
    let digest = hex(&Sha256::digest(file.as_bytes()));
    entries(root)
        .into_iter()
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&digest[..NAME_DIGITS]))
        })
        .collect()
}

#[test]
fn entries_of_removed_or_edited_files_are_pruned() {
    let dir = project();
    let root = dir.path();
    cached(root, &no_env);
    let old_a = entries_of(root, "a.yaml");
    assert_eq!(old_a.len(), 1);
    // An entry of an older layout, and a temporary file a crash left.
    std::fs::write(
        root.join(CACHE_DIR)
            .join("files")
            .join(format!("{}.json", "0".repeat(64))),
        b"{}",
    )
    .unwrap();
    let leftover = root.join(CACHE_DIR).join("files").join(".x.json.1.0.tmp");
    std::fs::write(&leftover, b"{").unwrap();
    let fresh = root.join(CACHE_DIR).join("files").join(".y.json.1.0.tmp");
    std::fs::write(&fresh, b"{").unwrap();
    let past = std::time::SystemTime::now() - STALE_TEMPORARY - std::time::Duration::from_secs(60);
    std::fs::File::options()
        .write(true)
        .open(&leftover)
        .unwrap()
        .set_modified(past)
        .unwrap();

    std::fs::remove_file(root.join("b.toml")).unwrap();
    std::fs::write(
        root.join("a.yaml"),
        format!("checks:\n{}{}", check("a1", "A1 edited"), check("a2", "A2")),
    )
    .unwrap();
    let loaded = cached(root, &no_env);
    assert_eq!(loaded.cache, CacheStats { hits: 1, parsed: 1 });
    assert!(entries_of(root, "b.toml").is_empty(), "{:?}", entries(root));
    let new_a = entries_of(root, "a.yaml");
    assert_eq!(new_a.len(), 1, "{:?}", entries(root));
    assert_ne!(new_a, old_a, "the edited file's old entry is gone");
    assert!(!leftover.exists(), "a crash's leftover is removed");
    assert!(fresh.exists(), "a write in progress is not");
    // Only the two files' entries and the fresh temporary file are left.
    assert_eq!(entries(root).len(), 3, "{:?}", entries(root));
}

#[test]
fn other_contexts_are_kept_within_a_bound() {
    let dir = project();
    let root = dir.path();
    let defaults = |frequency: u32| {
        std::fs::write(
            root.join("monform.toml"),
            format!("[project]\nname = \"p\"\n\n[defaults]\nfrequency = {frequency}\n"),
        )
        .unwrap();
    };
    cached(root, &no_env);
    defaults(5);
    cached(root, &no_env);
    assert_eq!(entries(root).len(), 6, "the other context's entries are kept");
    defaults(10);
    assert_eq!(
        cached(root, &no_env).cache,
        CacheStats { hits: 3, parsed: 0 },
        "switching back hits"
    );
    for frequency in [1, 2, 15, 30, 60] {
        defaults(frequency);
        cached(root, &no_env);
    }
    // Three files: this context's three entries and at most three per file of others.
    assert_eq!(entries(root).len(), 3 + 3 * OTHER_CONTEXTS, "{:?}", entries(root));
    // The most recent other context is among those kept.
    defaults(30);
    assert_eq!(cached(root, &no_env).cache.hits, 3);
}
