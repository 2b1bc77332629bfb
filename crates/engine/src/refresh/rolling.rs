//! A rolling refresh (`Refresh::Rolling`, issue 48): `monform reconcile`
//! reads the account within a share of the API key's budget, so a plan
//! reads only as many requests as its interval's share holds ([`Sweep`]'s
//! `budget`), and a sweep of the whole account spreads over several plans.
//!
//! Each plan reads, in this order: what the files changed since the last
//! apply (one GET each, as `--refresh=changed`), the sweep's `priority`
//! (objects that drifted lately: their drift is followed every plan, so
//! its end is seen at once), the project's ownership record, then the next
//! pages of the listings (kind by kind, 100 objects a page) from where the
//! last plan stopped, while the budget lasts. The rest is trusted as
//! applied. When the last page of the last kind is read, every object of
//! the state that no page of this sweep showed is read by id (it was
//! deleted, or moved between pages as others were deleted), so each
//! object is read at least once per sweep; then the next sweep starts.
//! When the whole account fits in one plan's budget at a sweep's start,
//! it is listed at once, as `Refresh::All` does (clashes and adoption
//! included).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::{Duration, Instant};

use monform_api::{Client, Error, Share};
use monform_config::Desired;
use monform_model::{Address, Kind};

use super::{ById, Selection, read_by_id, select};
use crate::actual::Actual;
use crate::fetch::{Recorded, claim};
use crate::refresh::Refresh;
use crate::state::State;

/// Objects a listing page holds.
const PAGE: usize = 100;

/// Where a rolling refresh stands: kept by its caller from one plan to the
/// next (a reconciler's lifetime), set on the plan's session
/// (`ops::Session::sweep`).
#[derive(Debug, Default)]
pub struct Sweep {
    /// Requests the next plan's read may send (see [`Sweep::budget_for`]).
    pub budget: u64,
    /// Addresses read by id every plan, before any page (drift lately seen).
    pub priority: Vec<Address>,
    /// The kind being listed (index into `Kind::ALL`) and its next page.
    kind: usize,
    page: usize,
    /// (kind, remote id) of every object listed in this sweep.
    seen: HashSet<(Kind, String)>,
    /// Pages of each kind when last listed: what a whole read costs.
    pages: HashMap<Kind, usize>,
    started: Option<Instant>,
    /// Sweeps completed.
    pub completed: u64,
    /// What the last plan read.
    pub last: Option<SweepRead>,
}

/// What one plan of a rolling refresh read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SweepRead {
    /// Requests sent to read (retries included).
    pub requests: u64,
    /// Listing pages read, and objects read by id.
    pub pages: usize,
    pub by_id: usize,
    /// The whole account was listed in this plan (it fitted the budget).
    pub whole: bool,
    /// The sweep ended with this plan, after this long.
    pub swept_in: Option<Duration>,
    /// How much of the sweep's listing is read, 0 to 1.
    pub progress: f64,
    /// Requests a whole read takes, as the listings were last seen.
    pub whole_read: u64,
}

impl Sweep {
    /// A plan that reads only `addresses` by id, with what the files
    /// changed, and no page: an apply of those targets.
    pub fn only(addresses: Vec<Address>) -> Sweep {
        Sweep {
            priority: addresses,
            ..Sweep::default()
        }
    }

    /// The requests a plan may send when the next plan starts `interval`
    /// after this one at `share` of the key's budget (`limit` per
    /// `window`, the server's as last stated): the requests of the share
    /// in an interval, at least one.
    pub fn budget_for(share: Share, limit: u32, window: Duration, interval: Duration) -> u64 {
        share.requests_in(limit, window, interval).max(1)
    }

    /// Requests a whole read of the account takes: every kind's pages as
    /// last listed (until then, from the state's count), and the project's
    /// ownership record.
    pub fn whole_read(&self, state: &State) -> u64 {
        let mut in_state: HashMap<&str, usize> = HashMap::new();
        for key in state.resources.keys() {
            if let Some((section, _)) = key.split_once('.') {
                *in_state.entry(section).or_default() += 1;
            }
        }
        let pages: usize = Kind::ALL
            .iter()
            .map(|kind| {
                self.pages
                    .get(kind)
                    .copied()
                    .unwrap_or_else(|| in_state.get(kind.section()).copied().unwrap_or(0).div_ceil(PAGE).max(1))
            })
            .sum();
        pages as u64 + 1
    }

