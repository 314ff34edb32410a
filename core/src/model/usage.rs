//! Token usage: what a model response consumed, read from what the runtime wrote with it. One
//! [`Tokens`] per response, whatever the runtime; the rules of each runtime's counters are here.
//!
//! - `input`: prompt tokens read at full price (cache reads and cache writes are not in it);
//! - `output`: every generated token, reasoning included;
//! - `cache_read`, `cache_write`: prompt tokens read from / written to the provider's cache;
//! - `reasoning`: how many of the output tokens were reasoning (information only).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{Block, Runtime};

/// Token counts of one model response, or a sum of them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tokens {
    /// Prompt tokens at full price.
    pub input: u64,
    /// Generated tokens, reasoning included.
    pub output: u64,
    /// Prompt tokens read from the cache.
    pub cache_read: u64,
    /// Prompt tokens written to the cache.
    pub cache_write: u64,
    /// Of the output, the reasoning tokens.
    pub reasoning: u64,
}

impl Tokens {
    /// Every token: input, output, cache reads and cache writes.
    pub fn total(&self) -> u64 {
        self.input + self.output + self.cache_read + self.cache_write
    }

    /// Adds `other` to these counts.
    pub fn add(&mut self, other: &Tokens) {
        self.input += other.input;
        self.output += other.output;
        self.cache_read += other.cache_read;
        self.cache_write += other.cache_write;
        self.reasoning += other.reasoning;
    }

    fn is_zero(&self) -> bool {
        self.total() == 0 && self.reasoning == 0
    }
}

/// What one block says a model response consumed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Reported {
    pub tokens: Tokens,
    /// The cost in USD the runtime worked out itself; `None` when it gave none (or gave 0 for a
    /// response that used tokens, which is what runtimes write for a model they cannot price).
    pub cost: Option<f64>,
    /// The model that answered, as the runtime names it.
    pub model: Option<String>,
    /// Responses with the same key are one response written more than once (a Claude Code
    /// transcript repeats a response's usage on each of its content records; a resumed session
    /// copies earlier records): counted once, the largest copy wins. `None`: never merged.
    pub key: Option<String>,
    /// A copy in a side chain (a Claude Code subagent's replay), which loses to any other copy.
    pub sidechain: bool,
    /// Codex: the session's running total after this response, for the next token count.
    pub running: Option<String>,
}

/// Reads the usage of a session's blocks in order. Codex writes running totals, so what a token
/// count adds depends on the one before it: the reader keeps that, and the last model named.
#[derive(Debug, Default)]
pub(crate) struct UsageReader {
    /// The model of the session's latest block that named one.
    pub last_model: Option<String>,
    /// Codex: the last running total seen (`None` before the first), as [`Reported::running`].
    pub running: Option<String>,
}

impl UsageReader {
    /// True when what a block of `runtime` reports depends on the session's earlier blocks: Codex's
    /// running totals, the model OpenCode names once per message.
    pub(crate) fn reads_earlier(runtime: &str) -> bool {
        matches!(runtime.parse::<Runtime>(), Ok(Runtime::Codex | Runtime::OpenCode))
    }
}

fn count(map: &Map<String, Value>, key: &str) -> u64 {
    match map.get(key) {
        Some(Value::Number(n)) => n.as_u64().or_else(|| n.as_f64().filter(|f| *f > 0.0).map(|f| f as u64)).unwrap_or(0),
        _ => 0,
    }
}

fn text<'v>(map: &'v Map<String, Value>, key: &str) -> Option<&'v str> {
    map.get(key).and_then(Value::as_str).filter(|s| !s.is_empty())
}

/// A runtime's own cost: kept when positive, or when nothing was used.
fn runtime_cost(cost: Option<&Value>, tokens: &Tokens) -> Option<f64> {
    let cost = cost.and_then(Value::as_f64).filter(|c| c.is_finite() && *c >= 0.0)?;
    (cost > 0.0 || tokens.is_zero()).then_some(cost)
}

impl UsageReader {
    /// The usage `block` reports, and what the reader learns from it.
    pub(crate) fn read(&mut self, block: &Block) -> Option<Reported> {
        if let Some(model) = &block.model {
            self.last_model = Some(model.clone());
        }
        let native = block.native.as_ref()?;
        let data = native.data.as_object()?;
        let reported = match native.runtime.parse::<Runtime>().ok()? {
            Runtime::ClaudeCode => claude(data),
            Runtime::Codex => self.codex(data),
            Runtime::OpenCode => opencode(data, self.last_model.as_deref()),
            Runtime::GeminiCli => gemini(data),
            Runtime::Pi => pi(data),
            Runtime::QwenCode => qwen(data),
            Runtime::CopilotCli => copilot(data),
        };
        reported.filter(|r| !r.tokens.is_zero() || r.cost.is_some_and(|c| c > 0.0))
    }

