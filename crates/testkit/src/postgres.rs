//! The test database of the PostgreSQL state tests.

/// `MONFORM_TEST_POSTGRES_URL`, or `None` (saying why on stderr) when it
/// is not set: the test then returns early. With
/// `MONFORM_REQUIRE_POSTGRES=1` (as `.ci/run` sets after starting
/// PostgreSQL) a missing URL panics instead, so the PostgreSQL tests cannot
/// pass by not running.
pub fn postgres_url() -> Option<String> {
    url_from(
        std::env::var("MONFORM_TEST_POSTGRES_URL").ok(),
        std::env::var("MONFORM_REQUIRE_POSTGRES").ok(),
    )
}

fn url_from(url: Option<String>, require: Option<String>) -> Option<String> {
    let url = url.filter(|u| !u.is_empty());
    if url.is_none() {
        let required = require.is_some_and(|r| !r.is_empty() && r != "0");
        assert!(
            !required,
            "MONFORM_REQUIRE_POSTGRES is set but MONFORM_TEST_POSTGRES_URL is not: this test needs PostgreSQL (see .ci/run)"
        );
        crate::skipped(
            "no PostgreSQL: MONFORM_TEST_POSTGRES_URL is not set (see .ci/run; MONFORM_REQUIRE_POSTGRES=1 fails instead)",
        );
    }
    url
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_database_skips_unless_it_is_required() {
        let url = Some("postgres://u:p@127.0.0.1/db".to_owned());
        assert_eq!(url_from(url.clone(), Some("1".into())), url);
        assert_eq!(url_from(None, None), None);
        assert_eq!(url_from(Some(String::new()), Some("0".into())), None);
        let required = std::panic::catch_unwind(|| url_from(None, Some("1".into())));
        assert!(required.is_err(), "a required database that is missing fails the test");
    }
}
