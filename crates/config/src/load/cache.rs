//! The parse cache (issue 29 item 4): each resource file's validated
//! resources, under `.monform/cache/files/`, keyed by a digest of the
//! file's bytes and everything else its load reads, so a plan after an
//! edit to one file of a thousand parses and validates that one file.
//!
//! What a file's resources depend on besides its bytes: its name, the
//! project's `[defaults]` and `[vars]`, the environments, and the
//! `${env:}` policy; all are in the key (`Cache::new`). A value from the
//! environment is never in the cache, not even as a digest in a key: a
//! sensitive `[vars]` or `[defaults]` value enters the key as a marker only,
//! and a file is cached only when none of its resources holds sensitive
//! text (so one that used such a value is loaded afresh each time). A file
//! that reads the environment itself (`${env:}`), other files (`{ file: }`
//! scripts, `forEachFile`, `forEach: { file: }` data), declares `moved`/`import`/`removed` entries,
//! defines a resource its `environments` leave out of the environment
//! loaded (the entries of other files need to know) or has any problem is
//! not cached either: it is loaded as without a cache.
//!
//! An entry is JSON written to a temporary file and renamed into place, so
//! a reader sees all of it or none; one that does not parse, has another
//! format version or another key (corrupt, foreign) is ignored and
//! rewritten. No fsync: a torn entry after a crash is such an entry. The
//! folder is safe to delete.
//!
//! Entries are written after the files are read, by one thread in the
//! background (`Cache::finish`), while the load goes on: a first load of
//! 1,000 files creates 1,000 files, and two parsing threads creating them
//! in one folder spent much of their time waiting on its lock (0.5-2 s of
//! a language server's first diagnostics at 100,000 checks on 2 cores).
//! The next load in the process waits for them (`Cache::new`), and so
//! must a process before it exits ([`settle`]).
//!
//! An entry's name is `FILE-CONTEXT-KEY.json` (digests of the file's name
//! and of the context, then the key), so each load prunes by names alone
//! (`Cache::prune`): entries of files that no longer exist, and of this
//! context's files whose text changed, are removed; entries of other
//! contexts (another environment, the `[defaults]` before an edit) are
//! kept, at most [`OTHER_CONTEXTS`] per file of the project, the oldest
//! removed first; temporary files a crash left behind go after an hour.

use std::borrow::Cow;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread::JoinHandle;

use monform_model::validate::RefSite;
use monform_model::{Address, FieldPath, Kind, Resource};
use rustc_hash::FxHashMap;
use serde::de::{self, DeserializeSeed, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use sha2::{Digest, Sha256};

use super::{Item, ReadFile, Validated};
use crate::declare::Declarations;
use crate::expand::Context;
use crate::source::{FileId, Format, SourceFile, Span};
use crate::tree::{Entry, Node, NodeValue};

/// Changes whenever what an entry holds or means changes; entries of
/// another version are never read.
pub const CACHE_FORMAT: u32 = 5;

/// The folder of the cache, below a project's root.
pub const CACHE_DIR: &str = ".monform/cache";

/// monform.toml is always the first source (`Loader::load_project`).
const PROJECT_FILE_ID: FileId = 0;

/// Entries of other contexts kept per file of the project: switching
/// between a few environments (or undoing a `[defaults]` edit) still hits.
pub const OTHER_CONTEXTS: usize = 3;

/// How old a temporary file must be to be taken for a crash's leftover
/// rather than a write in progress.
const STALE_TEMPORARY: std::time::Duration = std::time::Duration::from_secs(3600);

/// Hex digits of a digest in an entry's name (collisions cost a re-parse).
const NAME_DIGITS: usize = 16;

/// The cache of one load: where entries live and the digest of what every
/// file's load reads besides the file.
pub(super) struct Cache {
    dir: PathBuf,
    context: String,
    /// Each file this load asked a key for, by its name's digest: its key,
    /// `None` when it may not be cached. For `prune`.
    seen: Mutex<FxHashMap<String, Option<String>>>,
    /// Entries made by this load, written by `finish`: (path, text).
    made: Mutex<Vec<(PathBuf, Vec<u8>)>>,
}

/// The threads still writing a load's entries (`Cache::finish`).
static WRITERS: Mutex<Vec<JoinHandle<()>>> = Mutex::new(Vec::new());

/// Waits until every parse cache entry this process made is written (and
/// the cache pruned): a process calls it before it exits, or its last
/// load's entries are lost (no harm but a slower next load).
pub fn settle() {
    let writers = std::mem::take(&mut *WRITERS.lock().unwrap_or_else(|e| e.into_inner()));
    for writer in writers {
        let _ = writer.join();
    }
}

/// How the cache fared in one load (for tests and the bench).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct CacheStats {
    /// Files whose resources came from the cache.
    pub hits: usize,
    /// Files parsed and validated (and written to the cache when they may be).
    pub parsed: usize,
}

