//! `sna scan`: the secrets stored sessions hold, masked; nothing is changed.

use std::path::PathBuf;

use crate::args::ScanArgs;
use crate::failure::Outcome;
use crate::setup::open;
use crate::text::visible;

pub fn run(args: ScanArgs, db: Option<PathBuf>) -> Outcome {
    let ScanArgs { ids } = args;
    let store = open(db)?;
    let ids = if ids.is_empty() { store.sessions()?.into_iter().map(|s| s.id).collect() } else { ids };
    let mut found = 0;
    for id in ids {
        let session = store.session(&id)?;
        for finding in session.scan_secrets()? {
            found += 1;
            println!("{}  {:>5}  {:<16} {}", visible(&id), finding.seq, finding.kind, visible(&finding.preview));
        }
    }
    eprintln!("{found} secrets found");
    Ok(())
}
