//! Errors as JavaScript sees them: every failure is an `Error` whose `code` is core's stable code
//! (`INVALID_INPUT`, `NOT_FOUND`, …) and whose message is core's message. A panic never crosses into
//! Node: [`guard`] turns it into an `INTERNAL` error.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};

use sna_history as core;

/// The `code` property of a thrown error: always one of `core::Error::CODES`.
#[derive(Debug, Clone, Copy)]
pub struct Code(&'static str);

impl AsRef<str> for Code {
    fn as_ref(&self) -> &str {
        self.0
    }
}

/// A JavaScript `Error` with a core code.
pub type Error = napi::Error<Code>;

/// What every exported function returns.
pub type Result<T> = std::result::Result<T, Error>;

/// The JavaScript form of a core error.
pub fn from_core(error: core::Error) -> Error {
    napi::Error::new(Code(error.code()), error.to_string())
}

/// Converts core results at the call site: `store.session(id).js()?`.
pub trait CoreResult<T> {
    /// The result with its error mapped by [`from_core`].
    fn js(self) -> Result<T>;
}

impl<T> CoreResult<T> for core::Result<T> {
    fn js(self) -> Result<T> {
        self.map_err(from_core)
    }
}

/// An `INVALID_INPUT` error without a location.
pub fn invalid(message: impl Into<String>) -> Error {
    from_core(core::Error::invalid(message))
}

/// An `INVALID_INPUT` error for an argument of the wrong JavaScript type.
pub fn bad_argument(name: &str, expected: &str, got: &str) -> Error {
    invalid(format!("invalid argument {name:?}: expected {expected}, got {got}"))
}

/// A failed N-API call (for instance a property getter that threw while a value was read).
/// When a JavaScript exception is pending, napi-rs rethrows that exception instead of this error.
pub fn from_napi(error: napi::Error) -> Error {
    from_core(core::Error::Internal(format!("N-API call failed ({}): {}", error.status.as_ref(), error.reason)))
}

/// Runs the body of an exported function; a panic becomes an `INTERNAL` error instead of
/// unwinding into Node (which would abort the process).
pub fn guard<T>(body: impl FnOnce() -> Result<T>) -> Result<T> {
    // The body only borrows the wrapper objects and arguments of this one call; after a panic
    // nothing observes their state except through core, whose store rolls back an unfinished
    // transaction and tolerates a poisoned lock.
    catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|payload| {
        Err(from_core(core::Error::Internal(format!("panic in the Node binding: {}", panic_message(&*payload)))))
    })
}

fn panic_message(payload: &(dyn Any + Send)) -> &str {
    if let Some(text) = payload.downcast_ref::<&'static str>() {
        text
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text
    } else {
        "a panic without a message"
    }
}
