//! The local snapshot's format. Version 2 is lean: compact JSON, one entry
//! a line, 16-digit fingerprints, and the field-name lists the entries
//! share (`managed`: most checks of a type set the same fields) written
//! once in `fieldSets` and named by index. About 160 bytes an entry where
//! version 1 took about 500 (pretty-printed, every entry with its names).
//! Version 1 is still read, and upgraded (`State::upgrade`).
//!
//! ```text
//! {"version":2,"serial":7,"project":"shop","salt":"…","fieldSets":[
//! ["activated","checkType","frequency","name"],
//! ],"resources":{
//! "checks.a":{"remoteId":"…","version":"…","applied":"…","managed":0},
//! }}
//! ```
//!
//! The per-field fingerprints of drift marks (`fields`) are written the
//! same way: the index of their field paths in `fieldSets` and their
//! 12-character prints joined in that order (`"fields":[3,"0a1b…"]`): a
//! hash, or a number or boolean as itself padded to 12 (`=5000       `).
//! Plain text applied (not secret, not long) is kept as itself too, apart
//! from the prints: `"texts":{"name":"Login"}` (issue 45).
//!
//! `read` takes a snapshot in this layout a line at a time, each entry
//! made as it is read and the map built in merged runs: neither the
//! file's text nor a list of every entry is held beside the state (at
//! 100,000 checks they were 90 MB at the peak of a plan: issue 48). Any
//! other layout (edited by hand) or version is read whole (`decode`).

use std::borrow::{Borrow, Cow};
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Serialize};

use super::{FieldSet, Fingerprints, ResourceState, STATE_VERSION, State, StateError};
use crate::forms::PRINT_WIDTH;

/// An entry as written: borrowed (`S` = `&str`, `M` = `&BTreeMap`) or read.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[serde(bound(
    serialize = "S: Serialize, M: Serialize + Borrow<BTreeMap<String, String>>",
    deserialize = "S: Deserialize<'de>, M: Deserialize<'de> + Default"
))]
struct Entry<S, M> {
    remote_id: S,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    version: Option<S>,
    applied: S,
    #[serde(default, skip_serializing_if = "is_empty")]
    secrets: M,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    prevent_destroy: bool,
    /// The index of the entry's field names in `fieldSets`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    managed: Option<usize>,
    /// The index of the field paths in `fieldSets` and their fingerprints
    /// joined in that order (all of one length).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    fields: Option<(usize, S)>,
    /// The service's normal forms, by field path (`normal.rs`).
    #[serde(default, skip_serializing_if = "is_empty")]
    normal: M,
    /// The plain text applied, by field path: kept after its print in
    /// memory (`forms::field_print`), apart here so that `fields` stays of
    /// one width (and readable by a monform from before it).
    #[serde(default, skip_serializing_if = "is_empty")]
    texts: M,
    /// Replaced objects whose delete is not confirmed ([`ResourceState::retired`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    retired: Vec<S>,
}

fn is_empty<M: Borrow<BTreeMap<String, String>>>(map: &M) -> bool {
    map.borrow().is_empty()
}

/// An entry as read.
type ReadEntry = Entry<String, BTreeMap<String, String>>;

/// A version 2 snapshot as read ([`FileVisitor`]): each entry made a
/// [`ResourceState`] as soon as it is read, so the entries as written
/// (their joined prints, their texts' maps) are never all held at once:
/// at 100,000 entries they were 120 MB on top of the state, at the start
/// of a plan, while the account's listings arrive (issue 48).
struct File {
    version: u32,
    serial: u64,
    project: String,
    salt: String,
    target: Option<super::Target>,
    /// The field sets named by index (`read_lines` reads the entries after).
    sets: Vec<FieldSet>,
    resources: BTreeMap<String, ResourceState>,
}

impl<'de> Deserialize<'de> for File {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<File, D::Error> {
        deserializer.deserialize_map(FileVisitor)
    }
}

