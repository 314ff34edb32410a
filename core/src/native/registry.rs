//! The runtimes that have an adapter, in one list: adding a runtime is a folder and a line here.

use crate::model::Runtime;
use crate::native::adapter::Adapter;
use crate::native::{claude_code, codex, copilot_cli, gemini_cli, opencode, pi, qwen_code};

/// Every adapter, in the order detection asks them: a record both a Codex and a Claude Code sniffer
/// would take (a `ResponseItem` with a `leafUuid`, say) is Codex's, as it has always been; Qwen Code's
/// records (a `uuid` chain like Claude Code's, around Gemini `parts`) are asked for before Claude Code's.
pub(crate) static ADAPTERS: &[&dyn Adapter] = &[&codex::Codex, &opencode::OpenCode, &gemini_cli::GeminiCli, &pi::Pi, &qwen_code::QwenCode, &copilot_cli::CopilotCli, &claude_code::ClaudeCode];

/// The adapter of `runtime`.
pub(crate) fn adapter(runtime: Runtime) -> &'static dyn Adapter {
    ADAPTERS.iter().copied().find(|a| a.runtime() == runtime).unwrap_or_else(|| {
        // Every variant of the non-exhaustive `Runtime` has an adapter in this list.
        unreachable!("no adapter for {runtime}")
    })
}