/// An entry, as written (`R` = [`StoredResource`]) and as read (`R` =
/// [`ReadResource`]).
#[derive(Serialize, Deserialize)]
struct Stored<R> {
    format: u32,
    key: String,
    /// The file's name: an entry is for one file of one project.
    file: String,
    resources: Vec<R>,
}

/// A span as `[origin, start, len]`: origin 0 is the file itself, 1 is
/// monform.toml (where `[defaults]` come from).
type StoredSpan = (u8, usize, usize);

/// A resource as `[address, key span, item span, resource, refs, own
/// fields]`; the resource in its stored form (`Resource::to_stored`: a
/// check's read back several times faster than its JSON form), written as
/// the text it was made as.
#[derive(Serialize)]
struct StoredResource(
    String,
    StoredSpan,
    Option<StoredSpan>,
    Box<RawValue>,
    Vec<StoredRef>,
    Vec<(String, StoredSpan)>,
);

/// A [`StoredResource`] read back, its resource read in place (by the kind
/// its address names) rather than kept as text and parsed again: a second
/// pass over most of the entry. Boxed as an `Item` holds it: a list of
/// resources inline, grown as it is read, held twice their memory. Its
/// references and own fields are read into their final form as they are
/// read, their names borrowed from the entry's text (a name copied to be
/// parsed was an allocation for each, 400,000 at 100,000 checks).
struct ReadResource {
    address: Address,
    key: StoredSpan,
    item: Option<StoredSpan>,
    resource: Box<Resource>,
    refs: Vec<(RefSite, StoredSpan)>,
    own: Vec<(&'static str, StoredSpan)>,
}

impl<'de> Deserialize<'de> for ReadResource {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<ReadResource, D::Error> {
        deserializer.deserialize_seq(ReadVisitor)
    }
}

struct ReadVisitor;

/// The resource of a kind, read by `Resource::from_stored`.
struct KindSeed(Kind);

impl<'de> DeserializeSeed<'de> for KindSeed {
    type Value = Box<Resource>;

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<Box<Resource>, D::Error> {
        Resource::from_stored(self.0, deserializer).map(Box::new)
    }
}

/// A string of the entry, borrowed from its text when it has no escapes.
#[derive(Deserialize)]
struct Text<'a>(#[serde(borrow)] Cow<'a, str>);

/// A [`StoredRef`] as read, its names borrowed.
#[derive(Deserialize)]
struct ReadRef<'a>(
    #[serde(borrow)] Cow<'a, str>,
    #[serde(borrow)] Cow<'a, str>,
    String,
    bool,
    StoredSpan,
);