/// Reads a snapshot's top level in one pass. `write` puts `fieldSets`
/// before `resources`, so each entry is made with its sets as it is read;
/// a file in another order (edited by hand) has its entries gathered first.
struct FileVisitor;

impl<'de> Visitor<'de> for FileVisitor {
    type Value = File;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a monform state snapshot")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<File, A::Error> {
        let (mut version, mut serial, mut project, mut salt, mut target) = (None, None, None, None, None);
        let mut sets: Option<Vec<FieldSet>> = None;
        let mut resources = None;
        let mut unsorted: Option<BTreeMap<String, ReadEntry>> = None;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "version" => {
                    let read: u32 = map.next_value()?;
                    // Another version's entries are not read as these.
                    if read != STATE_VERSION {
                        return Err(de::Error::custom(format_args!(
                            "not a version {STATE_VERSION} snapshot"
                        )));
                    }
                    version = Some(read);
                }
                "serial" => serial = Some(map.next_value()?),
                "project" => project = Some(map.next_value()?),
                "salt" => salt = Some(map.next_value()?),
                "target" => target = map.next_value()?,
                // Each set once in memory too, shared by its entries.
                "fieldSets" => {
                    let read: Vec<Vec<String>> = map.next_value()?;
                    sets = Some(read.into_iter().map(FieldSet::from).collect());
                }
                "resources" => match &sets {
                    Some(sets) => resources = Some(map.next_value_seed(Resources { sets })?),
                    None => unsorted = Some(map.next_value()?),
                },
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let sets = sets.unwrap_or_default();
        let resources = match (resources, unsorted) {
            (Some(resources), _) => resources,
            (None, Some(entries)) => {
                let mut built = MapBuilder::default();
                for (address, entry) in entries {
                    let (address, state) = entry_state(address, entry, &sets).map_err(de::Error::custom)?;
                    built.push(address, state);
                }
                built.finish()
            }
            (None, None) => return Err(de::Error::missing_field("resources")),
        };
        Ok(File {
            version: version.ok_or_else(|| de::Error::missing_field("version"))?,
            serial: serial.ok_or_else(|| de::Error::missing_field("serial"))?,
            project: project.ok_or_else(|| de::Error::missing_field("project"))?,
            salt: salt.ok_or_else(|| de::Error::missing_field("salt"))?,
            target,
            sets,
            resources,
        })
    }
}

/// The `resources` of a snapshot, each entry made a [`ResourceState`]
/// with `sets` as it is read.
struct Resources<'s> {
    sets: &'s [FieldSet],
}

impl<'de> DeserializeSeed<'de> for Resources<'_> {
    type Value = BTreeMap<String, ResourceState>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Resources<'_> {
    type Value = BTreeMap<String, ResourceState>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the state's resources by address")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut resources = MapBuilder::default();
        while let Some((address, entry)) = map.next_entry::<String, ReadEntry>()? {
            let (address, state) = entry_state(address, entry, self.sets).map_err(de::Error::custom)?;
            resources.push(address, state);
        }
        Ok(resources.finish())
    }
}

/// A map built from entries as they come, its nodes as full as `collect`
/// makes them, without `collect`'s list of every entry beside the map
/// (31 MB at 100,000 entries, at the peak of a plan; inserting one at a
/// time leaves nodes half empty, 13 MB held through the plan). Entries
/// are gathered in small runs, and runs of about one size are merged
/// (`append` rebuilds full nodes, freeing the old ones as it goes); a later
/// entry of an address wins, as with `collect`.
struct MapBuilder<V> {
    /// Maps of entries in the order read, each at most half its elder's size.
    runs: Vec<BTreeMap<String, V>>,
    run: Vec<(String, V)>,
}

impl<V> Default for MapBuilder<V> {
    fn default() -> Self {
        MapBuilder {
            runs: Vec::new(),
            run: Vec::new(),
        }
    }
}

impl<V> MapBuilder<V> {
    /// Entries gathered before they are made a map of their own: each
    /// entry is moved once a merge, log2(entries / RUN) times (at 100,000
    /// entries, runs of 1,024 were a sixth of reading the state); a run is
    /// about 2 MB.
    const RUN: usize = 8192;

