//! The N-API addon of the npm package `sna-history`: a thin layer over the `sna-history` crate. It
//! converts JavaScript values to core's types and back and maps errors to `Error`s with a `code`;
//! every decision is made in core.

#![deny(clippy::all)]

use napi_derive::napi;
use sna_history as core;

mod convert;
mod error;
mod store;
mod types;

pub use store::{Session, Store};

use error::{guard, CoreResult, Result};

/// The runtimes sna-history converts to and from.
#[napi(ts_return_type = "Runtime[]")]
pub fn runtimes() -> Vec<&'static str> {
    core::Runtime::ALL.iter().map(|r| r.as_str()).collect()
}

/// The native formats of `runtime`; the first is the default.
#[napi(ts_args_type = "runtime: Runtime", ts_return_type = "NativeFormat[]")]
pub fn formats(runtime: String) -> Result<Vec<String>> {
    guard(|| Ok(runtime.parse::<core::Runtime>().js()?.formats().iter().map(|f| f.to_string()).collect()))
}

/// Every error code an `Error` thrown by sna-history can carry in `code`.
#[napi(js_name = "errorCodes")]
pub fn error_codes() -> Vec<&'static str> {
    core::Error::CODES.to_vec()
}

/// Panics inside the guard every call uses, so tests can prove a panic surfaces as an `Error` with
/// code `INTERNAL` instead of aborting the process.
#[napi(js_name = "__panicForTests")]
pub fn panic_for_tests() -> Result<()> {
    guard(|| -> Result<()> { panic!("deliberate panic for tests") })
}
