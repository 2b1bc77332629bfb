//! An apply's writes to the PostgreSQL state, batch by batch: only the
//! rows of the entries a batch changed, never the whole state.

use std::sync::Arc;

use super::{Actor, Inner, rows};
use crate::state::{Delta, State, StateError, StateWriter};

/// An apply's writer: each batch is one transaction writing the rows of
/// the entries it changed, the header's serial and a history row.
pub(super) struct RowWriter {
    pub(super) inner: Arc<Inner>,
    pub(super) actor: Actor,
    /// The state's header (no entries), its serial the last written.
    pub(super) header: State,
    /// The serial stored now; `None` while the project has no state row.
    pub(super) stored: Option<u64>,
    /// The addresses in the state, to tell `+` from `~` in the history.
    pub(super) known: std::collections::HashSet<String>,
}

impl StateWriter for RowWriter {
    fn write(&mut self, changes: &[Delta]) -> Result<(), StateError> {
        let Some((first, rest)) = changes.split_first() else {
            return Ok(());
        };
        let mut delta = first.clone();
        rest.iter().for_each(|next| delta.merge(next));
        self.header.serial = delta.serial;
        if let Some(target) = &delta.target {
            self.header.target = Some(target.clone());
        }
        let inner = &self.inner;
        let expected = self.stored.map(|s| s as i64);
        let changes = rows::summarize(delta.describe(&|a| self.known.contains(a)));
        let write = rows::Write {
            state_header: rows::header(&self.header),
            project: &self.header.project,
            expected,
            delta: &delta,
            by: &self.actor.by,
            command: &self.actor.command,
            changes,
        };
        inner.block(async {
            let fail = |e| inner.error("cannot write", e);
            let mut tx = inner.pool.begin().await.map_err(fail)?;
            let moved = || {
                inner.error(
                    "refusing to overwrite a newer state",
                    "another monform changed it during this apply; plan again",
                )
            };
            rows::write(&mut tx, write)
                .await
                .map_err(|e| rows::refused(e, moved, fail))?;
            tx.commit().await.map_err(fail)
        })?;
        self.stored = Some(delta.serial);
        for address in &delta.remove {
            self.known.remove(address);
        }
        self.known.extend(delta.set.into_keys());
        Ok(())
    }

    /// Every change is in its rows already.
    fn finish(self: Box<Self>, _: &State) -> Result<(), StateError> {
        Ok(())
    }
}