    fn push(&mut self, key: String, value: V) {
        self.run.push((key, value));
        if self.run.len() == Self::RUN {
            let run = self.run.drain(..).collect();
            self.merge(run);
        }
    }

    fn merge(&mut self, mut newer: BTreeMap<String, V>) {
        while let Some(mut older) = self.runs.pop_if(|older| older.len() <= newer.len()) {
            older.append(&mut newer);
            newer = older;
        }
        self.runs.push(newer);
    }

    fn finish(mut self) -> BTreeMap<String, V> {
        let mut map: BTreeMap<String, V> = self.run.drain(..).collect();
        while let Some(mut older) = self.runs.pop() {
            older.append(&mut map);
            map = older;
        }
        map
    }
}

/// An entry as read made a [`ResourceState`], its field names and paths
/// from `sets`; what is wrong with it, naming its address.
fn entry_state(address: String, entry: ReadEntry, sets: &[FieldSet]) -> Result<(String, ResourceState), String> {
    let set = |i: usize| {
        sets.get(i)
            .ok_or_else(|| format!("{address}: field set {i} does not exist"))
    };
    let managed = match entry.managed {
        None => FieldSet::default(),
        Some(i) => set(i)?.clone(),
    };
    let fields = match entry.fields {
        None => Fingerprints::default(),
        Some((i, hashes)) => entry_fields(set(i)?, hashes, &entry.texts)
            .ok_or_else(|| format!("{address}: the field fingerprints do not match set {i}"))?,
    };
    let state = ResourceState {
        remote_id: entry.remote_id,
        version: entry.version,
        applied: entry.applied,
        secrets: entry.secrets,
        prevent_destroy: entry.prevent_destroy,
        managed,
        fields,
        normal: entry.normal,
        retired: entry.retired,
    };
    Ok((address, state))
}

/// Only the version, to choose the reader.
#[derive(Deserialize)]
struct Head {
    version: u32,
}

/// The state as a version 2 snapshot.
#[cfg(test)]
pub fn encode(state: &State) -> Vec<u8> {
    let mut out = Vec::new();
    write(state, &mut out).expect("writing to memory cannot fail");
    out
}

/// Writes the state as a version 2 snapshot to `out`, entry by entry:
/// at 100,000 resources the whole text (and its copies as it grew) was the
/// largest thing an apply held at its end.
pub fn write<'a>(state: &'a State, out: &mut impl Write) -> std::io::Result<()> {
    let mut sets: HashMap<Vec<&str>, usize> = HashMap::new();
    let mut order: Vec<Vec<&str>> = Vec::new();
    let mut index = |names: Vec<&'a str>| -> Option<usize> {
        if names.is_empty() {
            return None;
        }
        Some(*sets.entry(names).or_insert_with_key(|names| {
            order.push(names.clone());
            order.len() - 1
        }))
    };
    let indexed: Vec<(Option<usize>, Option<usize>)> = state
        .resources
        .values()
        .map(|entry| {
            let managed = index(entry.managed.iter().map(String::as_str).collect());
            let fields = index(entry.fields.paths().iter().map(String::as_str).collect());
            (managed, fields)
        })
        .collect();
    write!(
        out,
        "{{\"version\":{STATE_VERSION},\"serial\":{},\"project\":{},\"salt\":{}",
        state.serial,
        json(&state.project),
        json(&state.salt)
    )?;
    // Before `fieldSets`: the header stays at the top of the file.
    if let Some(target) = &state.target {
        write!(out, ",\"target\":{}", json(target))?;
    }
    out.write_all(b",\"fieldSets\":[")?;
    for (i, set) in order.iter().enumerate() {
        out.write_all(if i == 0 { b"\n" } else { b",\n" })?;
        serde_json::to_writer(&mut *out, set)?;
    }
    out.write_all(b"],\"resources\":{")?;
    for (i, ((address, entry), (managed, fields))) in state.resources.iter().zip(indexed).enumerate() {
        out.write_all(if i == 0 { b"\n" } else { b",\n" })?;
        let (prints, texts) = split_texts(&entry.fields);
        let lean = Entry {
            remote_id: entry.remote_id.as_str(),
            version: entry.version.as_deref(),
            applied: entry.applied.as_str(),
            secrets: &entry.secrets,
            prevent_destroy: entry.prevent_destroy,
            managed,
            fields: fields.map(|i| (i, &*prints)),
            normal: &entry.normal,
            texts: &texts,
            retired: entry.retired.iter().map(String::as_str).collect(),
        };
        serde_json::to_writer(&mut *out, address)?;
        out.write_all(b":")?;
        serde_json::to_writer(&mut *out, &lean)?;
    }
    out.write_all(b"\n}}\n")
}

