//! The native module `sna_history._native`: a thin PyO3 layer over the `sna-history` crate. It
//! converts arguments and results and maps errors; every decision is made in core.

use pyo3::prelude::*;
use sna_history as core;

mod convert;
mod errors;
mod host;
mod store;
mod types;

/// The runtimes sna-history converts to and from.
#[pyfunction]
fn runtimes() -> Vec<&'static str> {
    core::Runtime::ALL.iter().map(|r| r.as_str()).collect()
}

/// The native formats of `runtime`; the first is the default.
#[pyfunction]
fn formats(runtime: &str) -> PyResult<Vec<&'static str>> {
    use errors::IntoPy;
    Ok(runtime.parse::<core::Runtime>().py()?.formats().iter().map(|f| f.as_str()).collect())
}

/// Panics inside the same guard every call uses, so tests can prove a panic surfaces as
/// `InternalError` instead of crossing into Python.
#[pyfunction]
fn _panic_for_tests(py: Python<'_>) -> PyResult<()> {
    errors::detached(py, || -> core::Result<()> { panic!("deliberate panic for tests") })
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("ERROR_CODES", core::Code::ALL.iter().map(|c| c.as_str()).collect::<Vec<_>>())?;
    for (name, code, class) in errors::classes(py) {
        class.setattr("code", code)?;
        for attribute in ["line", "offset", "index", "field"] {
            if code.is_none() {
                class.setattr(attribute, py.None())?;
            }
        }
        m.add(name, class)?;
    }
    m.add_class::<store::PyStore>()?;
    m.add_class::<store::PySession>()?;
    m.add_class::<types::PyBlock>()?;
    m.add_class::<types::PySessionInfo>()?;
    m.add_class::<types::PySyncReport>()?;
    m.add_class::<types::PySearchHit>()?;
    m.add_class::<types::PyUsageReport>()?;
    m.add_class::<types::PyUsageRow>()?;
    m.add_class::<types::PyModelUsage>()?;
    m.add_class::<types::PyResponseUsage>()?;
    m.add_class::<types::PySessionUsage>()?;
    m.add_class::<types::PySyncConflict>()?;
    m.add_class::<types::PyAttribution>()?;
    m.add_class::<types::PySwitch>()?;
    m.add_class::<types::PyCompaction>()?;
    m.add_class::<types::PyBinding>()?;
    m.add_class::<types::PyContinuation>()?;
    m.add_class::<types::PyResumePlan>()?;
    m.add_class::<types::PyReport>()?;
    m.add_class::<types::PyReportEntry>()?;
    m.add_class::<types::PyExport>()?;
    m.add_class::<host::PyHost>()?;
    m.add_class::<host::PyAgent>()?;
    m.add_class::<host::PyAgentEvent>()?;
    m.add_class::<host::PyEventIter>()?;
    m.add_class::<host::PyTurn>()?;
    m.add_class::<host::PyAgentStatus>()?;
    m.add_function(wrap_pyfunction!(runtimes, m)?)?;
    m.add_function(wrap_pyfunction!(formats, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_for_tests, m)?)?;
    Ok(())
}
