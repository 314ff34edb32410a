//! The sessions table: making, finding, listing, changing and deleting sessions (a session's
//! blocks are [`super::write`]'s and [`super::session`]'s).

use std::collections::{BTreeSet, HashMap};

use crate::error::{Error, Result};
use crate::model::Timestamp;

use super::db::{args, is_unique_violation, Conn, Sql};
use super::layout::timestamp;
use super::{NewSession, SessionInfo};

/// Longest session id accepted.
pub const MAX_SESSION_ID_LEN: usize = 256;

/// Makes the session `new` describes; gives its id and rowid.
pub(super) fn create(conn: &mut Conn, new: NewSession) -> Result<(String, i64)> {
    let id = match new.id {
        Some(id) => {
            validate_session_id(&id)?;
            id
        }
        None => uuid::Uuid::now_v7().to_string(),
    };
    let now = Timestamp::now().as_millis();
    let inserted = conn.first(
        "cannot create the session",
        "INSERT INTO sessions (id, title, cwd, created_at, updated_at, block_count) VALUES (?1, ?2, ?3, ?4, ?4, 0) RETURNING rowid",
        args![&id, &new.title, &new.cwd, now],
        |row| row.int(0),
    );
    match inserted {
        Ok(Some(rowid)) => Ok((id, rowid)),
        Ok(None) => Err(Error::Internal("creating a session gave no row".into())),
        Err(e) if is_unique_violation(&e) => Err(Error::Conflict(format!("session {id:?} exists already"))),
        Err(e) => Err(e),
    }
}

/// Changes a session's title and working directory ([`super::Store::update_session`]).
pub(super) fn update(conn: &mut Conn, id: &str, title: Option<&str>, cwd: Option<&str>) -> Result<SessionInfo> {
    let rowid = session_rowid(conn, id)?;
    let blank = |v: Option<&str>| v.map(|v| if v.is_empty() { None } else { Some(v.to_string()) });
    let context = "cannot update the session";
    if let Some(title) = blank(title) {
        conn.exec(context, "UPDATE sessions SET title = ?1 WHERE rowid = ?2", args![&title, rowid])?;
    }
    if let Some(cwd) = blank(cwd) {
        conn.exec(context, "UPDATE sessions SET cwd = ?1 WHERE rowid = ?2", args![&cwd, rowid])?;
    }
    session_infos(conn, Some(rowid))?.pop().ok_or_else(|| Error::NotFound(format!("session {id:?} not found")))
}

/// Deletes a session with what hangs off it, and the embed bytes no other session uses.
pub(super) fn delete(conn: &mut Conn, id: &str) -> Result<()> {
    let context = "cannot delete the session";
    let mut tx = conn.write(context)?;
    let rowid = session_rowid(&mut tx, id)?;
    let hashes = delete_session_rows(&mut tx, rowid)?;
    drop_orphan_blobs(&mut tx, &hashes)?;
    tx.commit(context)
}

pub(crate) fn validate_session_id(id: &str) -> Result<()> {
    if id.is_empty() || id.len() > MAX_SESSION_ID_LEN || id.chars().any(char::is_control) {
        return Err(Error::invalid_field(
            "id",
            format!("session id must be 1 to {MAX_SESSION_ID_LEN} bytes without control characters"),
        ));
    }
    Ok(())
}

/// Deletes session `rowid` and what hangs off it (blocks, bindings, sources, embed references) in
/// `tx`; returns the embed hashes it referenced, for [`drop_orphan_blobs`].
pub(super) fn delete_session_rows(tx: &mut impl Sql, rowid: i64) -> Result<Vec<String>> {
    let context = "cannot delete the session";
    let hashes = tx.all(context, "SELECT DISTINCT sha256 FROM session_embeds WHERE session = ?1", args![rowid], |row| row.string(0))?;
    tx.exec(context, "DELETE FROM sessions WHERE rowid = ?1", args![rowid])?;
    Ok(hashes)
}

/// Deletes the blobs among `hashes` that no session refers to any more.
pub(super) fn drop_orphan_blobs(tx: &mut impl Sql, hashes: &[String]) -> Result<()> {
    let context = "cannot delete the session";
    for hash in hashes {
        tx.exec(context, "DELETE FROM blobs WHERE sha256 = ?1 AND NOT EXISTS (SELECT 1 FROM session_embeds WHERE sha256 = ?1)", args![hash])?;
    }
    Ok(())
}

pub(super) fn session_rowid(conn: &mut impl Sql, id: &str) -> Result<i64> {
    conn.first("cannot look up the session", "SELECT rowid FROM sessions WHERE id = ?1", args![id], |row| row.int(0))?
        .ok_or_else(|| Error::NotFound(format!("no session {id:?}")))
}


/// What [`super::Store::sessions`] lists, of every session or of session `only`.
pub(super) fn session_infos(conn: &mut impl Sql, only: Option<i64>) -> Result<Vec<SessionInfo>> {
    let context = "cannot list sessions";
    let mut seen: HashMap<i64, [BTreeSet<String>; 3]> = HashMap::new();
    conn.each(
        context,
        "SELECT session, provider, model_provider, model FROM session_attribution WHERE CAST(?1 AS BIGINT) IS NULL OR session = ?1",
        args![only],
        &mut |row| {
            let entry = seen.entry(row.int(0)?).or_default();
            for (i, set) in entry.iter_mut().enumerate() {
                let value = row.text(i + 1)?;
                if !value.is_empty() {
                    set.insert(value.to_string());
                }
            }
            Ok(())
        },
    )?;
    conn.all(
        context,
        "SELECT rowid, id, title, cwd, created_at, updated_at, block_count, origin FROM sessions
         WHERE CAST(?1 AS BIGINT) IS NULL OR rowid = ?1 ORDER BY updated_at DESC, rowid DESC",
        args![only],
        |row| {
            let [providers, model_providers, models] = seen.remove(&row.int(0)?).unwrap_or_default();
            Ok(SessionInfo {
                id: row.string(1)?,
                title: row.opt_string(2)?,
                cwd: row.opt_string(3)?,
                created_at: timestamp(row.int(4)?)?,
                updated_at: timestamp(row.int(5)?)?,
                block_count: row.int(6)? as u64,
                providers: providers.into_iter().collect(),
                model_providers: model_providers.into_iter().collect(),
                models: models.into_iter().collect(),
                origin: row.opt_string(7)?,
            })
        },
    )
}
