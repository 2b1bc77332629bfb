//! One pass over a stored body's text that says whether parsing it into a
//! `Value` and writing that again gives back the very same bytes, and
//! where each of its top-level fields' values is: the check a list page
//! makes before splicing fields into the text (`stored.rs`). It replaces
//! a byte scan followed by a serde walk over every value (two passes, a
//! visitor call per value: most of a check page's cost).
//!
//! It accepts only text that is valid JSON (what `serde_json` parses) and
//! written as `serde_json`'s compact writer writes what it parsed: no
//! whitespace between tokens; only the escapes it makes; numbers it writes
//! back digit for digit; no key twice in any object (a `Value` keeps one);
//! nesting well within `serde_json`'s limit. Anything else is refused, and
//! refusing is always safe: the caller then takes the slow way.

use std::ops::Range;

use serde_json::Value;

/// Deeper than this is refused (`serde_json` refuses from 128).
const MAX_DEPTH: usize = 100;

/// Scans `text`, a JSON object, handing each top-level key (as written,
/// without its quotes) and its value's span to `field`, which may refuse
/// the text (`None`). `None` when the round trip could change the text.
pub fn object(text: &str, mut field: impl FnMut(&str, Range<usize>) -> Option<()>) -> Option<()> {
    let mut scanner = Scanner {
        text,
        bytes: text.as_bytes(),
        at: 0,
        keys: Vec::new(),
    };
    if scanner.bytes.first() != Some(&b'{') {
        return None;
    }
    scanner.object(1, &mut field)?;
    (scanner.at == scanner.bytes.len()).then_some(())
}

struct Scanner<'t> {
    text: &'t str,
    bytes: &'t [u8],
    at: usize,
    /// The keys of the objects being read, outermost first (spans).
    keys: Vec<Range<usize>>,
}

