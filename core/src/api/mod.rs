//! The public surface of the two handles: this is where every public method of [`Store`] and
//! [`Session`] is declared, one file per type (`store.rs`, `session.rs`). Each method delegates to
//! the module that does the work, in the store (`store/`) or in the pipeline (`native/`): the layer
//! sits above both, so the conversions, which the store may not name, are declared beside the
//! store's own methods.
//!
//! The structs themselves are the store's (`store/mod.rs`, `store/session.rs`), and so are their
//! crate-private helper methods.

#[cfg(doc)]
use crate::store::{Session, Store};

mod session;
mod store;

#[cfg(test)]
mod disk_full;