    fn codex(&mut self, data: &Map<String, Value>) -> Option<Reported> {
        let record = data.get("record")?.as_object()?;
        let payload = record.get("payload")?.as_object()?;
        match (text(record, "type"), text(payload, "type")) {
            (Some("turn_context"), _) => {
                if let Some(model) = text(payload, "model") {
                    self.last_model = Some(model.to_string());
                }
                return None;
            }
            (Some("event_msg"), Some("token_count")) => {}
            _ => return None,
        }
        let info = payload.get("info")?.as_object()?;
        let model = text(payload, "model").or_else(|| text(info, "model")).map(str::to_string).or_else(|| self.last_model.clone());
        let total = info.get("total_token_usage").and_then(Value::as_object).map(codex_counts);
        let last = info.get("last_token_usage").and_then(Value::as_object).map(codex_counts);
        let previous = self.running.as_deref().and_then(CodexCounts::parse);
        // A running total that did not move repeats the response before; a new one (or none)
        // comes with the response's own counts, else the difference of the totals is the response.
        let advanced = total.is_none() || total != previous;
        let counts = match (advanced, last, total) {
            (true, Some(last), _) => last,
            (_, _, Some(total)) => total.minus(&previous.unwrap_or_default()),
            _ => return None,
        };
        if let Some(total) = total {
            self.running = Some(total.render());
        }
        let tokens = counts.tokens();
        Some(Reported { tokens, cost: None, model, key: None, sidechain: false, running: self.running.clone() })
    }
}

/// Claude Code: a transcript record's `message.usage`, once per message id and request id.
fn claude(data: &Map<String, Value>) -> Option<Reported> {
    // Only a transcript's records: the `assistant` events of a live stream carry the usage of the
    // response's start (its output not counted yet); the turn's `result` has the whole.
    let record = data.get("record")?.as_object()?;
    let message = record.get("message")?.as_object()?;
    let usage = message.get("usage")?.as_object()?;
    let cache_write = match usage.get("cache_creation_input_tokens") {
        Some(Value::Number(_)) => count(usage, "cache_creation_input_tokens"),
        _ => usage.get("cache_creation").and_then(Value::as_object).map_or(0, |c| count(c, "ephemeral_5m_input_tokens") + count(c, "ephemeral_1h_input_tokens")),
    };
    let tokens = Tokens {
        input: count(usage, "input_tokens"),
        output: count(usage, "output_tokens"),
        cache_read: count(usage, "cache_read_input_tokens"),
        cache_write,
        reasoning: 0,
    };
    let model = text(message, "model").filter(|m| *m != "<synthetic>").map(str::to_string);
    let session = text(record, "sessionId").or_else(|| text(record, "session_id")).unwrap_or("");
    // Claude Code names the request `requestId` (`requestRef` from 2.1); the content records of
    // one response share both ids. Without a request id, the message id is one response in its
    // session.
    let key = text(message, "id").map(|id| match text(record, "requestId").or_else(|| text(record, "requestRef")) {
        Some(request) => format!("claude-code {id} {request}"),
        None => format!("claude-code {id} {session}"),
    });
    Some(Reported {
        cost: runtime_cost(record.get("costUSD"), &tokens),
        tokens,
        model,
        key,
        sidechain: record.get("isSidechain") == Some(&Value::Bool(true)),
        running: None,
    })
}

/// OpenCode: a `step-finish` part's tokens and cost (one per model call).
fn opencode(data: &Map<String, Value>, last_model: Option<&str>) -> Option<Reported> {
    let part = data.get("part")?.as_object()?;
    if text(part, "type") != Some("step-finish") {
        return None;
    }
    let tokens = part.get("tokens")?.as_object()?;
    let cache = tokens.get("cache").and_then(Value::as_object);
    let reasoning = count(tokens, "reasoning");
    let tokens_of = Tokens {
        input: count(tokens, "input"),
        output: count(tokens, "output") + reasoning,
        cache_read: cache.map_or(0, |c| count(c, "read")),
        cache_write: cache.map_or(0, |c| count(c, "write")),
        reasoning,
    };
    let model = data
        .get("message")
        .and_then(Value::as_object)
        .and_then(|m| text(m, "modelID"))
        .or(last_model)
        .map(str::to_string);
    Some(Reported {
        cost: runtime_cost(part.get("cost"), &tokens_of),
        tokens: tokens_of,
        model,
        key: text(part, "id").map(|id| format!("opencode {id}")),
        sidechain: false,
        running: None,
    })
}

