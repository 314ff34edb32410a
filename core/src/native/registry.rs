//! The runtimes that have an adapter, in one list: adding a runtime is a folder and a line here.

use crate::model::Runtime;
use crate::native::adapter::Adapter;
use crate::native::{claude_code, codex, opencode};

/// Every adapter, in the order detection asks them.
pub(crate) static ADAPTERS: &[&dyn Adapter] = &[&claude_code::ClaudeCode, &codex::Codex, &opencode::OpenCode];

/// The adapter of `runtime`.
pub(crate) fn adapter(runtime: Runtime) -> &'static dyn Adapter {
    ADAPTERS.iter().copied().find(|a| a.runtime() == runtime).unwrap_or_else(|| {
        // Every variant of the non-exhaustive `Runtime` has an adapter in this list.
        unreachable!("no adapter for {runtime}")
    })
}
