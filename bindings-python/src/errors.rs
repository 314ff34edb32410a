//! The exception hierarchy: `SnaError` with one subclass per core error code, and the one function
//! that maps a core error to it.

use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::{create_exception, PyErr};
use sna_history as core;

create_exception!(
    sna_history,
    SnaError,
    PyException,
    "Base class of every error sna-history raises. `code` names the kind (the same string in every language)."
);
create_exception!(sna_history, InvalidInputError, SnaError, "INVALID_INPUT: the input (a block, a native record, a path, an option) is not acceptable; `line`, `offset`, `index` and `field` say where when known.");
create_exception!(sna_history, NotFoundError, SnaError, "NOT_FOUND: no such session, block, embed or binding.");
create_exception!(sna_history, ConflictError, SnaError, "CONFLICT: clashes with what is stored (a duplicate id, an embed id reused for other bytes).");
create_exception!(sna_history, SchemaTooNewError, SnaError, "SCHEMA_TOO_NEW: the database was written by a newer sna-history; it was left untouched.");
create_exception!(sna_history, StorageError, SnaError, "STORAGE: SQLite failed.");
create_exception!(sna_history, IoError, SnaError, "IO: a file could not be read or written.");
create_exception!(sna_history, UnsupportedError, SnaError, "UNSUPPORTED: the runtime does not offer this operation.");
create_exception!(sna_history, LossyError, SnaError, "LOSSY: strict mode, and the conversion would lose or alter something.");
create_exception!(sna_history, ClosedError, SnaError, "CLOSED: the store was closed.");
create_exception!(sna_history, TimedOutError, SnaError, "TIMEOUT: a runtime did not answer or finish in the time given.");
create_exception!(sna_history, RuntimeFailedError, SnaError, "RUNTIME: a runtime process failed: it exited during a turn or refused a request.");
create_exception!(sna_history, InternalError, SnaError, "INTERNAL: a bug in sna-history (for instance a panic caught at the boundary).");

/// Every exception class with its code, for the module to register.
pub fn classes(py: Python<'_>) -> Vec<(&'static str, Option<&'static str>, Bound<'_, pyo3::types::PyType>)> {
    vec![
        ("SnaError", None, py.get_type::<SnaError>()),
        ("InvalidInputError", Some("INVALID_INPUT"), py.get_type::<InvalidInputError>()),
        ("NotFoundError", Some("NOT_FOUND"), py.get_type::<NotFoundError>()),
        ("ConflictError", Some("CONFLICT"), py.get_type::<ConflictError>()),
        ("SchemaTooNewError", Some("SCHEMA_TOO_NEW"), py.get_type::<SchemaTooNewError>()),
        ("StorageError", Some("STORAGE"), py.get_type::<StorageError>()),
        ("IoError", Some("IO"), py.get_type::<IoError>()),
        ("UnsupportedError", Some("UNSUPPORTED"), py.get_type::<UnsupportedError>()),
        ("LossyError", Some("LOSSY"), py.get_type::<LossyError>()),
        ("ClosedError", Some("CLOSED"), py.get_type::<ClosedError>()),
        ("TimedOutError", Some("TIMEOUT"), py.get_type::<TimedOutError>()),
        ("RuntimeFailedError", Some("RUNTIME"), py.get_type::<RuntimeFailedError>()),
        ("InternalError", Some("INTERNAL"), py.get_type::<InternalError>()),
    ]
}

/// The Python exception for a core error, with `code` and, for `INVALID_INPUT`, where.
pub fn to_py_err(e: core::Error) -> PyErr {
    let message = e.to_string();
    let err = match e.code() {
        core::Code::InvalidInput => InvalidInputError::new_err(message),
        core::Code::NotFound => NotFoundError::new_err(message),
        core::Code::Conflict => ConflictError::new_err(message),
        core::Code::SchemaTooNew => SchemaTooNewError::new_err(message),
        core::Code::Storage => StorageError::new_err(message),
        core::Code::Io => IoError::new_err(message),
        core::Code::Unsupported => UnsupportedError::new_err(message),
        core::Code::Lossy => LossyError::new_err(message),
        core::Code::Closed => ClosedError::new_err(message),
        core::Code::Timeout => TimedOutError::new_err(message),
        core::Code::Runtime => RuntimeFailedError::new_err(message),
        core::Code::Internal => InternalError::new_err(message),
        _ => SnaError::new_err(message),
    };
    Python::attach(|py| {
        let value = err.value(py);
        // Setting attributes on a fresh exception instance cannot fail short of memory exhaustion;
        // the exception itself is what the caller needs either way.
        let _ = value.setattr("code", e.code().as_str());
        if let Some(location) = e.location() {
            let _ = value.setattr("line", location.line);
            let _ = value.setattr("offset", location.offset);
            let _ = value.setattr("index", location.index);
            let _ = value.setattr("field", location.field.clone());
        }
    });
    err
}

/// An `INVALID_INPUT` error about an argument.
pub fn invalid(field: impl Into<String>, message: impl Into<String>) -> PyErr {
    to_py_err(core::Error::invalid_field(field, message))
}

/// A failure while converting Python input: either bad input (a core error, so that core's own
/// location handling applies) or an error Python raised.
pub enum Failure {
    /// The input is not acceptable.
    Core(core::Error),
    /// Python raised.
    Py(PyErr),
}

impl Failure {
    /// Adds the batch index to bad input.
    pub fn at_index(self, index: usize) -> Failure {
        match self {
            Failure::Core(e) => Failure::Core(e.at_index(index)),
            other => other,
        }
    }
}

impl From<PyErr> for Failure {
    fn from(e: PyErr) -> Self {
        Failure::Py(e)
    }
}

impl From<core::Error> for Failure {
    fn from(e: core::Error) -> Self {
        Failure::Core(e)
    }
}

impl From<Failure> for PyErr {
    fn from(f: Failure) -> Self {
        match f {
            Failure::Core(e) => to_py_err(e),
            Failure::Py(e) => e,
        }
    }
}

/// Bad input about a field, as a [`Failure`].
pub fn bad(field: impl Into<String>, message: impl Into<String>) -> Failure {
    Failure::Core(core::Error::invalid_field(field, message))
}

/// `Result` of core into `PyResult`.
pub trait IntoPy<T> {
    /// Maps the error with [`to_py_err`].
    fn py(self) -> PyResult<T>;
}

impl<T> IntoPy<T> for core::Result<T> {
    fn py(self) -> PyResult<T> {
        self.map_err(to_py_err)
    }
}

/// Runs `f` with the GIL released, turning a panic into `InternalError`.
pub fn detached<T: Send>(py: Python<'_>, f: impl FnOnce() -> core::Result<T> + Send) -> PyResult<T> {
    py.detach(|| guard(f)).py()
}

/// Runs `f`, turning a panic into `core::Error::Internal`.
pub fn guard<T>(f: impl FnOnce() -> core::Result<T>) -> core::Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|panic| {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".to_string());
        Err(core::Error::Internal(format!("panic: {what}")))
    })
}
