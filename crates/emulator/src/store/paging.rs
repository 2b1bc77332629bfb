//! Pages of a kind in creation order, read from where the page starts
//! (`page_starts`), not by walking every row before it.

use rusqlite::{Connection, OptionalExtension, params};

/// One page in creation order (`offset`, `limit`), each row read by `read`
/// from `seq, id, body`, and the total count.
pub(super) fn page_of<T>(
    db: &Connection,
    account: &str,
    kind: &str,
    (offset, limit): (usize, usize),
    mut read: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
) -> rusqlite::Result<(Vec<T>, usize)> {
    let total: Option<i64> = db
        .prepare_cached("SELECT n FROM object_counts WHERE account_id = ?1 AND kind = ?2")?
        .query_row(params![account, kind], |r| r.get(0))
        .optional()?;
    let known: Option<i64> = db
        .prepare_cached("SELECT seq FROM page_starts WHERE account_id = ?1 AND kind = ?2 AND offset = ?3")?
        .query_row(params![account, kind, offset as i64], |r| r.get(0))
        .optional()?;
    // Else the offset is walked in the index alone (it holds `seq`), so
    // the rows skipped are never read; then one range of the table.
    let first: Option<i64> = match known {
        Some(seq) => Some(seq),
        None => db
            .prepare_cached(
                "SELECT seq FROM objects WHERE account_id = ?1 AND kind = ?2 ORDER BY seq LIMIT 1 OFFSET ?3",
            )?
            .query_row(params![account, kind, offset as i64], |r| r.get(0))
            .optional()?,
    };
    let Some(first) = first else {
        return Ok((Vec::new(), total.unwrap_or(0) as usize));
    };
    // One row more than the page: where the next page starts.
    let mut rows: Vec<(i64, T)> = db
        .prepare_cached(
            "SELECT seq, id, body FROM objects WHERE account_id = ?1 AND kind = ?2 AND seq >= ?3 ORDER BY seq LIMIT ?4",
        )?
        .query_map(params![account, kind, first, limit as i64 + 1], |r| {
            Ok((r.get(0)?, read(r)?))
        })?
        .collect::<rusqlite::Result<_>>()?;
    let mut remember = db.prepare_cached(
        "INSERT INTO page_starts (account_id, kind, offset, seq) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (account_id, kind, offset) DO UPDATE SET seq = excluded.seq",
    )?;
    if known.is_none() {
        remember.execute(params![account, kind, offset as i64, first])?;
    }
    if rows.len() > limit
        && let Some((next, _)) = rows.pop()
    {
        remember.execute(params![account, kind, (offset + limit) as i64, next])?;
    }
    Ok((
        rows.into_iter().map(|(_, row)| row).collect(),
        total.unwrap_or(0) as usize,
    ))
}
