//! Secrets kept out of what leaves the store: a detector for the common credential shapes tools
//! print (API keys of the model vendors, cloud and forge tokens, private key blocks, JWTs, bearer
//! headers, `password=`-style assignments), and the redaction of blocks before they are written
//! anywhere else. Detection errs on the side of shapes that are unmistakable: UUIDs, hashes,
//! base64 images and opaque reasoning tokens are not secrets and must not match.

use std::sync::OnceLock;

use regex::Regex;
use serde_json::Value;

use crate::model::{Block, Kind};
use crate::report::{ReportAction, ReportEntry};

/// One secret found in a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The kind of secret (`anthropic-key`, `aws-access-key`, …).
    pub kind: &'static str,
    /// Byte range of the secret in the text.
    pub start: usize,
    pub end: usize,
}

/// The shapes detected, in the order they are tried. The whole match is the secret, except where
/// a group named `secret` says which part is (an assignment keeps its name visible).
fn detectors() -> &'static [(&'static str, Regex)] {
    static DETECTORS: OnceLock<Vec<(&'static str, Regex)>> = OnceLock::new();
    DETECTORS.get_or_init(|| {
        let shapes: [(&str, &str); 13] = [
            ("private-key", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----"),
            ("anthropic-key", r"\bsk-ant-(?:api|admin)[0-9]{2}-[A-Za-z0-9_-]{20,}"),
            ("openai-key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}T3BlbkFJ[A-Za-z0-9_-]{20,}|\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,}"),
            ("aws-access-key", r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b"),
            ("aws-secret-key", r"(?i)\baws_?secret_?access_?key\b\s*[=:]\s*['\x22]?(?P<secret>[A-Za-z0-9/+=]{40})\b"),
            ("github-token", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{60,})\b"),
            ("gitlab-token", r"\bglpat-[A-Za-z0-9_-]{20,}"),
            ("slack-token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
            ("google-api-key", r"\bAIza[0-9A-Za-z_-]{35}\b"),
            ("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
            ("bearer-token", r"(?i)\bauthorization\s*:\s*bearer\s+(?P<secret>[A-Za-z0-9._~+/-]{16,}=*)"),
            ("bearer-token", r"(?i)\bbearer\s+(?P<secret>[A-Za-z0-9._~+/-]{24,}=*)"),
            (
                "assignment",
                r#"(?i)\b[A-Z0-9_]*(?:password|passwd|secret|token|api_?key|access_?key)[A-Z0-9_]*\s*[=:]\s*['"]?(?P<secret>[^\s'"`,;]{8,})"#,
            ),
        ];
        shapes.into_iter().filter_map(|(kind, pattern)| Regex::new(pattern).ok().map(|re| (kind, re))).collect()
    })
}

/// The secrets in `text`, in order, not overlapping.
pub fn scan(text: &str) -> Vec<Finding> {
    let mut found: Vec<Finding> = Vec::new();
    for (kind, re) in detectors() {
        for captures in re.captures_iter(text) {
            let Some(m) = captures.name("secret").or_else(|| captures.get(0)) else { continue };
            if *kind == "assignment" && !looks_secret(m.as_str()) {
                continue;
            }
            if found.iter().any(|f| m.start() < f.end && f.start < m.end()) {
                continue;
            }
            found.push(Finding { kind, start: m.start(), end: m.end() });
        }
    }
    found.sort_by_key(|f| f.start);
    found
}

/// An assigned value worth hiding: not a placeholder, a reference to another variable, a path
/// or a plain word.
fn looks_secret(value: &str) -> bool {
    let lower = value.to_ascii_lowercase();
    let placeholder = ["xxx", "***", "<", "${", "$(", "%(", "{{", "changeme", "redacted", "example", "placeholder", "your_", "your-"]
        .iter()
        .any(|p| lower.contains(p));
    let reference = value.starts_with('$') || value.starts_with('/') || value.starts_with("./") || value.contains("://");
    let classes = [value.bytes().any(|b| b.is_ascii_lowercase()), value.bytes().any(|b| b.is_ascii_uppercase()), value.bytes().any(|b| b.is_ascii_digit())];
    !placeholder && !reference && classes.iter().filter(|c| **c).count() >= 2
}

/// `text` with every secret replaced by `[REDACTED:<kind>]` (borrowed when there is none), and
/// the kinds replaced.
pub fn redact_text(text: &str) -> (std::borrow::Cow<'_, str>, Vec<&'static str>) {
    let found = scan(text);
    if found.is_empty() {
        return (text.into(), Vec::new());
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for f in &found {
        out.push_str(&text[at..f.start]);
        out.push_str(&format!("[REDACTED:{}]", f.kind));
        at = f.end;
    }
    out.push_str(&text[at..]);
    (out.into(), found.iter().map(|f| f.kind).collect())
}

/// A secret found in a stored block, shown masked.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SecretFinding {
    /// The block's place in its session.
    pub seq: u64,
    /// The block's id.
    pub block_id: String,
    /// The kind of secret.
    pub kind: &'static str,
    /// Its first and last characters around an ellipsis, and its length: enough to recognise it,
    /// not to use it.
    pub preview: String,
}

/// `secret` masked: `sk-a…AA (64 chars)`.
fn mask(secret: &str) -> String {
    let chars: Vec<char> = secret.chars().collect();
    let head: String = chars.iter().take(4.min(chars.len() / 4)).collect();
    let tail: String = chars.iter().skip(chars.len().saturating_sub(2.min(chars.len() / 8))).collect();
    format!("{head}…{tail} ({} chars)", chars.len())
}

/// The secrets a block holds, in its text and its native passthrough.
pub fn scan_block(block: &Block) -> Vec<SecretFinding> {
    let mut texts: Vec<&str> = vec![&block.content];
    if let Some(native) = &block.native {
        let mut stack = vec![&native.data];
        while let Some(value) = stack.pop() {
            match value {
                Value::String(text) => texts.push(text),
                Value::Array(items) => stack.extend(items.iter()),
                Value::Object(map) => stack.extend(map.values()),
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    for text in texts {
        for f in scan(text) {
            out.push(SecretFinding { seq: block.seq, block_id: block.id.clone(), kind: f.kind, preview: mask(&text[f.start..f.end]) });
        }
    }
    out
}

/// Redacts every string of a JSON value in place; returns the kinds replaced.
fn redact_value(value: &mut Value, kinds: &mut Vec<&'static str>) {
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::String(text) => {
                let (redacted, found) = redact_text(text);
                if !found.is_empty() {
                    *text = redacted.into_owned();
                    kinds.extend(found);
                }
            }
            Value::Array(items) => stack.extend(items.iter_mut()),
            Value::Object(map) => stack.extend(map.values_mut()),
            _ => {}
        }
    }
}

/// Redacts blocks before they are written elsewhere: their text (content, tool input and output),
/// their tool names and their native passthrough. Opaque reasoning tokens are never altered; a
/// thinking block whose readable text was redacted loses its token (it would no longer match).
/// Returns one report entry per block changed.
pub fn redact_blocks(blocks: &mut [Block]) -> Vec<ReportEntry> {
    let mut report = Vec::new();
    for block in blocks.iter_mut() {
        let mut kinds: Vec<&'static str> = Vec::new();
        let (content, found) = redact_text(&block.content);
        let text_changed = !found.is_empty();
        if text_changed {
            block.content = content.into_owned();
            kinds.extend(found);
        }
        if let Some(native) = block.native.as_mut() {
            redact_value(&mut native.data, &mut kinds);
        }
        if kinds.is_empty() {
            continue;
        }
        kinds.sort_unstable();
        kinds.dedup();
        let mut message = format!("{} redacted", kinds.join(", "));
        if text_changed && block.kind == Kind::Thinking && block.reasoning.take().is_some() {
            message.push_str("; its reasoning token was left out, as it no longer matches the text");
        }
        report.push(ReportEntry { action: ReportAction::Redacted, block_id: Some(block.id.clone()), message });
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Secrets of every kind, each of which must be found (the corpus of true positives).
    const SECRETS: &[(&str, &str)] = &[
        ("anthropic-key", "export ANTHROPIC_API_KEY=sk-ant-api03-abcDEF1234567890_abcdefghijklmnopqrstuvwxyz-AAAA"),
        ("openai-key", "OPENAI key sk-proj-Abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUV01 set"),
        ("openai-key", "sk-abcdefghijklmnopqrstT3BlbkFJabcdefghijklmnopqrst"),
        ("aws-access-key", "aws_access_key_id = AKIAIOSFODNN7EXAMPLE"),
        ("aws-secret-key", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
        ("github-token", "token: ghp_1234567890abcdefghijklmnopqrstuvwxyzAB"),
        ("github-token", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ012345"),
        ("gitlab-token", "glpat-xYz123AbC456dEf789gH"),
        ("slack-token", "SLACK=xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"),
        ("google-api-key", "key=AIzaSyA-1234567890abcdefghijklmnopqrstu"),
        ("private-key", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----"),
        ("private-key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7\n-----END RSA PRIVATE KEY-----"),
        ("jwt", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"),
        ("bearer-token", "curl -H 'Authorization: Bearer 4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c'"),
        ("assignment", "DATABASE_PASSWORD=Tr0ub4dor&3xyz"),
        ("assignment", "db.password: 'hunter2Secret9'"),
    ];

    /// Text that looks busy but holds no secret (the corpus of false positives).
    const NOT_SECRETS: &[&str] = &[
        "session 59187973-81fd-4be2-8aa9-a21c45c78135 resumed",
        "sha256 3cf87ebd8dae5c021971a33fe1ee2cae09e694ebd9c17ea3b2ef92562da88011",
        "commit 0decf96a1b2c3d4e5f60718293a4b5c6d7e8f901",
        "![image](embed://sha256-3cf87ebd8dae5c021971a33f)",
        "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
        "gAAAAABpLk3a9v0-opaque-encrypted-reasoning-ZXhhbXBsZQ==",
        "password = ${DB_PASSWORD}",
        "token: <your token here>",
        "api_key=changeme",
        "PASSWORD_FILE=/run/secrets/db",
        "the secret is to test first",
        "sk-ant is the prefix of Anthropic keys",
        "msg_ab132d095c9d8b80b827b566 and toolu_01ABCDEFGHIJKLMNOPQRSTUV",
        "AKIA is how AWS access keys begin",
    ];

    #[test]
    fn every_secret_of_the_corpus_is_found() {
        for (kind, text) in SECRETS {
            let found = scan(text);
            assert!(found.iter().any(|f| f.kind == *kind), "{kind} not found in {text:?}: {found:?}");
            let (redacted, kinds) = redact_text(text);
            assert!(redacted.contains(&format!("[REDACTED:{kind}]")), "{redacted}");
            assert!(kinds.contains(kind));
        }
    }

    #[test]
    fn nothing_is_found_in_ids_hashes_images_or_placeholders() {
        for text in NOT_SECRETS {
            assert_eq!(scan(text), Vec::new(), "{text:?}");
        }
    }

    #[test]
    fn an_assignment_keeps_its_name_and_reasoning_tokens_stay() {
        let (redacted, _) = redact_text("DATABASE_PASSWORD=Tr0ub4dor&3xyz rest");
        assert_eq!(redacted, "DATABASE_PASSWORD=[REDACTED:assignment] rest");
        let mut thinking = Block::new(crate::model::Actor::Assistant, Kind::Thinking, "the key is sk-ant-api03-abcDEF1234567890_abcdefghijklmnop");
        thinking.reasoning = Some(crate::model::Reasoning { format: "anthropic-signature".into(), data: "sig".into(), scope: Default::default() });
        let mut untouched = Block::new(crate::model::Actor::Assistant, Kind::Thinking, "nothing here");
        untouched.reasoning = thinking.reasoning.clone();
        let mut blocks = vec![thinking, untouched];
        let report = redact_blocks(&mut blocks);
        assert_eq!(report.len(), 1);
        assert!(blocks[0].reasoning.is_none() && blocks[0].content.contains("[REDACTED:anthropic-key]"));
        assert_eq!(blocks[1].reasoning.as_ref().unwrap().data, "sig", "tokens are never altered");
    }

    #[test]
    fn findings_are_masked() {
        let mut block = Block::new(crate::model::Actor::User, Kind::Text, "key AKIAIOSFODNN7EXAMPLE");
        block.native = Some(crate::model::Native { runtime: "x".into(), data: serde_json::json!({"out": ["ghp_1234567890abcdefghijklmnopqrstuvwxyzAB"]}) });
        let found = scan_block(&block);
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].preview, "AKIA…LE (20 chars)");
        assert!(!found[1].preview.contains("567890"), "{}", found[1].preview);
    }
}
