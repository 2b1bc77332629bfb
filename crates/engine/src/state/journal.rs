//! The local journal's records: one line per `Delta`, its JSON, a tab and
//! a checksum of the JSON (the first 8 bytes of its SHA-256, in hex). A
//! record killed mid-write (no newline, or a checksum that does not match)
//! is detected; as the last record it is ignored (its change was never
//! acknowledged as saved), anywhere else the journal is corrupt.

use sha2::{Digest, Sha256};

use super::{Delta, StateError};

fn checksum(json: &[u8]) -> String {
    Sha256::digest(json)
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Appends `delta` as one record.
pub fn encode(delta: &Delta, out: &mut Vec<u8>) {
    // A delta of strings, maps and lists always serialises.
    let json = serde_json::to_vec(delta).unwrap_or_default();
    out.extend_from_slice(&json);
    out.push(b'\t');
    out.extend_from_slice(checksum(&json).as_bytes());
    out.push(b'\n');
}

/// The records of a journal, in order, without a torn last one.
pub fn decode(bytes: &[u8], path: &str) -> Result<Vec<Delta>, StateError> {
    let mut deltas = Vec::new();
    // The first invalid record: an error only if a valid one follows.
    let mut invalid: Option<(usize, String)> = None;
    for (number, line) in bytes.split_inclusive(|b| *b == b'\n').enumerate() {
        match parse(line) {
            Ok(delta) => {
                if let Some((at, why)) = invalid.take() {
                    return Err(StateError::Corrupt {
                        path: path.to_owned(),
                        detail: format!("record {} of the journal: {why}", at + 1),
                    });
                }
                deltas.push(delta);
            }
            Err(why) => {
                invalid.get_or_insert((number, why));
            }
        }
    }
    Ok(deltas)
}

/// How many leading bytes of a journal are whole, valid records: what is
/// kept when an apply appends to a journal a crash may have cut short.
pub fn valid_len(bytes: &[u8]) -> usize {
    bytes
        .split_inclusive(|b| *b == b'\n')
        .take_while(|line| parse(line).is_ok())
        .map(<[u8]>::len)
        .sum()
}

fn parse(line: &[u8]) -> Result<Delta, String> {
    let Some(line) = line.strip_suffix(b"\n") else {
        return Err("cut short".into());
    };
    let tab = line
        .iter()
        .rposition(|b| *b == b'\t')
        .ok_or_else(|| "no checksum".to_owned())?;
    let (json, sum) = (&line[..tab], &line[tab + 1..]);
    if sum != checksum(json).as_bytes() {
        return Err("checksum mismatch".into());
    }
    serde_json::from_slice(json).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::ResourceState;
    use std::collections::BTreeMap;

    fn delta(serial: u64) -> Delta {
        Delta {
            target: None,
            serial,
            remove: vec![format!("checks.gone-{serial}")],
            set: BTreeMap::from([(
                format!("checks.c{serial}"),
                ResourceState {
                    remote_id: format!("id-{serial}"),
                    version: Some("v\t1\n".into()),
                    applied: "0123456789abcdef".into(),
                    secrets: BTreeMap::new(),
                    prevent_destroy: false,
                    managed: vec!["name".into()].into(),
                    fields: [("name".into(), "0123456789ab".into())].into_iter().collect(),
                    normal: [("request.url".into(), "0123:4567".into())].into(),
                    retired: Vec::new(),
                },
            )]),
        }
    }

    #[test]
    fn records_round_trip_and_a_torn_last_one_is_ignored() {
        let mut bytes = Vec::new();
        for serial in 1..=3 {
            encode(&delta(serial), &mut bytes);
        }
        assert_eq!(decode(&bytes, "j").unwrap(), [delta(1), delta(2), delta(3)]);
        // Killed at every byte of the last record: the first two survive.
        let second_end = bytes.iter().enumerate().filter(|(_, b)| **b == b'\n').nth(1).unwrap().0 + 1;
        for cut in second_end..bytes.len() {
            assert_eq!(
                decode(&bytes[..cut], "j").unwrap(),
                [delta(1), delta(2)],
                "cut at {cut}"
            );
        }
        // A complete last line whose bytes were never written (zeros).
        let mut zeroed = bytes[..second_end].to_vec();
        zeroed.extend(std::iter::repeat_n(0u8, 40));
        zeroed.push(b'\n');
        assert_eq!(decode(&zeroed, "j").unwrap(), [delta(1), delta(2)]);
    }

    #[test]
    fn a_damaged_record_before_a_good_one_is_an_error() {
        let mut bytes = Vec::new();
        for serial in 1..=3 {
            encode(&delta(serial), &mut bytes);
        }
        let at = bytes.iter().position(|b| *b == b'1').unwrap();
        bytes[at] = b'7';
        let error = decode(&bytes, "state.journal").unwrap_err().to_string();
        assert!(
            error.contains("state.journal") && error.contains("record 1 of the journal: checksum mismatch"),
            "{error}"
        );
    }
}