impl<'de> Visitor<'de> for ReadVisitor {
    type Value = ReadResource;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a cached resource: [address, key, item, resource, refs, own]")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ReadResource, A::Error> {
        fn next<'de, A: SeqAccess<'de>, T: Deserialize<'de>>(seq: &mut A, at: usize) -> Result<T, A::Error> {
            seq.next_element()?
                .ok_or_else(|| de::Error::invalid_length(at, &ReadVisitor))
        }
        let Text(address) = next(&mut seq, 0)?;
        // Not checked against the rules for logical ids again (a regular
        // expression per resource): the entry holds the address its file
        // defined, under a key of the file's bytes, as it holds the
        // resource, whose fields are not checked again either.
        let address = address
            .split_once('.')
            .and_then(|(section, id)| Some(Address::new(Kind::from_section(section)?, id)))
            .ok_or_else(|| de::Error::custom(format!("not an address: {address}")))?;
        let key = next(&mut seq, 1)?;
        let item = next(&mut seq, 2)?;
        let resource = seq
            .next_element_seed(KindSeed(address.kind))?
            .ok_or_else(|| de::Error::invalid_length(3, &ReadVisitor))?;
        let refs: Vec<ReadRef<'de>> = next(&mut seq, 4)?;
        let refs = refs
            .into_iter()
            .map(|ReadRef(path, target, id, soft, span)| {
                let site = RefSite {
                    path: FieldPath::parse(&path),
                    target: Kind::from_section(&target)?,
                    id,
                    soft,
                };
                Some((site, span))
            })
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| de::Error::custom("a reference to no section"))?;
        let own: Vec<(Text<'de>, StoredSpan)> = next(&mut seq, 5)?;
        let own = own
            .into_iter()
            .map(|(Text(field), span)| {
                let field = monform_model::group_rules::GROUP_OVERRIDES
                    .iter()
                    .chain(crate::slos::SPANNED_FIELDS)
                    .find(|f| **f == field)?;
                Some((*field, span))
            })
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| de::Error::custom("an own field of no kind"))?;
        Ok(ReadResource {
            address,
            key,
            item,
            resource,
            refs,
            own,
        })
    }
}

/// A reference as `[path, target section, id, soft, span]`: a list, not an
/// object, as a resource has several and the names were a third of it.
#[derive(Serialize)]
struct StoredRef(String, String, String, bool, StoredSpan);

impl Cache {
    /// The cache under `dir` for a load in `context` with `defaults`.
    pub(super) fn new(dir: &Path, defaults: &[Entry], context: &Context<'_>) -> Cache {
        // What the last load made is there to be read.
        settle();
        let mut hasher = Sha256::new();
        hasher.update(format!("monform {} cache {CACHE_FORMAT}\n", env!("CARGO_PKG_VERSION")));
        hasher.update(format!("{:?}\n", masked(defaults)));
        hasher.update(format!("{:?}\n", masked(context.vars)));
        hasher.update(format!("{:?}\n{:?}\n", context.environments, context.environment));
        hasher.update(format!("{:?}\n", context.policy));
        Cache {
            dir: dir.join("files"),
            context: hex(&hasher.finalize()),
            seen: Mutex::default(),
            made: Mutex::default(),
        }
    }

    /// Writes the entries this load made, then prunes (`prune`), in a
    /// thread of its own that [`settle`] waits for. Should no thread start,
    /// nothing is written: the cache is only a cache.
    pub(super) fn finish(self) {
        let writer = std::thread::Builder::new()
            .name("monform-cache".into())
            .spawn(move || self.write_made());
        if let Ok(writer) = writer {
            WRITERS.lock().unwrap_or_else(|e| e.into_inner()).push(writer);
        }
    }

    fn write_made(&self) {
        // Behind the load's own threads, which go on with what the user
        // waits for: on 2 cores it found the time they left free.
        #[cfg(target_os = "linux")]
        // SAFETY: sets this thread's nice value (Linux's is per thread).
        unsafe {
            libc::setpriority(libc::PRIO_PROCESS, 0, 19);
        }
        let made = std::mem::take(&mut *self.made.lock().unwrap_or_else(|e| e.into_inner()));
        if !made.is_empty() && std::fs::create_dir_all(&self.dir).is_ok() {
            for (path, text) in made {
                let _ = write_atomically(&self.dir, &path, &text);
            }
        }
        self.prune();
    }

    /// The key of a file, or `None` when the file may not be cached for
    /// what its text says (it reads the environment or other files).
    pub(super) fn key(&self, source: &SourceFile) -> Option<String> {
        let key = self.key_of(source);
        let file = hex(&Sha256::digest(source.name.as_bytes()))[..NAME_DIGITS].to_owned();
        self.seen
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(file, key.clone());
        key
    }