/// Gemini CLI: a `gemini` record's `tokens` (its input counts the cached tokens and not the tool
/// prompt; its output not the thoughts).
fn gemini(data: &Map<String, Value>) -> Option<Reported> {
    let record = data.get("record")?.as_object()?;
    let tokens = record.get("tokens")?.as_object()?;
    let cached = count(tokens, "cached");
    let thoughts = count(tokens, "thoughts");
    let tokens_of = Tokens {
        input: count(tokens, "input").saturating_sub(cached) + count(tokens, "tool"),
        output: count(tokens, "output") + thoughts,
        cache_read: cached,
        cache_write: 0,
        reasoning: thoughts,
    };
    Some(Reported {
        tokens: tokens_of,
        cost: None,
        model: text(record, "model").map(str::to_string),
        key: text(record, "id").map(|id| format!("gemini-cli {id}")),
        sidechain: false,
        running: None,
    })
}

/// Pi: an assistant message's `usage`, with the cost Pi worked out.
fn pi(data: &Map<String, Value>) -> Option<Reported> {
    let record = data.get("record")?.as_object()?;
    let message = record.get("message")?.as_object()?;
    let usage = message.get("usage")?.as_object()?;
    let tokens = Tokens {
        input: count(usage, "input"),
        output: count(usage, "output"),
        cache_read: count(usage, "cacheRead"),
        cache_write: count(usage, "cacheWrite"),
        reasoning: 0,
    };
    Some(Reported {
        cost: runtime_cost(usage.get("cost").and_then(|c| c.get("total")), &tokens),
        tokens,
        model: text(message, "model").map(str::to_string),
        key: text(record, "id").map(|id| format!("pi {id}")),
        sidechain: false,
        running: None,
    })
}

/// Qwen Code: an assistant record's `usageMetadata`, translated from Chat Completions usage: its
/// prompt counts the cached tokens, its candidates the thoughts (the total is prompt + candidates).
fn qwen(data: &Map<String, Value>) -> Option<Reported> {
    let record = data.get("record")?.as_object()?;
    let usage = record.get("usageMetadata")?.as_object()?;
    let cached = count(usage, "cachedContentTokenCount");
    let tokens = Tokens {
        input: count(usage, "promptTokenCount").saturating_sub(cached),
        output: count(usage, "candidatesTokenCount"),
        cache_read: cached,
        cache_write: 0,
        reasoning: count(usage, "thoughtsTokenCount"),
    };
    Some(Reported {
        tokens,
        cost: None,
        model: text(record, "model").map(str::to_string),
        key: text(record, "uuid").map(|id| format!("qwen-code {id}")),
        sidechain: false,
        running: None,
    })
}

/// Copilot CLI: a `session.usage_record` event's `usage` (Anthropic-style counts: the input without
/// the cache). Its `cost` counts premium requests, not dollars: the tokens are priced by the table.
fn copilot(data: &Map<String, Value>) -> Option<Reported> {
    let record = data.get("record")?.as_object()?;
    if text(record, "type") != Some("session.usage_record") {
        return None;
    }
    let usage = record.get("data")?.get("usage")?.as_object()?;
    let tokens = Tokens {
        input: count(usage, "inputTokens"),
        output: count(usage, "outputTokens"),
        cache_read: count(usage, "cacheReadTokens"),
        cache_write: count(usage, "cacheWriteTokens"),
        reasoning: 0,
    };
    Some(Reported {
        cost: None,
        tokens,
        model: text(usage, "model").map(str::to_string),
        key: text(record, "id").map(|id| format!("copilot-cli {id}")),
        sidechain: false,
        running: None,
    })
}

