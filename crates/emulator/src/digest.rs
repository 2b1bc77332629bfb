//! SHA-256 digests of keys: account API keys (`store`) and private location
//! keys (`domain::agents::keys`) are stored only as digests, so a copy of
//! the database gives nobody a key. A key is a random 128-bit value, so an
//! unsalted fast hash is enough: there is no dictionary to try.

use sha2::{Digest, Sha256};

/// The lowercase hex SHA-256 of `raw`.
pub fn sha256_hex(raw: &str) -> String {
    Sha256::digest(raw.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_known_digest() {
        assert_eq!(
            super::sha256_hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