    fn key_of(&self, source: &SourceFile) -> Option<String> {
        let text = &source.text;
        // `forEach: { file: }` and `forEachFile` read other files, whose
        // bytes are not in this key (a test: `a_data_file_edit_is_seen`).
        let reads_files = text.contains("forEach") && text.contains("file");
        if text.contains("${env:") || reads_files {
            return None;
        }
        let mut hasher = Sha256::new();
        hasher.update(&self.context);
        hasher.update([0]);
        hasher.update(source.name.as_bytes());
        hasher.update([0, matches!(source.format, Format::Toml) as u8, 0]);
        hasher.update(text.as_bytes());
        let file = hex(&Sha256::digest(source.name.as_bytes()));
        Some(format!(
            "{}-{}-{}",
            &file[..NAME_DIGITS],
            &self.context[..NAME_DIGITS],
            hex(&hasher.finalize())
        ))
    }

    /// Removes the entries this load shows to be of no further use (see
    /// the module's comment). Called once the load read every file; a
    /// failure to list or remove is no error.
    fn prune(&self) {
        let Ok(listing) = std::fs::read_dir(&self.dir) else {
            return;
        };
        let seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        let context = &self.context[..NAME_DIGITS];
        let mut others = Vec::new();
        for entry in listing.flatten() {
            let path = entry.path();
            let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
                continue;
            };
            if name.ends_with(".tmp") {
                let age = entry
                    .metadata()
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| t.elapsed().ok());
                if age.is_some_and(|age| age > STALE_TEMPORARY) {
                    let _ = std::fs::remove_file(&path);
                }
                continue;
            }
            let Some(stem) = name.strip_suffix(".json") else {
                continue;
            };
            let mut parts = stem.splitn(3, '-');
            let useful = match (parts.next(), parts.next(), parts.next()) {
                (Some(file), Some(entry_context), Some(_)) => match seen.get(file) {
                    // Its file is gone.
                    None => false,
                    // This context's entry of a file whose text changed.
                    Some(key) if entry_context == context => key.as_deref() == Some(stem),
                    // Another context's: kept within the bound below.
                    Some(_) => {
                        let modified = entry.metadata().and_then(|m| m.modified()).ok();
                        others.push((modified, path));
                        continue;
                    }
                },
                // An entry of an older layout: never read again.
                _ => false,
            };
            if !useful {
                let _ = std::fs::remove_file(&path);
            }
        }
        let keep = seen.len().saturating_mul(OTHER_CONTEXTS);
        if others.len() > keep {
            others.sort();
            for (_, path) in &others[..others.len() - keep] {
                let _ = std::fs::remove_file(path);
            }
        }
    }

    fn path(&self, key: &str) -> PathBuf {
        self.dir.join(format!("{key}.json"))
    }

    /// The file's resources as cached under `key`, with spans in file `id`;
    /// `None` when there is no entry or it cannot be used.
    pub(super) fn read(&self, key: &str, source: &SourceFile, id: FileId) -> Option<Vec<Item>> {
        // Checked as UTF-8 once, whole: parsed from bytes, each string was
        // checked on its own, a fifth of reading an entry.
        let text = std::fs::read_to_string(self.path(key)).ok()?;
        let stored: Stored<ReadResource> = serde_json::from_str(&text).ok()?;
        if stored.format != CACHE_FORMAT || stored.key != key || stored.file != source.name {
            return None;
        }
        stored.resources.into_iter().map(|r| item(r, id)).collect()
    }

    /// Writes the file's resources under `key` if they may be cached (see
    /// the module's comment). Failing to write is no error: the cache is
    /// only a cache.
    pub(super) fn write(&self, key: &str, id: FileId, file: &ReadFile, items: &[Item], declared: &Declarations) {
        if !file.diagnostics.is_empty() || !declared.is_empty() {
            return;
        }
        let Some(resources) = items.iter().map(|i| stored(i, id)).collect::<Option<Vec<_>>>() else {
            return;
        };
        let stored = Stored {
            format: CACHE_FORMAT,
            key: key.to_owned(),
            file: file.source.name.clone(),
            resources,
        };
        let Ok(text) = serde_json::to_vec(&stored) else { return };
        let made = (self.path(key), text);
        self.made.lock().unwrap_or_else(|e| e.into_inner()).push(made);
    }
}