impl Scanner<'_> {
    fn value(&mut self, depth: usize) -> Option<()> {
        match *self.bytes.get(self.at)? {
            b'{' => self.object(depth + 1, &mut |_, _| Some(())),
            b'[' => self.array(depth + 1),
            b'"' => self.string().map(|_| ()),
            b'-' | b'0'..=b'9' => self.number(),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            _ => None,
        }
    }

    /// An object at `at` (its `{`), each field handed to `field`.
    fn object(&mut self, depth: usize, field: &mut impl FnMut(&str, Range<usize>) -> Option<()>) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.at += 1;
        if self.bytes.get(self.at) == Some(&b'}') {
            self.at += 1;
            return Some(());
        }
        let first_key = self.keys.len();
        // A bit per key's length and ends: a key is compared with the
        // others only when its bit was already set.
        let mut seen: u64 = 0;
        loop {
            if self.bytes.get(self.at) != Some(&b'"') {
                return None;
            }
            let key = self.string()?;
            let bytes = self.bytes;
            let name = &bytes[key.clone()];
            let bit = 1u64 << (key_hash(name) % 64);
            if seen & bit != 0
                && self.keys[first_key..]
                    .iter()
                    .any(|other| other.len() == name.len() && &bytes[other.clone()] == name)
            {
                return None;
            }
            seen |= bit;
            self.keys.push(key.clone());
            if self.bytes.get(self.at) != Some(&b':') {
                return None;
            }
            self.at += 1;
            let start = self.at;
            self.value(depth)?;
            field(&self.text[key], start..self.at)?;
            match self.bytes.get(self.at) {
                Some(b',') => self.at += 1,
                Some(b'}') => {
                    self.at += 1;
                    self.keys.truncate(first_key);
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    fn array(&mut self, depth: usize) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.at += 1;
        if self.bytes.get(self.at) == Some(&b']') {
            self.at += 1;
            return Some(());
        }
        loop {
            self.value(depth)?;
            match self.bytes.get(self.at) {
                Some(b',') => self.at += 1,
                Some(b']') => {
                    self.at += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// A string at `at` (its opening quote), to after its closing quote;
    /// the span inside the quotes. Only the escapes `serde_json` writes:
    /// `\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, and `\u00XX` in lower
    /// case for the other control characters; no raw control character.
    fn string(&mut self) -> Option<Range<usize>> {
        self.at += 1;
        let start = self.at;
        loop {
            let rest = self.bytes.get(self.at..)?;
            let found = stop(rest)?;
            if rest[found] < 0x20 {
                return None;
            }
            self.at += found;
            if self.bytes[self.at] == b'"' {
                self.at += 1;
                return Some(start..self.at - 1);
            }
            self.at += 1 + escape(&self.bytes[self.at + 1..])?;
        }
    }

    /// A number at `at`, kept only when `serde_json` writes back its digits.
    fn number(&mut self) -> Option<()> {
        let rest = &self.bytes[self.at..];
        let length = rest
            .iter()
            .position(|b| !matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
            .unwrap_or(rest.len());
        let token = &self.text[self.at..self.at + length];
        self.at += length;
        writes_back(token).then_some(())
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        if !self.bytes[self.at..].starts_with(word) {
            return None;
        }
        self.at += word.len();
        Some(())
    }
}

/// Where in `rest` (a string's bytes) its stretch ends: the first quote,
/// backslash or control character (JSON forbids those raw). Eight bytes at
/// a time: a flag is set in the high bit of each byte that is one of them,
/// exact for the first such byte (a borrow only carries upwards), which
/// is the one taken.
fn stop(rest: &[u8]) -> Option<usize> {
    const ONES: u64 = u64::from_le_bytes([0x01; 8]);
    const HIGH: u64 = u64::from_le_bytes([0x80; 8]);
    let mut at = 0;
    while let Some(chunk) = rest.get(at..at + 8) {
        let mut word = [0; 8];
        word.copy_from_slice(chunk);
        let x = u64::from_le_bytes(word);
        let zero = |y: u64| y.wrapping_sub(ONES) & !y & HIGH;
        let flags = zero(x ^ (ONES * u64::from(b'"')))
            | zero(x ^ (ONES * u64::from(b'\\')))
            | (x.wrapping_sub(ONES * 0x20) & !x & HIGH);
        if flags != 0 {
            return Some(at + flags.trailing_zeros() as usize / 8);
        }
        at += 8;
    }
    rest[at..]
        .iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
        .map(|found| at + found)
}

/// Which of 64 bits stands for a key (its length and its ends).
fn key_hash(name: &[u8]) -> usize {
    let ends = name.first().map_or(0, |&b| usize::from(b)) + 7 * name.last().map_or(0, |&b| usize::from(b));
    name.len() * 31 + ends
}

/// How long the escape after a backslash (`rest`) is, when it is one
/// `serde_json` writes.
fn escape(rest: &[u8]) -> Option<usize> {
    match rest.first()? {
        b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't' => Some(1),
        b'u' => {
            let [b'0', b'0', high @ (b'0' | b'1'), low] = rest.get(1..5)? else {
                return None;
            };
            let low = match low {
                b'0'..=b'9' => low - b'0',
                b'a'..=b'f' => low - b'a' + 10,
                _ => return None,
            };
            // Those with a short escape are written short.
            let code = (high - b'0') * 16 + low;
            (!matches!(code, 8 | 9 | 10 | 12 | 13)).then_some(5)
        }
        _ => None,
    }
}

/// Whether `token` is a JSON number `serde_json` writes back as `token`:
/// at once for an integer of up to 18 digits without a leading zero (it
/// fits 64 bits, and integers are written in full); else by reading and
/// writing it (a float's digits, `-0`, a longer integer), which also
/// refuses what is not a number.
pub fn writes_back(token: &str) -> bool {
    let digits = token.strip_prefix('-').unwrap_or(token);
    let plain = (1..=18).contains(&digits.len())
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (!digits.starts_with('0') || token == "0");
    plain
        || serde_json::from_str::<Value>(token)
            .and_then(|value| serde_json::to_string(&value))
            .is_ok_and(|written| written == token)
}

#[cfg(test)]
mod tests;