/// A snapshot read from `file` a line at a time (`read_lines`): its text
/// is never held whole (60 MB at 100,000 entries, held while the entries
/// were made, at the peak of a plan: issue 48). A file of another layout
/// or version, or one this reading refuses, is read again whole by
/// [`decode`], which upgrades an older version and says what is wrong.
pub fn read(file: &mut (impl Read + Seek), path: &str) -> Result<State, StateError> {
    if let Some(state) = read_lines(BufReader::with_capacity(1 << 16, &mut *file)) {
        return Ok(state);
    }
    let corrupt = |source: std::io::Error| StateError::Read {
        path: path.to_owned(),
        source,
    };
    file.seek(SeekFrom::Start(0)).map_err(corrupt)?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).map_err(corrupt)?;
    decode(&bytes, path)
}

/// The most of a file's top that is read looking for its entries.
const HEAD_LIMIT: usize = 1 << 20;

/// A snapshot in the layout [`write`] gives it, read a line at a time:
/// the top level and `fieldSets` up to `"resources":{`, then an entry a
/// line, then `}}`. Each line is parsed from memory, which is several
/// times faster than parsing from the file as it is read. `None` for any
/// other layout.
fn read_lines(mut reader: impl BufRead) -> Option<State> {
    let mut head = Vec::new();
    while !head.ends_with(b"\"resources\":{\n") {
        if head.len() > HEAD_LIMIT || reader.read_until(b'\n', &mut head).ok()? == 0 {
            return None;
        }
    }
    // The top level with no entries.
    head.pop();
    head.extend_from_slice(b"}}");
    let mut file: File = serde_json::from_slice(&head).ok()?;
    let mut resources = MapBuilder::default();
    let mut line = Vec::new();
    loop {
        line.clear();
        line.push(b'{');
        if reader.read_until(b'\n', &mut line).ok()? == 0 {
            return None;
        }
        if line == b"{}}\n" {
            break;
        }
        line.pop_if(|last| *last == b'\n');
        line.pop_if(|last| *last == b',');
        line.push(b'}');
        // Checked as UTF-8 whole: from bytes, each string was on its own.
        let text = std::str::from_utf8(&line).ok()?;
        let mut entry = serde_json::Deserializer::from_str(text);
        let (address, state) = Line { sets: &file.sets }.deserialize(&mut entry).ok()?;
        entry.end().ok()?;
        resources.push(address, state);
    }
    // Nothing after the end.
    if reader.read_until(b'\n', &mut line).ok()? != 0 {
        return None;
    }
    file.resources = resources.finish();
    Some(file.into_state())
}

/// One line of a snapshot's entries (`"address":{…}`), made an object.
struct Line<'s> {
    sets: &'s [FieldSet],
}

impl<'de> DeserializeSeed<'de> for Line<'_> {
    type Value = (String, ResourceState);

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Line<'_> {
    type Value = (String, ResourceState);

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("one entry of the state")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let (address, entry) = map
            .next_entry::<String, ReadEntry>()?
            .ok_or_else(|| de::Error::invalid_length(0, &self))?;
        if map.next_key::<IgnoredAny>()?.is_some() {
            return Err(de::Error::invalid_length(2, &self));
        }
        entry_state(address, entry, self.sets).map_err(de::Error::custom)
    }
}

