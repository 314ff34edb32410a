//! Python objects to JSON values and back. Only conversion happens here: what a value means is
//! decided by core when it parses the JSON.

use std::collections::HashMap;

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyDateTime, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Number, Value};

use crate::errors::{bad, Failure};

type Converted<T> = Result<T, Failure>;

/// Deepest nesting accepted (as in Node); deeper input is most likely a cycle.
const MAX_DEPTH: usize = 256;

/// A Python value (None, bool, int, float, str, list/tuple, dict with str keys, aware datetime) as JSON.
/// `path` names the value in error messages (`tool.call_id`). A value nested more than 256 levels
/// deep, a cycle among them, is refused rather than followed.
pub fn to_json(obj: &Bound<'_, PyAny>, path: &str) -> Converted<Value> {
    to_json_at(obj, path, 0)
}

fn to_json_at(obj: &Bound<'_, PyAny>, path: &str, depth: usize) -> Converted<Value> {
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if let Ok(i) = obj.cast::<PyInt>() {
        if let Ok(v) = i.extract::<i64>() {
            return Ok(Value::Number(v.into()));
        }
        if let Ok(v) = i.extract::<u64>() {
            return Ok(Value::Number(v.into()));
        }
        // Beyond 64 bits: kept exactly, as its digits (JSON numbers have no size limit).
        let digits = i.str().map_err(|_| bad(path, "an integer that cannot be written"))?.to_string();
        return digits.parse::<Number>().map(Value::Number).map_err(|_| bad(path, format!("integer {digits} cannot be written as JSON")));
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        return Number::from_f64(f.value())
            .map(Value::Number)
            .ok_or_else(|| bad(path, format!("{} is not a finite number", f.value())));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Value::String(string(s, path)?));
    }
    let is_container = obj.cast::<PyDict>().is_ok() || obj.cast::<PyList>().is_ok() || obj.cast::<PyTuple>().is_ok();
    if is_container && depth >= MAX_DEPTH {
        return Err(bad(path, format!("nested more than {MAX_DEPTH} levels deep (is there a cycle?)")));
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        let mut map = Map::with_capacity(d.len());
        for (key, value) in d.iter() {
            let Ok(key) = key.cast::<PyString>() else {
                return Err(bad(path, format!("dict keys must be str, not {}", type_name(&key))));
            };
            let key = string(key, path)?;
            let child = if path.is_empty() { key.clone() } else { format!("{path}.{key}") };
            let value = to_json_at(&value, &child, depth + 1)?;
            map.insert(key, value);
        }
        return Ok(Value::Object(map));
    }
    if let Ok(l) = obj.cast::<PyList>() {
        return l.iter().enumerate().map(|(i, v)| to_json_at(&v, &format!("{path}[{i}]"), depth + 1)).collect::<Converted<_>>().map(Value::Array);
    }
    if let Ok(t) = obj.cast::<PyTuple>() {
        return t.iter().enumerate().map(|(i, v)| to_json_at(&v, &format!("{path}[{i}]"), depth + 1)).collect::<Converted<_>>().map(Value::Array);
    }
    if obj.cast::<PyDateTime>().is_ok() {
        return Ok(Value::String(aware_datetime(obj, path)?.to_rfc3339()));
    }
    Err(bad(path, format!("cannot use a {} here (expected JSON-like data)", type_name(obj))))
}

/// An aware `datetime` as RFC 3339; a naive one is refused (its time zone would be a guess).
pub fn aware_datetime(obj: &Bound<'_, PyAny>, path: &str) -> Converted<chrono::DateTime<chrono::FixedOffset>> {
    obj.extract::<chrono::DateTime<chrono::FixedOffset>>().map_err(|_| {
        bad(path, "a naive datetime has no time zone: pass an aware one (e.g. datetime.now(timezone.utc))")
    })
}

fn string(s: &Bound<'_, PyString>, path: &str) -> Converted<String> {
    s.to_str().map(str::to_owned).map_err(|_| bad(path, "string is not valid Unicode (it holds a lone surrogate)"))
}

