//! Did-you-mean: the closest known name to a misspelt one. Shared by the
//! validator, `lifecycle` and the loader; and the validator's "a, b or c"
//! (below both the compiled schema and the shape check, which use it).

/// The closest candidate, if close enough to be a likely typo.
pub fn suggest<'a>(given: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let given_lower = given.to_lowercase();
    candidates
        .map(|c| (strsim::jaro_winkler(&given_lower, &c.to_lowercase()), c))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

/// `a, b or c`: the alternatives a value may be.
pub(crate) fn join_or(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}