/// Entries with every sensitive value replaced: what a key may hold.
fn masked(entries: &[Entry]) -> Vec<Entry> {
    fn mask(node: &mut Node) {
        if node.sensitive.is_some() {
            node.value = NodeValue::Str("(sensitive)".into());
            return;
        }
        match &mut node.value {
            NodeValue::Seq(items) => items.iter_mut().for_each(mask),
            NodeValue::Map(entries) => entries.iter_mut().for_each(|e| mask(&mut e.value)),
            _ => {}
        }
    }
    let mut entries = entries.to_vec();
    entries.iter_mut().for_each(|e| mask(&mut e.value));
    entries
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn store_span(span: Span, id: FileId) -> Option<StoredSpan> {
    match span.file {
        file if file == id => Some((0, span.start, span.len)),
        PROJECT_FILE_ID => Some((1, span.start, span.len)),
        _ => None,
    }
}

fn load_span((origin, start, len): StoredSpan, id: FileId) -> Option<Span> {
    match origin {
        0 => Some(Span::new(id, start, len)),
        1 => Some(Span::new(PROJECT_FILE_ID, start, len)),
        _ => None,
    }
}

/// An item as an entry holds it, or `None` when it may not be cached: it
/// is invalid, has something to say, holds sensitive text or read a
/// script, or would not read back as itself.
fn stored(item: &Item, id: FileId) -> Option<StoredResource> {
    let Validated {
        resource: Some(resource),
        refs,
        sensitive,
        substituted: _,
        reads_files: false,
    } = &item.validated
    else {
        return None;
    };
    if !item.diagnostics.is_empty() || !sensitive.is_empty() {
        return None;
    }
    let json = resource.to_stored();
    if Resource::from_stored_str(item.address.kind, json.get()).ok().as_ref() != Some(resource) {
        return None;
    }
    let refs = refs
        .iter()
        .map(|(site, span)| {
            let path = site.path.to_string();
            (FieldPath::parse(&path) == site.path).then_some(())?;
            Some(StoredRef(
                path,
                site.target.section().to_owned(),
                site.id.clone(),
                site.soft,
                store_span(*span, id)?,
            ))
        })
        .collect::<Option<Vec<_>>>()?;
    let own = item
        .own_fields
        .iter()
        .map(|(field, span)| Some(((*field).to_owned(), store_span(*span, id)?)))
        .collect::<Option<Vec<_>>>()?;
    let extent = match item.item {
        Some(span) => Some(store_span(span, id)?),
        None => None,
    };
    Some(StoredResource(
        item.address.to_string(),
        store_span(item.key_span, id)?,
        extent,
        json,
        refs,
        own,
    ))
}

fn item(stored: ReadResource, id: FileId) -> Option<Item> {
    let ReadResource {
        address,
        key,
        item,
        resource,
        refs,
        own,
    } = stored;
    let refs = refs
        .into_iter()
        .map(|(site, span)| Some((site, load_span(span, id)?)))
        .collect::<Option<Vec<_>>>()?;
    let own_fields = own
        .into_iter()
        .map(|(field, span)| Some((field, load_span(span, id)?)))
        .collect::<Option<Vec<_>>>()?;
    Some(Item {
        address,
        key_span: load_span(key, id)?,
        item: match item {
            Some(span) => Some(load_span(span, id)?),
            None => None,
        },
        validated: Validated {
            resource: Some(resource),
            refs,
            sensitive: Vec::new(),
            substituted: Vec::new(),
            reads_files: false,
        },
        diagnostics: Vec::new(),
        own_fields,
    })
}

/// Writes `bytes` to a temporary file beside `path` and renames it there:
/// readers see the old entry, the new one, or none, never part of one.
fn write_atomically(dir: &Path, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let temporary = dir.join(format!(
        ".{}.{}.{}.tmp",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("entry"),
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let written = std::fs::File::create(&temporary).and_then(|mut file| file.write_all(bytes));
    match written.and_then(|()| std::fs::rename(&temporary, path)) {
        Ok(()) => Ok(()),
        Err(error) => {
            let _ = std::fs::remove_file(&temporary);
            Err(error)
        }
    }
}

#[cfg(test)]
mod tests;
