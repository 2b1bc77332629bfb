//! A state entry's per-field fingerprints, kept compact.
//!
//! As a map of its own per entry (a string per path and per fingerprint),
//! 100,000 entries took a third of a no-op plan's memory (issue 18). Here
//! the sorted paths are shared by the entries that have the same ones (a
//! snapshot's entries of one kind mostly do: `encode` writes each set once)
//! and the fingerprints of an entry are one string.

use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::forms::PRINT_WIDTH;

/// Field names or paths, shared between entries.
pub type FieldSet = Arc<[String]>;

/// The field sets an apply has recorded, so that entries with the same
/// names share one (a cold apply of 100,000 checks otherwise kept a copy
/// of its names and paths per entry: about 120 MB).
#[derive(Default)]
pub struct FieldSets(HashSet<FieldSet>);

impl FieldSets {
    /// The set held equal to `names`, or `names` as a new one.
    pub fn share(&mut self, names: Vec<String>) -> FieldSet {
        if let Some(held) = self.0.get(names.as_slice()) {
            return held.clone();
        }
        let set: FieldSet = names.into();
        self.0.insert(set.clone());
        set
    }
}

#[derive(Clone, Default, PartialEq, Eq)]
pub struct Fingerprints {
    /// Sorted, without repeats.
    paths: FieldSet,
    joined: Box<str>,
    ends: Ends,
}

/// Where each path's fingerprint ends in `joined`.
#[derive(Clone, Default, PartialEq, Eq)]
enum Ends {
    /// Every fingerprint this long (as a state writes them): no list, which
    /// was 8 MB of 100,000 entries.
    #[default]
    Width,
    /// Every print [`PRINT_WIDTH`] long, some followed by the text applied
    /// as a JSON string (`forms::field_print`): found by reading, which a
    /// plan only does for a field that changed. As a list of ends, the
    /// entries with text (nearly all) held 8 MB more at 100,000 checks.
    Texts,
    Listed(Box<[u32]>),
}

/// Where the print that starts at `start` of `joined` ends, in the
/// [`Ends::Texts`] layout: its first [`PRINT_WIDTH`] bytes, then its text's
/// JSON string if one follows (no compared part starts with a quote);
/// past the end for a string not closed.
fn text_end(joined: &str, start: usize) -> usize {
    let bytes = joined.as_bytes();
    let mut end = (start + PRINT_WIDTH).min(bytes.len());
    if bytes.get(end) != Some(&b'"') {
        return end;
    }
    end += 1;
    while let Some(&byte) = bytes.get(end) {
        end += match byte {
            b'\\' => 2,
            b'"' => return end + 1,
            _ => 1,
        };
    }
    bytes.len() + 1
}

/// `joined[start..end]`, empty where that is not a part of it.
fn joined_part(joined: &str, start: usize, end: usize) -> &str {
    joined.get(start..end).unwrap_or_default()
}

/// Whether `print` is one of the [`Ends::Texts`] layout: read alone, it
/// ends where it does.
fn fits_texts(print: &str) -> bool {
    print.len() >= PRINT_WIDTH
        && print.is_char_boundary(PRINT_WIDTH)
        && !print.starts_with('"')
        && text_end(print, 0) == print.len()
}

impl Fingerprints {
    /// Its paths shared with the entries of `sets` that have the same.
    pub fn share_paths(&mut self, sets: &mut FieldSets) {
        self.paths = sets.share(self.paths.to_vec());
    }

