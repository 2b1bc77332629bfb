//! Remote ids out of output: the emulator hands them out in the order
//! requests arrive, and concurrent creates arrive in any order.

use std::sync::LazyLock;

use regex::Regex;

static PATTERNS: LazyLock<[(Regex, &str); 4]> = LazyLock::new(|| {
    let pattern = |p: &str| Regex::new(p).expect("valid pattern");
    [
        (
            pattern(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"),
            "[uuid]",
        ),
        (pattern(r", id [0-9]+\)"), ", id [n])"),
        (pattern(r"\(remote id [0-9]+\)"), "(remote id [n])"),
        (pattern(r#""remoteId": "[0-9]+""#), "\"remoteId\": \"[n]\""),
    ]
});

/// `text` with UUIDs and the remote ids monform prints (`, id 12)`,
/// `(remote id 12)`, `"remoteId": "12"`) replaced by placeholders.
pub fn redact_ids(text: &str) -> String {
    PATTERNS.iter().fold(text.to_owned(), |text, (pattern, with)| {
        pattern.replace_all(&text, *with).into_owned()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_of_id_is_replaced_and_nothing_else() {
        let text = "checks.a (api, id 12)\n+ groups.g (remote id 7)\n\"remoteId\": \"42\"\n\
                    run 3f2b8c1e-0a4d-4e5f-9a8b-7c6d5e4f3a2b: 3 checks, id 4 left";
        assert_eq!(
            redact_ids(text),
            "checks.a (api, id [n])\n+ groups.g (remote id [n])\n\"remoteId\": \"[n]\"\n\
             run [uuid]: 3 checks, id 4 left"
        );
    }
}
