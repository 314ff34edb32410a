//! What commands share before they start: where the history database is, opening it, the runtime
//! a name means, and the executables and HOME of the runtimes for the commands that run them.

use std::collections::BTreeMap;
use std::path::PathBuf;

use sna_history::{Runtime, Store};

use crate::failure::Failure;

/// The database: `--db`, else `$SNA_HISTORY_DB`, else `$XDG_DATA_HOME/sna/history.db`, else
/// `~/.local/share/sna/history.db` (its directory made).
pub fn database(given: Option<PathBuf>) -> Result<PathBuf, Failure> {
    if let Some(path) = given {
        return Ok(path);
    }
    if let Some(path) = std::env::var_os("SNA_HISTORY_DB").filter(|p| !p.is_empty()) {
        return Ok(PathBuf::from(path));
    }
    let data = match std::env::var_os("XDG_DATA_HOME").filter(|p| !p.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => match std::env::var_os("HOME").filter(|p| !p.is_empty()) {
            Some(home) => PathBuf::from(home).join(".local").join("share"),
            None => return Err(Failure("no database: give --db, or set SNA_HISTORY_DB or HOME".into())),
        },
    };
    let dir = data.join("sna");
    std::fs::create_dir_all(&dir).map_err(|e| Failure(format!("cannot create {}: {e}", dir.display())))?;
    Ok(dir.join("history.db"))
}

/// The store of the database.
pub fn open(db: Option<PathBuf>) -> Result<Store, Failure> {
    Ok(Store::open(database(db)?)?)
}

/// The runtime a name means.
pub fn runtime(name: &str) -> Result<Runtime, Failure> {
    Ok(name.parse::<Runtime>()?)
}

/// The executable of each runtime named with `--bin RUNTIME=PATH`.
pub type Bins = BTreeMap<Runtime, PathBuf>;

/// The runtimes' executables (`--bin RUNTIME=PATH`), their HOME and the database (its directory
/// made) of a command that runs the host.
#[cfg_attr(not(any(feature = "serve", feature = "acp")), allow(dead_code))]
pub fn host_setup(bins: Vec<String>, home: Option<PathBuf>, db: Option<PathBuf>) -> Result<(Bins, Option<PathBuf>, PathBuf), Failure> {
    let mut runtimes = BTreeMap::new();
    for bin in bins {
        let (name, path) = bin.split_once('=').ok_or_else(|| Failure(format!("--bin {bin:?}: expected RUNTIME=PATH")))?;
        let path = std::path::absolute(path).map_err(|e| Failure(format!("--bin {bin:?}: {e}")))?;
        runtimes.insert(runtime(name)?, path);
    }
    let home = home.map(|h| std::path::absolute(&h).map_err(|e| Failure(format!("--home: {e}")))).transpose()?;
    let db = database(db)?;
    let file = !db.to_str().is_some_and(sna_history::is_postgres_url);
    if let Some(dir) = db.parent().filter(|d| file && !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| Failure(format!("cannot create {}: {e}", dir.display())))?;
    }
    Ok((runtimes, home, db))
}