    /// One fingerprint per path of `paths`, in order; `None` when the
    /// counts differ. Sorted paths are shared as they are.
    pub fn with_paths<'a>(paths: &FieldSet, prints: impl IntoIterator<Item = &'a str>) -> Option<Fingerprints> {
        let prints: Vec<&str> = prints.into_iter().collect();
        if prints.len() != paths.len() {
            return None;
        }
        if paths.windows(2).all(|w| w[0] < w[1]) {
            Some(Fingerprints::build(paths.clone(), &prints))
        } else {
            Some(
                paths
                    .iter()
                    .cloned()
                    .zip(prints.into_iter().map(str::to_owned))
                    .collect(),
            )
        }
    }

    fn build(paths: FieldSet, prints: &[&str]) -> Fingerprints {
        let joined: String = prints.concat();
        let mut end = 0;
        let ends: Vec<usize> = prints
            .iter()
            .map(|p| {
                end += p.len();
                end
            })
            .collect();
        Fingerprints::from_joined(paths, joined, &ends)
    }

    /// `paths` (sorted, without repeats) and their prints joined in that
    /// order, each ending where `ends` says: what [`Fingerprints::build`]
    /// makes of the prints, made without them (a state's reader joins its
    /// prints and texts as it goes).
    pub(super) fn from_joined(paths: FieldSet, joined: String, ends: &[usize]) -> Fingerprints {
        let starts = std::iter::once(&0).chain(ends);
        let mut lengths = starts.clone().zip(ends).map(|(start, end)| end.saturating_sub(*start));
        let width = ends.first().copied().unwrap_or(0);
        let ends = if lengths.all(|len| len == width) {
            Ends::Width
        } else if starts
            .zip(ends)
            .all(|(&start, &end)| fits_texts(joined_part(&joined, start, end)))
        {
            Ends::Texts
        } else {
            Ends::Listed(ends.iter().map(|&end| u32::try_from(end).unwrap_or(u32::MAX)).collect())
        };
        Fingerprints {
            paths,
            joined: joined.into_boxed_str(),
            ends,
        }
    }

    /// Prints all `width` long, joined (`joined.len()` a multiple of it),
    /// for `paths` (sorted, without repeats).
    pub(super) fn of_width(paths: FieldSet, joined: String) -> Fingerprints {
        Fingerprints {
            paths,
            joined: joined.into_boxed_str(),
            ends: Ends::Width,
        }
    }

    pub fn paths(&self) -> &FieldSet {
        &self.paths
    }

    pub fn is_empty(&self) -> bool {
        self.paths.is_empty()
    }

    pub fn get(&self, path: &str) -> Option<&str> {
        let i = self.paths.binary_search_by(|p| p.as_str().cmp(path)).ok()?;
        Some(self.print(i))
    }

    fn print(&self, i: usize) -> &str {
        let (start, end) = match &self.ends {
            Ends::Width => {
                let width = self.joined.len() / self.paths.len().max(1);
                (i * width, (i + 1) * width)
            }
            Ends::Texts => {
                let start = (0..i).fold(0, |start, _| text_end(&self.joined, start));
                (start, text_end(&self.joined, start))
            }
            Ends::Listed(ends) => {
                let start = if i == 0 { 0 } else { ends[i - 1] as usize };
                (start, ends[i] as usize)
            }
        };
        self.joined.get(start..end).unwrap_or_default()
    }

    /// (path, fingerprint) in path order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        let mut start = 0;
        self.paths.iter().enumerate().map(move |(i, p)| {
            let print = match self.ends {
                // Read on from the last one's end, not from the start.
                Ends::Texts => {
                    let end = text_end(&self.joined, start);
                    let print = self.joined.get(start..end).unwrap_or_default();
                    start = end;
                    print
                }
                _ => self.print(i),
            };
            (p.as_str(), print)
        })
    }

    /// The fingerprints joined in path order, as a snapshot writes them.
    pub fn joined(&self) -> &str {
        &self.joined
    }
}

impl FromIterator<(String, String)> for Fingerprints {
    fn from_iter<I: IntoIterator<Item = (String, String)>>(pairs: I) -> Fingerprints {
        let sorted: BTreeMap<String, String> = pairs.into_iter().collect();
        let prints: Vec<&str> = sorted.values().map(String::as_str).collect();
        let paths: FieldSet = sorted.keys().cloned().collect();
        Fingerprints::build(paths, &prints)
    }
}

impl fmt::Debug for Fingerprints {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl Serialize for Fingerprints {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.iter())
    }
}