    fn at_start(&self) -> bool {
        self.kind == 0 && self.page <= 1 && self.seen.is_empty()
    }

    /// How much of the listing this sweep has read: pages of the kinds
    /// done and of the current kind, over all pages as last seen.
    fn progress(&self) -> f64 {
        let pages = |kind: &Kind| self.pages.get(kind).copied().unwrap_or(1).max(1);
        let total: usize = Kind::ALL.iter().map(pages).sum();
        let done: usize = Kind::ALL.iter().take(self.kind).map(pages).sum::<usize>() + self.page.saturating_sub(1);
        (done as f64 / total.max(1) as f64).min(1.0)
    }

    fn finish(&mut self, read: &mut SweepRead, now: Instant) {
        read.swept_in = Some(now.saturating_duration_since(self.started.unwrap_or(now)));
        read.progress = 1.0;
        self.kind = 0;
        self.page = 1;
        self.seen.clear();
        self.started = None;
        self.completed += 1;
    }
}

/// The actual state from one plan of a rolling refresh (see the module's
/// header); `sweep` moves on.
pub async fn fetch_rolling(
    client: &Client,
    project: &str,
    desired: &Desired,
    state: &State,
    sweep: &mut Sweep,
) -> Result<Actual, Error> {
    let started = Instant::now();
    let sent_before = client.requests_sent();
    let sent = || client.requests_sent().saturating_sub(sent_before);
    let Selection {
        mut read,
        trusted,
        retired,
    } = select(desired, state, Refresh::Changed);
    let mut read_report = SweepRead {
        whole_read: sweep.whole_read(state),
        ..SweepRead::default()
    };
    if sweep.at_start() && sweep.budget >= read_report.whole_read {
        // It all fits: listed at once, as `--refresh=all` does.
        let actual = crate::fetch::fetch(client, project, desired, state).await?;
        for kind in Kind::ALL {
            sweep.pages.insert(*kind, actual.count(*kind).div_ceil(PAGE).max(1));
        }
        sweep.started = Some(started);
        sweep.finish(&mut read_report, Instant::now());
        read_report.whole = true;
        read_report.requests = sent();
        read_report.pages = read_report.requests as usize;
        read_report.whole_read = sweep.whole_read(state);
        sweep.last = Some(read_report);
        return Ok(actual);
    }
    let mut trusted = trusted;
    // Drift lately seen is followed every plan (the caller bounds it).
    for address in &sweep.priority {
        if let Some(entry) = trusted.remove(address) {
            read.push((address.clone(), entry.remote_id));
        }
    }
    read_report.by_id = read.len() + retired.len() + 1;
    let mut actual = Actual::default();
    read_by_id(client, project, desired, ById { read, retired }, &mut actual, true).await?;
    if sweep.started.is_none() {
        sweep.started = Some(started);
    }
    if sweep.page == 0 {
        sweep.page = 1;
    }
    // The next pages, while the budget lasts.
    let recorded = Recorded::new(state);
    let moves = crate::declared::Moves::new(desired);
    let mut listed: BTreeMap<Address, monform_api::Remote> = BTreeMap::new();
    // At least a page a plan, whatever the reads by id took: a sweep
    // always moves on.
    while sweep.kind < Kind::ALL.len() && (read_report.pages == 0 || sent() < sweep.budget) {
        let kind = Kind::ALL[sweep.kind];
        let (objects, last) = match client.list_page(kind, sweep.page).await? {
            Some((objects, total)) => {
                let pages = match total {
                    Some(total) => total.div_ceil(PAGE).max(1),
                    None if objects.len() < PAGE => sweep.page,
                    None => sweep.page + 1,
                };
                sweep.pages.insert(kind, pages);
                (objects, sweep.page >= pages)
            }
            // Listed by cursor (status pages and their services, few): whole.
            None => {
                let objects = client.list_all(kind).await?;
                sweep.pages.insert(kind, objects.len().div_ceil(PAGE).max(1));
                (objects, true)
            }
        };
        read_report.pages += 1;
        for remote in objects {
            sweep.seen.insert((kind, remote.id.clone()));
            // A replaced object not yet deleted is not the address's: read
            // by id above (`Selection::retired`), a duplicate to delete.
            if let Some((address, by)) = claim(kind, &remote, project, desired, &recorded, &moves)
                && by != crate::fetch::Claim::Retired
                && trusted.contains_key(&address)
            {
                listed.insert(address, remote);
            }
        }
        if last {
            sweep.kind += 1;
            sweep.page = 1;
        } else {
            sweep.page += 1;
        }
    }
    for (address, remote) in listed {
        trusted.remove(&address);
        actual.owned.entry(address).or_insert(remote);
    }
    read_report.progress = sweep.progress();
    if sweep.kind >= Kind::ALL.len() {
        // The sweep's end: what no page showed is read by id. Not found:
        // deleted outside monform (left out of `unrefreshed`, the plan
        // creates it again, as after a whole listing).
        let unseen: Vec<(Address, String)> = trusted
            .iter()
            .filter(|(address, entry)| !sweep.seen.contains(&(address.kind, entry.remote_id.clone())))
            .map(|(address, entry)| (address.clone(), entry.remote_id.clone()))
            .collect();
        read_report.by_id += unseen.len();
        let mut found = Actual::default();
        for (address, _) in &unseen {
            trusted.remove(address);
        }
        let unseen = ById {
            read: unseen,
            retired: Vec::new(),
        };
        read_by_id(client, project, desired, unseen, &mut found, false).await?;
        actual.owned.extend(found.owned);
        sweep.finish(&mut read_report, Instant::now());
    }
    actual.unrefreshed = trusted;
    read_report.requests = sent();
    read_report.whole_read = sweep.whole_read(state);
    sweep.last = Some(read_report);
    Ok(actual)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plans_budget_is_its_share_of_an_interval() {
        let minute = Duration::from_secs(60);
        let quarter = Share::new(0.25).expect("a share");
        // 25% of 600/60 over 5 minutes: 750; over 10 s: 25.
        assert_eq!(Sweep::budget_for(quarter, 600, minute, 5 * minute), 750);
        assert_eq!(Sweep::budget_for(quarter, 600, minute, Duration::from_secs(10)), 25);
        // A second's interval still reads something.
        assert_eq!(Sweep::budget_for(quarter, 60, minute, Duration::from_secs(1)), 1);
    }

    #[test]
    fn a_whole_read_is_every_kinds_pages_and_the_record() {
        let mut state = State::new("p");
        for n in 0..10_001 {
            state
                .resources
                .insert(format!("checks.c{n}"), crate::state::test_entry(&n.to_string(), &[]));
        }
        let sweep = Sweep::default();
        // 101 pages of checks, one of each other kind, the record.
        let kinds = Kind::ALL.len() as u64;
        assert_eq!(sweep.whole_read(&state), 101 + (kinds - 1) + 1);
        // At 25% of 600/60 that is 42 s and more: a 10 s interval holds a quarter.
        let quarter = Share::new(0.25).expect("a share");
        let per_interval = Sweep::budget_for(quarter, 600, Duration::from_secs(60), Duration::from_secs(10));
        assert!(sweep.whole_read(&state).div_ceil(per_interval) >= 5);
    }

    #[test]
    fn progress_counts_the_pages_of_the_kinds_done() {
        let mut sweep = Sweep::default();
        for kind in Kind::ALL {
            sweep.pages.insert(*kind, 1);
        }
        sweep.pages.insert(Kind::ALL[0], 11);
        let total = 10 + Kind::ALL.len();
        sweep.kind = 0;
        sweep.page = 6;
        assert!((sweep.progress() - 5.0 / total as f64).abs() < 1e-9);
        sweep.kind = 1;
        sweep.page = 1;
        assert!((sweep.progress() - 11.0 / total as f64).abs() < 1e-9);
    }
}
