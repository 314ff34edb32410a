//! The connections of an open store. SQLite: one connection that calls take turns on (SQLite lets
//! one writer in at a time anyway, and a second connection would not see the first's uncommitted
//! state any sooner). PostgreSQL: a small pool, so that threads sharing one `Store` (Python
//! threads, whose calls release the GIL; a server's request handlers) use the server at once, and a
//! call blocked on a row lock does not hold up the others.

use std::sync::{Mutex, MutexGuard};

#[cfg(feature = "postgres")]
use std::sync::Condvar;

use crate::error::{Error, Result};

use super::db::Conn;

/// Connections a PostgreSQL store opens at most; a call that finds them all in use waits for one.
#[cfg(feature = "postgres")]
pub(crate) const POOL_SIZE: usize = 4;

pub(super) enum Conns {
    /// `None` once the store is closed.
    One(Mutex<Option<Conn>>),
    #[cfg(feature = "postgres")]
    Pool(Pool),
}

#[cfg(feature = "postgres")]
pub(super) struct Pool {
    url: String,
    state: Mutex<PoolState>,
    /// Signalled when a connection is given back (or the store closed).
    freed: Condvar,
}

#[cfg(feature = "postgres")]
struct PoolState {
    idle: Vec<Conn>,
    /// Connections that exist, idle or in use.
    open: usize,
    closed: bool,
}

/// A connection of an open store, held by one call.
pub(super) enum ConnGuard<'a> {
    One(MutexGuard<'a, Option<Conn>>),
    #[cfg(feature = "postgres")]
    Pooled { pool: &'a Pool, conn: Option<Conn> },
}

impl std::ops::Deref for ConnGuard<'_> {
    type Target = Conn;
    fn deref(&self) -> &Conn {
        // A guard is only built around an open connection, and only its drop takes it out.
        match self {
            ConnGuard::One(guard) => guard.as_ref().expect("ConnGuard holds an open connection"),
            #[cfg(feature = "postgres")]
            ConnGuard::Pooled { conn, .. } => conn.as_ref().expect("ConnGuard holds an open connection"),
        }
    }
}

impl std::ops::DerefMut for ConnGuard<'_> {
    fn deref_mut(&mut self) -> &mut Conn {
        match self {
            ConnGuard::One(guard) => guard.as_mut().expect("ConnGuard holds an open connection"),
            #[cfg(feature = "postgres")]
            ConnGuard::Pooled { conn, .. } => conn.as_mut().expect("ConnGuard holds an open connection"),
        }
    }
}

#[cfg(feature = "postgres")]
impl Drop for ConnGuard<'_> {
    fn drop(&mut self) {
        if let ConnGuard::Pooled { pool, conn } = self {
            if let Some(conn) = conn.take() {
                pool.give_back(conn);
            }
        }
    }
}

impl Conns {
    pub(super) fn one(conn: Conn) -> Conns {
        Conns::One(Mutex::new(Some(conn)))
    }

    /// A pool for the server `url` names, holding `first` (the connection that opened the store).
    #[cfg(feature = "postgres")]
    pub(super) fn pool(url: &str, first: Conn) -> Conns {
        Conns::Pool(Pool { url: url.to_string(), state: Mutex::new(PoolState { idle: vec![first], open: 1, closed: false }), freed: Condvar::new() })
    }

    /// A connection for one call; `closed` says what a closed store is.
    pub(super) fn get(&self, closed: impl FnOnce() -> String) -> Result<ConnGuard<'_>> {
        match self {
            Conns::One(mutex) => {
                // A panic while holding the lock cannot leave the connection inconsistent: SQLite
                // rolls back an unfinished transaction when it is dropped, so a poisoned lock is
                // still safe to use.
                let guard = mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
                if guard.is_none() {
                    return Err(Error::Closed(closed()));
                }
                Ok(ConnGuard::One(guard))
            }
            #[cfg(feature = "postgres")]
            Conns::Pool(pool) => pool.get(closed),
        }
    }

    pub(super) fn close(&self) -> Result<()> {
        match self {
            Conns::One(mutex) => match mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).take() {
                Some(Conn::Sqlite(conn)) => conn.close().map_err(|(_, e)| Error::storage("cannot close the database")(e)),
                #[cfg(feature = "postgres")]
                Some(other) => {
                    drop(other);
                    Ok(())
                }
                None => Ok(()),
            },
            #[cfg(feature = "postgres")]
            Conns::Pool(pool) => {
                let mut state = pool.lock();
                state.closed = true;
                let idle = std::mem::take(&mut state.idle);
                state.open -= idle.len();
                drop(state);
                // Connections in use end when their calls give them back.
                drop(idle);
                pool.freed.notify_all();
                Ok(())
            }
        }
    }

    pub(super) fn is_closed(&self) -> bool {
        match self {
            Conns::One(mutex) => mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).is_none(),
            #[cfg(feature = "postgres")]
            Conns::Pool(pool) => pool.lock().closed,
        }
    }
}

#[cfg(feature = "postgres")]
impl Pool {
    fn lock(&self) -> MutexGuard<'_, PoolState> {
        // The state is a list and two counts, consistent between statements.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn get(&self, closed: impl FnOnce() -> String) -> Result<ConnGuard<'_>> {
        let mut state = self.lock();
        loop {
            if state.closed {
                return Err(Error::Closed(closed()));
            }
            if let Some(mut conn) = state.idle.pop() {
                drop(state);
                // A connection the server dropped (a restart, the network) is opened again here.
                if let Conn::Postgres(pg) = &mut conn {
                    if let Err(e) = pg.reconnect_if_closed() {
                        self.forget();
                        return Err(e);
                    }
                }
                return Ok(ConnGuard::Pooled { pool: self, conn: Some(conn) });
            }
            if state.open < POOL_SIZE {
                state.open += 1;
                drop(state);
                return match Conn::postgres_session(&self.url) {
                    Ok(conn) => Ok(ConnGuard::Pooled { pool: self, conn: Some(conn) }),
                    Err(e) => {
                        self.forget();
                        Err(e)
                    }
                };
            }
            state = self.freed.wait(state).unwrap_or_else(|poisoned| poisoned.into_inner());
        }
    }

    fn give_back(&self, conn: Conn) {
        let mut state = self.lock();
        if state.closed {
            state.open -= 1;
            drop(state);
            drop(conn);
        } else {
            state.idle.push(conn);
            drop(state);
        }
        self.freed.notify_one();
    }

    /// A connection that could not be had: its place is free again.
    fn forget(&self) {
        self.lock().open -= 1;
        self.freed.notify_one();
    }
}