impl<'de> Deserialize<'de> for Fingerprints {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Fingerprints, D::Error> {
        Ok(BTreeMap::<String, String>::deserialize(deserializer)?
            .into_iter()
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_field_sets_are_held_once() {
        let names = |list: &[&str]| list.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>();
        let mut sets = FieldSets::default();
        let first = sets.share(names(&["frequency", "name"]));
        let again = sets.share(names(&["frequency", "name"]));
        let other = sets.share(names(&["name"]));
        assert!(Arc::ptr_eq(&first, &again));
        assert!(!Arc::ptr_eq(&first, &other));
        let mut prints: Fingerprints = [("frequency", "aa"), ("name", "bb")]
            .into_iter()
            .map(|(p, f)| (p.to_owned(), f.to_owned()))
            .collect();
        prints.share_paths(&mut sets);
        assert!(Arc::ptr_eq(&prints.paths, &first));
        assert_eq!(prints.get("name"), Some("bb"), "the fingerprints are unchanged");
    }

    #[test]
    fn reads_back_what_it_holds_and_shares_sorted_paths() {
        let prints: Fingerprints = [("name", "aaa"), ("frequency", "b"), ("tags[0]", "cccc")]
            .into_iter()
            .map(|(p, f)| (p.to_owned(), f.to_owned()))
            .collect();
        assert_eq!(prints.get("name"), Some("aaa"));
        assert_eq!(prints.get("frequency"), Some("b"));
        assert_eq!(prints.get("tags"), None);
        let listed: Vec<(&str, &str)> = prints.iter().collect();
        assert_eq!(listed, [("frequency", "b"), ("name", "aaa"), ("tags[0]", "cccc")]);
        let json = serde_json::to_string(&prints).unwrap();
        assert_eq!(serde_json::from_str::<Fingerprints>(&json).unwrap(), prints);

        let again = Fingerprints::with_paths(prints.paths(), ["x", "y", "z"]).unwrap();
        assert!(Arc::ptr_eq(again.paths(), prints.paths()));
        assert_eq!(again.get("tags[0]"), Some("z"));
        assert_eq!(Fingerprints::with_paths(prints.paths(), ["x"]), None);

        let unsorted: FieldSet = vec!["b".to_owned(), "a".to_owned()].into();
        let fixed = Fingerprints::with_paths(&unsorted, ["2", "1"]).unwrap();
        assert_eq!(fixed.iter().collect::<Vec<_>>(), [("a", "1"), ("b", "2")]);

        let even = Fingerprints::with_paths(prints.paths(), ["ab", "cd", "ef"]).unwrap();
        assert!(matches!(even.ends, Ends::Width));
        assert_eq!(
            even.iter().collect::<Vec<_>>(),
            [("frequency", "ab"), ("name", "cd"), ("tags[0]", "ef")]
        );
        assert!(matches!(prints.ends, Ends::Listed(_)));
    }

    /// Prints of the width a state compares, some with their text after
    /// them (issue 45), are found by reading, without a list of ends.
    #[test]
    fn prints_with_texts_are_found_without_a_list() {
        let with = [
            ("checkType", r#"0123456789ab"API""#),
            ("frequency", "=10         "),
            ("name", r#"aaaaaaaaaaaa"Login \"A\" \\ é""#),
            ("tags", "bbbbbbbbbbbb"),
            ("url", r#"cccccccccccc"https://x""#),
        ];
        let prints: Fingerprints = with.iter().map(|(p, f)| ((*p).to_owned(), (*f).to_owned())).collect();
        assert!(matches!(prints.ends, Ends::Texts));
        assert_eq!(prints.iter().collect::<Vec<_>>(), with);
        for (path, print) in with {
            assert_eq!(prints.get(path), Some(print));
        }
        // A print of another form: a list of ends, as before.
        for odd in [
            "short",
            r#""quoted at first""#,
            r#"0123456789ab"unclosed"#,
            r#"0123456789ab"a"b"#,
        ] {
            let prints: Fingerprints = [("a", "0123456789ab"), ("b", odd)]
                .into_iter()
                .map(|(p, f)| (p.to_owned(), f.to_owned()))
                .collect();
            assert!(matches!(prints.ends, Ends::Listed(_)), "{odd}");
            assert_eq!(prints.get("b"), Some(odd));
        }
    }
}
