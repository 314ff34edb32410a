//! Node.js binding of sna-history: a thin, synchronous N-API layer over the core crate.
//!
//! The binding converts values and errors only; every decision lives in core. JavaScript values go
//! to core as JSON (`convert`), core's results come back as camelCase plain objects, and every core
//! error becomes an `Error` whose `code` is the core code (`error`). Every exported function runs
//! its body inside `error::guard`, so no panic crosses into Node.

#![deny(clippy::all)]

mod convert;
mod error;
mod host;
mod store;
mod summarizer;
mod types;

use napi::bindgen_prelude::{ToNapiValue, Unknown};
use napi::{sys, Env};
use napi_derive::napi;
use sna_history as core;

pub use store::{Session, Store};

use crate::error::{guard, Result};

/// A runtime name, by its index in `core::Runtime::ALL`; its TypeScript type is the `Runtime` union.
#[derive(Clone, Copy)]
pub struct Runtime(usize);

impl ToNapiValue for Runtime {
    unsafe fn to_napi_value(env: sys::napi_env, val: Self) -> napi::Result<sys::napi_value> {
        unsafe { <&str>::to_napi_value(env, core::Runtime::ALL[val.0].as_str()) }
    }
}

/// An error code, by its index in `core::Code::ALL`; its TypeScript type is the `ErrorCode` union.
#[derive(Clone, Copy)]
pub struct ErrorCode(usize);

impl ToNapiValue for ErrorCode {
    unsafe fn to_napi_value(env: sys::napi_env, val: Self) -> napi::Result<sys::napi_value> {
        unsafe { <&str>::to_napi_value(env, core::Code::ALL[val.0].as_str()) }
    }
}

const fn runtimes<const N: usize>() -> [Runtime; N] {
    let mut out = [Runtime(0); N];
    let mut i = 0;
    while i < N {
        out[i] = Runtime(i);
        i += 1;
    }
    out
}

const fn error_codes<const N: usize>() -> [ErrorCode; N] {
    let mut out = [ErrorCode(0); N];
    let mut i = 0;
    while i < N {
        out[i] = ErrorCode(i);
        i += 1;
    }
    out
}

/// Every runtime sna-history reads and writes: `claude-code`, `codex`, `opencode`.
#[napi]
pub const RUNTIMES: [Runtime; core::Runtime::ALL.len()] = runtimes();

/// Every `code` a thrown error can have.
#[napi]
pub const ERROR_CODES: [ErrorCode; core::Code::ALL.len()] = error_codes();

/// The native formats `toNative` can produce for `runtime`; the first is the default.
///
/// Throws `INVALID_INPUT` for an unknown runtime.
#[napi(ts_args_type = "runtime: Runtime", ts_return_type = "NativeFormat[]")]
pub fn formats(env: Env, runtime: Unknown) -> Result<Vec<&'static str>> {
    guard(&env, || Ok(convert::runtime(runtime)?.formats().iter().map(|f| f.as_str()).collect()))
}

/// @internal Test hook: panics inside the binding's panic guard, which must turn the panic into an
/// `Error` with code `INTERNAL` and leave the process running.
#[napi(js_name = "__panicForTests")]
pub fn panic_for_tests(env: Env) -> Result<()> {
    guard(&env, || -> Result<()> { panic!("deliberate panic for tests") })
}