impl File {
    fn into_state(self) -> State {
        State {
            version: self.version,
            serial: self.serial,
            project: self.project,
            salt: self.salt,
            target: self.target,
            resources: self.resources,
        }
    }
}

/// A snapshot of version 1 or 2, as the current `State`.
pub fn decode(text: &[u8], path: &str) -> Result<State, StateError> {
    let corrupt = |detail: String| StateError::Corrupt {
        path: path.to_owned(),
        detail,
    };
    let head: Head = serde_json::from_slice(text).map_err(|e| corrupt(e.to_string()))?;
    match head.version {
        1 => {
            let state: State = serde_json::from_slice(text).map_err(|e| corrupt(e.to_string()))?;
            Ok(state.upgrade())
        }
        2 => {
            let file: File = serde_json::from_slice(text).map_err(|e| corrupt(e.to_string()))?;
            Ok(file.into_state())
        }
        other => Err(corrupt(format!(
            "format version {other} is newer than this monform knows ({STATE_VERSION}): upgrade monform"
        ))),
    }
}

/// An entry's fingerprints from `hashes` (joined by `write`, one per path
/// of `paths`, all of one width) and its `texts`, each after its path's
/// print: made at once, the joined hashes kept as they were read (the
/// prints are compared while the account's listings arrive: issue 48).
/// `None` when the hashes do not fit the paths.
fn entry_fields(paths: &FieldSet, hashes: String, texts: &BTreeMap<String, String>) -> Option<Fingerprints> {
    let width = hashes.len().checked_div(paths.len())?;
    if width == 0 || width * paths.len() != hashes.len() || !hashes.is_ascii() {
        return None;
    }
    // As `write` writes them; a set edited by hand is sorted by `with_paths`.
    if !paths.windows(2).all(|w| w[0] < w[1]) {
        return Some(with_texts(split_fields(paths, &hashes)?, texts));
    }
    if texts.is_empty() {
        return Some(Fingerprints::of_width(paths.clone(), hashes));
    }
    let mut joined = Vec::with_capacity(hashes.len() + texts.values().map(|t| t.len() + 2).sum::<usize>());
    let mut ends = Vec::with_capacity(paths.len());
    // Both in path order: each text found by walking along.
    let mut texts = texts.iter().peekable();
    for (i, path) in paths.iter().enumerate() {
        let print = &hashes.as_bytes()[i * width..(i + 1) * width];
        joined.extend_from_slice(print);
        while texts.next_if(|(of, _)| of.as_str() < path.as_str()).is_some() {}
        if let Some((_, text)) = texts.next_if(|(of, _)| *of == path)
            // Never after a literal: a text only follows a fingerprint.
            && print.first() != Some(&b'=')
        {
            serde_json::to_writer(&mut joined, text).ok()?;
        }
        ends.push(joined.len());
    }
    let joined = String::from_utf8(joined).ok()?;
    Some(Fingerprints::from_joined(paths.clone(), joined, &ends))
}

/// The fingerprints joined by `encode`, one per path, all of one length.
fn split_fields(paths: &FieldSet, hashes: &str) -> Option<Fingerprints> {
    let width = hashes.len().checked_div(paths.len())?;
    if width == 0 || width * paths.len() != hashes.len() || !hashes.is_ascii() {
        return None;
    }
    // ASCII: every chunk boundary is a character boundary.
    let chunks = (0..paths.len()).filter_map(|i| hashes.get(i * width..(i + 1) * width));
    Fingerprints::with_paths(paths, chunks)
}