/// Bytes from `bytes`, `bytearray` or `memoryview`-like objects.
pub fn to_bytes(obj: &Bound<'_, PyAny>, path: &str) -> Converted<Vec<u8>> {
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(b.as_bytes().to_vec());
    }
    if let Ok(b) = obj.cast::<PyByteArray>() {
        return Ok(b.to_vec());
    }
    if let Ok(view) = obj.call_method0("tobytes") {
        if let Ok(b) = view.cast::<PyBytes>() {
            return Ok(b.as_bytes().to_vec());
        }
    }
    Err(bad(path, format!("expected bytes, not {}", type_name(obj))))
}

/// The type name of an object, for messages.
pub fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "object".to_string())
}

/// A JSON value as plain Python data (dict, list, str, int, float, bool, None).
pub fn to_py<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Builder { py, keys: HashMap::new() }.value(value)
}

/// [`to_py`] for a large value (a whole native transcript): the same objects, built with Python's
/// cyclic garbage collector paused. A tree of fresh dicts and lists has no cycles to find, and
/// collections triggered by millions of new containers would otherwise scan the growing tree
/// over and over; the collector's previous state is restored afterwards.
pub fn to_py_large<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    let _paused = GcPause::new(py)?;
    to_py(py, value)
}

/// Pauses Python's cyclic garbage collector if it is enabled; dropping it (also when a panic
/// unwinds) enables it again.
struct GcPause<'py> {
    gc: Option<Bound<'py, PyModule>>,
}

impl<'py> GcPause<'py> {
    fn new(py: Python<'py>) -> PyResult<Self> {
        let gc = py.import("gc")?;
        if !gc.call_method0("isenabled")?.is_truthy()? {
            return Ok(GcPause { gc: None });
        }
        gc.call_method0("disable")?;
        Ok(GcPause { gc: Some(gc) })
    }
}

impl Drop for GcPause<'_> {
    fn drop(&mut self) {
        if let Some(gc) = &self.gc {
            // `gc.enable()` does not fail; if it ever did, there is no caller left to tell.
            let _ = gc.call_method0("enable");
        }
    }
}

/// Builds Python values, making each distinct short dict key once: JSON repeats the same keys
/// (`type`, `content`, …) in every record, and a shared key object also keeps its cached hash.
struct Builder<'py, 'v> {
    py: Python<'py>,
    keys: HashMap<&'v str, Bound<'py, PyString>>,
}

/// Keys up to this length are shared; longer ones are rarely repeated.
const SHARED_KEY_LEN: usize = 32;

impl<'py, 'v> Builder<'py, 'v> {
    fn key(&mut self, key: &'v str) -> Bound<'py, PyString> {
        if key.len() > SHARED_KEY_LEN {
            return PyString::new(self.py, key);
        }
        let py = self.py;
        self.keys.entry(key).or_insert_with(|| PyString::new(py, key)).clone()
    }

    fn value(&mut self, value: &'v Value) -> PyResult<Bound<'py, PyAny>> {
        let py = self.py;
        Ok(match value {
            Value::Null => py.None().into_bound(py),
            Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
            Value::Number(n) => {
                if let Some(i) = n.as_i64() {
                    i.into_pyobject(py)?.into_any()
                } else if let Some(u) = n.as_u64() {
                    u.into_pyobject(py)?.into_any()
                } else if is_integer_text(n.as_str()) {
                    // Beyond 64 bits: a Python int of the same digits.
                    py.get_type::<pyo3::types::PyInt>().call1((n.as_str(),))?
                } else {
                    n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any()
                }
            }
            Value::String(s) => PyString::new(py, s).into_any(),
            Value::Array(items) => {
                let built = items.iter().map(|item| self.value(item)).collect::<PyResult<Vec<_>>>()?;
                PyList::new(py, built)?.into_any()
            }
            Value::Object(map) => {
                let dict = PyDict::new(py);
                for (key, item) in map {
                    let key = self.key(key);
                    dict.set_item(key, self.value(item)?)?;
                }
                dict.into_any()
            }
        })
    }
}

/// True for the text of a JSON integer (an optional minus and digits only).
fn is_integer_text(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}
