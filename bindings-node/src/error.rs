//! Errors as JavaScript sees them: every failure is an `Error` whose `code` is core's stable code
//! (`INVALID_INPUT`, `NOT_FOUND`, …) and whose message is core's message; bad input also carries
//! where it is, as the properties `line`, `offset`, `index` and `field` (each only when core knows
//! it). A panic never crosses into Node: [`guard`] turns it into an `INTERNAL` error.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};

use napi::bindgen_prelude::{JsObjectValue, Object, Unknown};
use napi::{Env, JsError, JsValue};
use sna_history as core;

/// The `code` property of a thrown error (always one of `core::Code::ALL`), with the location
/// of bad input when core gave one.
#[derive(Debug, Clone)]
pub struct Code {
    code: &'static str,
    location: Option<Box<core::Location>>,
}

impl AsRef<str> for Code {
    fn as_ref(&self) -> &str {
        self.code
    }
}

/// A JavaScript `Error` with a core code.
pub type Error = napi::Error<Code>;

/// What every exported function returns.
pub type Result<T> = std::result::Result<T, Error>;

/// The JavaScript form of a core error.
pub fn from_core(error: core::Error) -> Error {
    let location = error.location().filter(|l| !l.is_empty()).map(|l| Box::new(l.clone()));
    napi::Error::new(Code { code: error.code().as_str(), location }, error.to_string())
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
/// unwinding into Node (which would abort the process). An error with a location is thrown here,
/// as an `Error` with the location's properties set; napi-rs then leaves the pending exception as
/// it is.
pub fn guard<T>(env: &Env, body: impl FnOnce() -> Result<T>) -> Result<T> {
    // The body only borrows the wrapper objects and arguments of this one call; after a panic
    // nothing observes their state except through core, whose store rolls back an unfinished
    // transaction and tolerates a poisoned lock.
    let result = catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|payload| {
        Err(from_core(core::Error::Internal(format!("panic in the Node binding: {}", panic_message(&*payload)))))
    });
    result.map_err(|error| match error.status.location.clone() {
        Some(location) => throw_located(env, error, &location),
        None => error,
    })
}

/// The error that leaves a JavaScript exception already pending (one that a callback threw) to
/// be thrown as it is.
pub fn pending(reason: impl Into<String>) -> Error {
    napi::Error::new(Code { code: "PendingException", location: None }, reason.into())
}

/// Throws `error` as a JavaScript `Error` carrying `location`; returns the error napi-rs reads as
/// "an exception is pending". If building the object fails, `error` is returned to be thrown plain
/// (when the failed N-API call left an exception pending, napi-rs throws that one instead: still
/// an `Error`, but without our code — this happens only when the engine itself is failing).
fn throw_located(env: &Env, error: Error, location: &core::Location) -> Error {
    match error_object(env, &error, location).and_then(|object| env.throw(object)) {
        Ok(()) => napi::Error::new(Code { code: "PendingException", location: None }, error.reason),
        Err(_) => napi::Error::new(Code { code: error.status.code, location: None }, error.reason),
    }
}

/// The JavaScript `Error` of `error`: its `code`, its message, and the location's properties
/// (`line`, `offset`, `index`, `field`, each when known). A rejected Promise gets the same object
/// a synchronous call throws.
pub fn js_error<'env>(env: &'env Env, error: Error) -> Unknown<'env> {
    let location = error.status.location.as_deref().cloned().unwrap_or_default();
    match error_object(env, &error, &location) {
        Ok(object) => object.to_unknown(),
        Err(_) => JsError::from(error).into_unknown(*env),
    }
}

/// Sets the `cause` of the rejection `error` (an `Error` object made by [`js_error`]): what a
/// JavaScript callback threw, the very object when it threw an `Error`. Best effort: the rejection
/// stands without its cause if the engine cannot set it.
pub fn set_cause(env: &Env, error: Unknown<'_>, cause: napi::Error) {
    let cause = JsError::from(cause).into_unknown(*env);
    // SAFETY: `js_error` makes objects (an `Error`).
    if let Ok(mut object) = unsafe { error.cast::<Object<'_>>() } {
        // Setting a property of a fresh `Error` fails only when the engine itself is failing.
        let _ = object.set_named_property("cause", cause);
    }
}

fn error_object<'env>(env: &'env Env, error: &Error, location: &core::Location) -> napi::Result<Object<'env>> {
    let plain = napi::Error::new(Code { code: error.status.code, location: None }, error.reason.clone());
    let error = JsError::from(plain).into_unknown(*env);
    // SAFETY: `into_unknown` made an Error object, which is an object.
    let mut object: Object<'_> = unsafe { error.cast() }?;
    if let Some(line) = location.line {
        object.set_named_property("line", line as f64)?;
    }
    if let Some(offset) = location.offset {
        object.set_named_property("offset", offset as f64)?;
    }
    if let Some(index) = location.index {
        object.set_named_property("index", index as f64)?;
    }
    if let Some(field) = &location.field {
        object.set_named_property("field", field.as_str())?;
    }
    Ok(object)
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