/// The prints' compared parts joined, all of one width, and the texts
/// kept after them, by path (`forms::field_print`).
fn split_texts(fields: &Fingerprints) -> (Cow<'_, str>, BTreeMap<String, String>) {
    let mut texts = BTreeMap::new();
    if fields.iter().all(|(_, print)| print.len() <= PRINT_WIDTH) {
        return (Cow::Borrowed(fields.joined()), texts);
    }
    let mut joined = String::with_capacity(fields.paths().len() * PRINT_WIDTH);
    for (path, print) in fields.iter() {
        let (compared, text) = print.split_at(print.len().min(PRINT_WIDTH));
        joined.push_str(compared);
        if let Ok(text) = serde_json::from_str::<String>(text) {
            texts.insert(path.to_owned(), text);
        }
    }
    (Cow::Owned(joined), texts)
}

/// `fields` with each text of `texts` kept after its path's print again.
fn with_texts(fields: Fingerprints, texts: &BTreeMap<String, String>) -> Fingerprints {
    if texts.is_empty() {
        return fields;
    }
    // Only the prints with a text are made anew.
    let prints: Vec<Cow<'_, str>> = fields
        .iter()
        .map(
            |(path, print)| match texts.get(path).and_then(|t| serde_json::to_string(t).ok()) {
                // Never after a literal: a text only follows a fingerprint.
                Some(quoted) if !print.starts_with('=') => Cow::Owned(format!("{print}{quoted}")),
                _ => Cow::Borrowed(print),
            },
        )
        .collect();
    Fingerprints::with_paths(fields.paths(), prints.iter().map(|p| p.as_ref())).unwrap_or_else(|| fields.clone())
}

