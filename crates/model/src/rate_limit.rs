//! `N/SECS` (e.g. `600/60`): how a rate limit is written, for the client's
//! `MONFORM_RATE_LIMIT` / `--rate-limit` and the emulator's `--rate-limit`
//! alike, so both read it, and word a mistake, the same way.

use std::time::Duration;

/// The requests and the window of `N/SECS`, both above 0; `Err`: why not.
pub fn parse(text: &str) -> Result<(u32, Duration), String> {
    let (requests, seconds) = text
        .split_once('/')
        .ok_or_else(|| format!("`{text}` is not N/SECS, e.g. 600/60"))?;
    let requests: u32 = requests
        .trim()
        .parse()
        .map_err(|_| format!("`{requests}` is not a number of requests"))?;
    let seconds: u64 = seconds
        .trim()
        .parse()
        .map_err(|_| format!("`{seconds}` is not a number of seconds"))?;
    if requests == 0 || seconds == 0 {
        return Err("both numbers of N/SECS must be above 0".to_owned());
    }
    Ok((requests, Duration::from_secs(seconds)))
}