/// The usage a runtime reported at the end of a live turn, when its blocks carried none
/// (Codex's app-server, Gemini CLI's ACP answer): the turn's whole usage as one response.
pub(crate) fn turn_usage(runtime: Runtime, usage: &Value, model: Option<&str>) -> Option<Reported> {
    let map = usage.as_object()?;
    let tokens = match runtime {
        Runtime::Codex => {
            // The app-server's `tokenUsage.last` (camelCase), or a rollout-style count.
            let either = |camel: &str, snake: &str| count(map, camel).max(count(map, snake));
            CodexCounts {
                input: either("inputTokens", "input_tokens"),
                cached: either("cachedInputTokens", "cached_input_tokens"),
                cache_write: either("cacheWriteInputTokens", "cache_write_input_tokens"),
                output: either("outputTokens", "output_tokens"),
                reasoning: either("reasoningOutputTokens", "reasoning_output_tokens"),
                total: either("totalTokens", "total_tokens"),
            }
            .tokens()
        }
        Runtime::GeminiCli => {
            // ACP's `_meta.quota.token_count`.
            Tokens { input: count(map, "input_tokens"), output: count(map, "output_tokens"), cache_read: 0, cache_write: 0, reasoning: 0 }
        }
        Runtime::OpenCode => {
            // `{tokens, cost}` of the turn's assistant message.
            let part = serde_json::json!({"type": "step-finish", "tokens": map.get("tokens"), "cost": map.get("cost")});
            let mut reported = opencode(&Map::from_iter([("part".to_string(), part)]), model)?;
            reported.key = None;
            return Some(reported);
        }
        Runtime::ClaudeCode => Tokens {
            input: count(map, "input_tokens"),
            output: count(map, "output_tokens"),
            cache_read: count(map, "cache_read_input_tokens"),
            cache_write: count(map, "cache_creation_input_tokens"),
            reasoning: 0,
        },
        Runtime::CopilotCli => {
            let record = serde_json::json!({"type": "session.usage_record", "data": {"usage": usage}});
            let mut reported = copilot(&Map::from_iter([("record".to_string(), record)]))?;
            reported.model = model.map(str::to_string);
            reported.key = None;
            return Some(reported);
        }
        Runtime::QwenCode => {
            let record = serde_json::json!({"usageMetadata": usage});
            let mut reported = qwen(&Map::from_iter([("record".to_string(), record)]))?;
            reported.model = model.map(str::to_string);
            reported.key = None;
            return Some(reported);
        }
        Runtime::Pi => {
            let record = serde_json::json!({"message": {"usage": usage}});
            let mut reported = pi(&Map::from_iter([("record".to_string(), record)]))?;
            reported.model = model.map(str::to_string);
            reported.key = None;
            return Some(reported);
        }
    };
    Some(Reported { tokens, cost: None, model: model.map(str::to_string), key: None, sidechain: false, running: None })
}

/// The counters of a Codex `token_count` (`total_token_usage` or `last_token_usage`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct CodexCounts {
    input: u64,
    cached: u64,
    cache_write: u64,
    output: u64,
    reasoning: u64,
    total: u64,
}

fn codex_counts(map: &Map<String, Value>) -> CodexCounts {
    CodexCounts {
        input: count(map, "input_tokens"),
        cached: count(map, "cached_input_tokens"),
        cache_write: count(map, "cache_write_input_tokens"),
        output: count(map, "output_tokens"),
        reasoning: count(map, "reasoning_output_tokens"),
        total: count(map, "total_tokens"),
    }
}

impl CodexCounts {
    /// Field by field, floored at 0.
    fn minus(&self, other: &CodexCounts) -> CodexCounts {
        CodexCounts {
            input: self.input.saturating_sub(other.input),
            cached: self.cached.saturating_sub(other.cached),
            cache_write: self.cache_write.saturating_sub(other.cache_write),
            output: self.output.saturating_sub(other.output),
            reasoning: self.reasoning.saturating_sub(other.reasoning),
            total: self.total.saturating_sub(other.total),
        }
    }

    /// Codex's input counts the cached tokens (and those written to the cache); its output counts
    /// the reasoning.
    fn tokens(&self) -> Tokens {
        let cached = self.cached.min(self.input);
        let cache_write = self.cache_write.min(self.input - cached);
        Tokens { input: self.input - cached - cache_write, output: self.output, cache_read: cached, cache_write, reasoning: self.reasoning }
    }

    fn render(&self) -> String {
        format!("{} {} {} {} {} {}", self.input, self.cached, self.cache_write, self.output, self.reasoning, self.total)
    }

    fn parse(text: &str) -> Option<CodexCounts> {
        let mut parts = text.split(' ').map(|p| p.parse::<u64>().ok());
        let mut next = || parts.next().flatten();
        Some(CodexCounts { input: next()?, cached: next()?, cache_write: next()?, output: next()?, reasoning: next()?, total: next()? })
    }
}