/// JSON text of a string, a list of names or an entry, which always serialise.
fn json<T: Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::state::test_entry as entry;

    #[test]
    fn a_snapshot_round_trips_and_shares_field_sets() {
        let mut state = State::new("shop");
        state.serial = 9;
        state.target = Some(crate::state::Target {
            api_url: "https://api.example.com".into(),
            account: Some("acme".into()),
        });
        state
            .resources
            .insert("checks.a".into(), entry("1", &["name", "frequency"]));
        state
            .resources
            .insert("checks.b".into(), entry("2", &["name", "frequency"]));
        let mut odd = entry("3", &[]);
        odd.secrets.insert("config.apiKey".into(), "fedcba9876543210".into());
        odd.prevent_destroy = true;
        odd.normal
            .insert("config.url".into(), "0123456789abcdef:fedcba9876543210".into());
        odd.version = None;
        odd.retired = vec!["4".into()];
        state.resources.insert("alertChannels.c \"quoted\"".into(), odd);
        let drift_marks = |name: &str| {
            BTreeMap::from([
                ("frequency".to_string(), "0123456789ab".to_string()),
                ("name".to_string(), format!("{name:0>12}")),
            ])
        };
        for (address, name) in [("checks.a", "a"), ("checks.b", "b")] {
            if let Some(entry) = state.resources.get_mut(address) {
                entry.fields = drift_marks(name).into_iter().collect();
            }
        }
        let bytes = encode(&state);
        let text = String::from_utf8(bytes.clone()).unwrap();
        // Two sets: the managed names, and the drift marks' paths in order.
        assert_eq!(text.matches("\"frequency\"").count(), 2, "{text}");
        assert_eq!(text.lines().count(), 7, "{text}");
        assert!(text.contains("\"fields\":[1,\"0123456789ab00000000000b\"]"), "{text}");
        serde_json::from_slice::<serde_json::Value>(&bytes).expect("valid JSON");
        assert_eq!(decode(&bytes, "s").unwrap(), state);
    }

    /// Plain text kept after its print (issue 45) is written apart, so
    /// that `fields` stays of one width (a monform from before reads it),
    /// and is read back after its print; an older snapshot has none.
    #[test]
    fn texts_are_written_apart_and_read_back_after_their_prints() {
        let mut state = State::new("shop");
        let mut with_text = entry("1", &["frequency", "name"]);
        let number = format!("{:<12}", "=5");
        let name = "0123456789ab\"Login \\\"A\\\"\"";
        with_text.fields = [("frequency", number.as_str()), ("name", name)]
            .into_iter()
            .map(|(p, f)| (p.to_owned(), f.to_owned()))
            .collect();
        state.resources.insert("checks.a".into(), with_text);
        let bytes = encode(&state);
        let text = String::from_utf8(bytes.clone()).unwrap();
        assert!(
            text.contains(&format!("\"fields\":[0,\"{number}0123456789ab\"]"))
                && text.contains(r#""texts":{"name":"Login \"A\""}"#),
            "{text}"
        );
        let read = decode(&bytes, "s").unwrap();
        assert_eq!(read, state);
        assert_eq!(read.resources["checks.a"].fields.get("name"), Some(name));
    }

    /// Entries are made as they are read (issue 48: the entries as written
    /// were held all at once), whatever order the top level's keys come in:
    /// `fieldSets` after `resources` (a file edited by hand), and keys
    /// monform does not know, read as before.
    #[test]
    fn entries_are_read_whatever_the_order_of_the_top_level() {
        let mut state = State::new("shop");
        let mut with_text = entry("1", &["frequency", "name"]);
        with_text.fields = [("frequency", "=5          "), ("name", "0123456789ab\"Login\"")]
            .into_iter()
            .map(|(p, f)| (p.to_owned(), f.to_owned()))
            .collect();
        state.resources.insert("checks.a".into(), with_text);
        state.resources.insert("checks.b".into(), entry("2", &["name"]));
        let written: serde_json::Value = serde_json::from_slice(&encode(&state)).unwrap();
        let mut reordered = serde_json::Map::new();
        reordered.insert("unknown".into(), serde_json::json!({"kept": false}));
        for key in ["resources", "salt", "fieldSets", "project", "serial", "version"] {
            reordered.insert(key.into(), written[key].clone());
        }
        let text = serde_json::to_vec(&serde_json::Value::Object(reordered)).unwrap();
        assert_eq!(decode(&text, "s").unwrap(), state);
        let error = decode(br#"{"version":2,"serial":1,"project":"p","salt":"s"}"#, "state.json")
            .unwrap_err()
            .to_string();
        assert!(error.contains("missing field `resources`"), "{error}");
    }

    /// `read` parses a file as it reads it (issue 48) and gives what
    /// `decode` gives: the same state, another version read whole (a
    /// version 1 file upgraded), the same refusals.
    #[test]
    fn a_file_read_as_parsed_is_the_snapshot_decoded() {
        let mut state = State::new("shop");
        for i in 0..3000 {
            state
                .resources
                .insert(format!("checks.c{i}"), entry(&i.to_string(), &["name"]));
        }
        let read = |text: &[u8]| super::read(&mut std::io::Cursor::new(text), "state.json");
        let bytes = encode(&state);
        // Read a line at a time, as `write` lays it out.
        assert_eq!(read_lines(&bytes[..]).as_ref(), Some(&state));
        assert_eq!(read(&bytes).unwrap(), state);
        state.target = Some(crate::state::Target {
            api_url: "https://api.example.com".into(),
            account: None,
        });
        let mut odd = entry("x", &[]);
        odd.fields = [("name", r#"0123456789ab"a,\n\"}}""#)]
            .into_iter()
            .map(|(p, f)| (p.to_owned(), f.to_owned()))
            .collect();
        state.resources.insert("checks.zz".into(), odd);
        let bytes = encode(&state);
        assert_eq!(read_lines(&bytes[..]).as_ref(), Some(&state));
        let empty = State::new("shop");
        assert_eq!(read_lines(&encode(&empty)[..]), Some(empty));
        // Another layout (edited by hand): read whole, the same state.
        let pretty = serde_json::to_vec_pretty(&serde_json::from_slice::<serde_json::Value>(&bytes).unwrap()).unwrap();
        assert_eq!(read_lines(&pretty[..]), None);
        assert_eq!(read(&pretty).unwrap(), state);
        let version_1 = br#"{"version":1,"serial":4,"project":"p","salt":"s","resources":{
            "checks.a":{"remoteId":"1","applied":"f","managed":["name"],"fields":{"name":"0123456789ab"}}}}"#;
        let upgraded = read(version_1).unwrap();
        assert_eq!((upgraded.version, upgraded.serial), (STATE_VERSION, 4));
        assert_eq!(upgraded, decode(version_1, "state.json").unwrap());
        for bad in [
            &br#"{"version":2,"serial":1,"project":"p","salt":"s","fieldSets":[],
                "resources":{"checks.a":{"remoteId":"1","applied":"f","managed":3}}}"#[..],
            br#"{"version":3}"#,
            br#"{"version":2,"serial":1,"project":"p","salt":"s","resources":{}} trailing"#,
        ] {
            assert_eq!(
                read(bad).unwrap_err().to_string(),
                decode(bad, "state.json").unwrap_err().to_string()
            );
        }
    }

    /// An entry's prints and texts made at once are what splitting the
    /// prints and putting each text after its own makes.
    #[test]
    fn fields_made_at_once_are_the_fields_split_then_texted() {
        let set = |names: &[&str]| -> FieldSet { names.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>().into() };
        let texts = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
            pairs.iter().map(|(p, t)| ((*p).to_owned(), (*t).to_owned())).collect()
        };
        let sorted = set(&["checkType", "frequency", "name", "url"]);
        let cases = [
            (sorted.clone(), texts(&[])),
            (
                sorted.clone(),
                texts(&[("name", "Login \"A\" \\ é"), ("checkType", "API")]),
            ),
            // On a literal, or for no path of the set: not kept.
            (sorted.clone(), texts(&[("frequency", "10"), ("zzz", "x"), ("a", "y")])),
            // Texts of one length: every print as long.
            (set(&["a", "b"]), texts(&[("a", "xy"), ("b", "zw")])),
            // A set edited by hand: out of order, a name twice.
            (set(&["url", "name", "frequency", "checkType"]), texts(&[("name", "n")])),
            (set(&["name", "name", "url", "url"]), texts(&[("name", "n")])),
        ];
        for (paths, texts) in cases {
            let hashes = match paths.len() {
                2 => "0123456789abcdefghijklmn".to_owned(),
                _ => "0123456789ab=10         aaaaaaaaaaaabbbbbbbbbbbb".to_owned(),
            };
            let expected = split_fields(&paths, &hashes).map(|fields| with_texts(fields, &texts));
            assert!(expected.is_some());
            assert_eq!(entry_fields(&paths, hashes, &texts), expected, "{paths:?} {texts:?}");
        }
        for bad in ["", "012", "0123456789ab=10         aaaaaaaaaaaabbbbbbbbbbbé"] {
            assert_eq!(entry_fields(&sorted, bad.to_owned(), &BTreeMap::new()), None, "{bad}");
        }
    }

    /// The map built in runs is the map `collect` makes, in any order, a
    /// later entry of an address winning.
    #[test]
    fn a_map_built_in_runs_is_the_map_collected() {
        let mut entries: Vec<(String, usize)> = (0..5000).map(|i| (format!("k{}", (i * 7919) % 3001), i)).collect();
        entries.push(("k1".into(), 9999));
        let mut built = MapBuilder::default();
        for (key, value) in entries.clone() {
            built.push(key, value);
        }
        let collected: BTreeMap<String, usize> = entries.into_iter().collect();
        assert_eq!(built.finish(), collected);
        assert_eq!(collected["k1"], 9999);
        assert!(MapBuilder::<usize>::default().finish().is_empty());
    }

    #[test]
    fn a_bad_field_set_or_a_newer_version_is_refused() {
        let text = br#"{"version":2,"serial":1,"project":"p","salt":"s","fieldSets":[],
            "resources":{"checks.a":{"remoteId":"1","applied":"f","managed":3}}}"#;
        let error = decode(text, "state.json").unwrap_err().to_string();
        assert!(error.contains("checks.a: field set 3 does not exist"), "{error}");
        let error = decode(br#"{"version":3}"#, "state.json").unwrap_err().to_string();
        assert!(error.contains("format version 3 is newer"), "{error}");
    }
}
