//! A JavaScript summarizer: the function `(blocks: Block[]) => Promise<string> | string` that
//! writes the text standing in for the turns a replay folds to fit its context budget.
//!
//! Core calls a summarizer in the middle of a conversion, and a JavaScript function's answer may
//! be a Promise, which only the event loop settles: so a conversion given one runs on a worker
//! thread (`Session.exportAsync`, `Session.prepareResumeAsync`), from where the function is
//! called on the JavaScript thread through a threadsafe function, and the worker waits for its
//! answer. What the function throws, or the reason its Promise rejects with, stops the conversion
//! (nothing is written); it is kept to be the `cause` of the `Error` the call's Promise rejects with.

use std::cell::Cell;
use std::rc::Rc;
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Mutex};

use napi::bindgen_prelude::{CallbackContext, Function, PromiseRaw, Unknown};
use napi::threadsafe_function::ThreadsafeFunctionCallMode;
use napi::{JsValue, ValueType};
use sna_history as core;
use sna_history::replay::budget::Summarizer;

use crate::convert::{camel, type_name, Js, SUMMARIZER};
use crate::error::{from_core, from_napi, Result};

/// What a summarizer threw (or its Promise rejected with), kept for the rejection of the call that
/// awaited it.
pub type Thrown = Arc<Mutex<Option<napi::Error>>>;

/// A summarizer's answer, as the JavaScript thread hands it to the worker.
enum Answer {
    /// The text.
    Text(String),
    /// It threw, or its Promise rejected.
    Threw(napi::Error),
    /// It answered something else than a string (named so).
    NotText(String),
}

/// The summarizer core calls for the JavaScript function `value`; what the function throws is
/// kept in `thrown`. Anything but a function is `INVALID_INPUT` naming `summarizer`.
pub fn summarizer(value: Unknown<'_>, thrown: &Thrown) -> Result<Summarizer> {
    if value.get_type().map_err(from_napi)? != ValueType::Function {
        let message = format!("expected a function (blocks) => string | Promise<string>, got {}", type_name(value));
        return Err(from_core(core::Error::invalid_field(SUMMARIZER, message)));
    }
    // SAFETY: the value is a function.
    let function: Function<'_, Js, Unknown<'static>> = unsafe { value.cast() }.map_err(from_napi)?;
    let call = function.build_threadsafe_function::<Js>().build().map_err(from_napi)?;
    let kept = thrown.clone();
    Ok(Summarizer::new(move |blocks: &[core::Block]| {
        let blocks = camel(&blocks).map_err(|e| core::Error::Internal(e.reason))?;
        let (sender, answer) = channel();
        let status = call.call_with_return_value(blocks, ThreadsafeFunctionCallMode::Blocking, move |returned, _env| {
            settle(returned, sender);
            // An error here would be thrown as an uncaught exception: every outcome goes to the worker.
            Ok(())
        });
        if status != napi::Status::Ok {
            return Err(core::Error::Internal(format!("cannot call the summarizer ({})", status.as_ref())));
        }
        match answer.recv() {
            Ok(Answer::Text(text)) => Ok(text),
            Ok(Answer::NotText(what)) => {
                Err(core::Error::invalid_field(SUMMARIZER, format!("the summarizer must return a string or a Promise of one, not {what}")))
            }
            Ok(Answer::Threw(error)) => {
                let message = match error.reason.as_str() {
                    "" => "the summarizer failed (it threw a value without a message)".to_string(),
                    reason => format!("the summarizer failed: {reason}"),
                };
                *kept.lock().unwrap_or_else(|p| p.into_inner()) = Some(error);
                Err(core::Error::invalid_field(SUMMARIZER, message))
            }
            // The JavaScript environment went away before the function answered.
            Err(_) => Err(core::Error::Internal("the summarizer did not answer (the JavaScript environment is shutting down)".into())),
        }
    }))
}

/// Hands the worker the answer of a call that `returned` (on the JavaScript thread): a string at
/// once, a Promise once it settles.
fn settle(returned: napi::Result<Unknown<'_>>, sender: Sender<Answer>) {
    let value = match returned {
        Ok(value) => value,
        Err(error) => {
            // The receiver waits until every sender is gone, so a failed send has no one to tell.
            let _ = sender.send(Answer::Threw(error));
            return;
        }
    };
    if !value.is_promise().unwrap_or(false) {
        let _ = sender.send(text(value));
        return;
    }
    // Whichever of the two callbacks runs first answers; a Promise settles once.
    let fulfilled = Rc::new(Cell::new(Some(sender)));
    let rejected = fulfilled.clone();
    // SAFETY: the value is a Promise.
    let attached = unsafe { value.cast::<PromiseRaw<'_, Unknown<'_>>>() }.and_then(|promise| {
        promise
            .then(move |ctx: CallbackContext<Unknown<'_>>| {
                if let Some(sender) = fulfilled.take() {
                    let _ = sender.send(text(ctx.value));
                }
                Ok(())
            })?
            .catch(move |ctx: CallbackContext<Unknown<'_>>| {
                if let Some(sender) = rejected.take() {
                    let _ = sender.send(Answer::Threw(napi::Error::from_unknown_without_coercion(ctx.value)));
                }
                Ok(())
            })
            .map(|_| ())
    });
    // When the callbacks cannot be attached they are dropped with their senders, and the worker
    // learns that no answer will come.
    drop(attached);
}

/// The answer of a settled value: its text when it is a string.
fn text(value: Unknown<'_>) -> Answer {
    match value.get_type() {
        Ok(ValueType::String) => match unsafe { value.cast::<String>() } {
            Ok(text) => Answer::Text(text),
            Err(error) => Answer::Threw(error),
        },
        _ => Answer::NotText(type_name(value)),
    }
}
