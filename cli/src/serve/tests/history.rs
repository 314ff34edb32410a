//! The history routes over a session built through core's API: its blocks, its native export,
//! an embed, its switches, compactions and usage, and their errors.

use axum::http::{header, Method, StatusCode};
use serde_json::json;
use sna_history::{Actor, Block, Embed, Kind};

use super::{call, keys, Server};

/// A PNG's first bytes: enough for an embed.
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n0000";

/// `s1`: a user's message with an image, a Claude Code answer, then a Codex one (a switch).
fn history(server: &Server) {
    let session = server.session("s1");
    let mut user = Block::new(Actor::User, Kind::Text, "look ![shot](embed://e1)");
    user.embeds.insert("e1".into(), Embed::from_bytes("image/png", Some("shot".into()), PNG.to_vec()));
    let mut first = Block::new(Actor::Assistant, Kind::Text, "first answer");
    (first.provider, first.model) = (Some("claude-code".into()), Some("claude-sonnet-4-5".into()));
    let mut second = Block::new(Actor::Assistant, Kind::Text, "second answer");
    (second.provider, second.model) = (Some("codex".into()), Some("gpt-5".into()));
    session.extend([user, first, second]).unwrap();
}

#[tokio::test]
async fn blocks_all_or_after_a_seq() {
    let server = Server::new(None);
    history(&server);
    let (status, answer) = call(&server, Method::GET, "/sessions/s1/blocks", None, None).await;
    assert_eq!((status, keys(&answer)), (StatusCode::OK, vec!["sessionId", "blocks"]));
    assert_eq!(answer["sessionId"], "s1");
    let contents: Vec<&str> = answer["blocks"].as_array().unwrap().iter().map(|b| b["content"].as_str().unwrap()).collect();
    assert_eq!(contents, ["look ![shot](embed://e1)", "first answer", "second answer"]);
    assert_eq!(answer["blocks"][1]["provider"], "claude-code");
    let (_, after) = call(&server, Method::GET, "/sessions/s1/blocks?since_seq=1", None, None).await;
    assert_eq!(after["blocks"].as_array().unwrap().iter().map(|b| b["seq"].as_u64().unwrap()).collect::<Vec<_>>(), [2]);
    let (status, answer) = call(&server, Method::GET, "/sessions/s1/blocks?since_seq=one", None, None).await;
    assert_eq!((status, answer["message"].as_str()), (StatusCode::BAD_REQUEST, Some("since_seq: expected a block seq (a number)")));
}

#[tokio::test]
async fn native_exports_in_the_runtime_shape() {
    let server = Server::new(None);
    history(&server);
    let answer = server.answer(Method::GET, "/sessions/s1/native/claude-code", None, None).await;
    assert_eq!((answer.status, answer.header(header::CONTENT_TYPE)), (StatusCode::OK, Some("application/x-ndjson; charset=utf-8")));
    let text = String::from_utf8(answer.body.to_vec()).unwrap();
    let records: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert!(records.len() >= 3 && text.contains("first answer") && text.contains("second answer"), "{text}");
    let answer = server.answer(Method::GET, "/sessions/s1/native/codex?format=rollout", None, None).await;
    assert_eq!((answer.status, answer.header(header::CONTENT_TYPE)), (StatusCode::OK, Some("application/x-ndjson; charset=utf-8")));
    let (status, answer) = call(&server, Method::GET, "/sessions/s1/native/codex?format=nope", None, None).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(answer["message"].as_str().is_some_and(|m| m.contains("unknown format \"nope\" for codex") && m.contains("rollout")), "{answer}");
    let (status, answer) = call(&server, Method::GET, "/sessions/s1/native/notepad", None, None).await;
    assert_eq!((status, answer["code"].as_str()), (StatusCode::NOT_FOUND, Some("NOT_FOUND")));
    assert!(answer["message"].as_str().is_some_and(|m| m.contains("notepad")), "{answer}");
    let (status, answer) = call(&server, Method::GET, "/sessions/nobody/native/codex", None, None).await;
    assert_eq!((status, answer["code"].as_str()), (StatusCode::NOT_FOUND, Some("NOT_FOUND")));
}

#[tokio::test]
async fn an_embed_is_its_bytes_never_a_page() {
    let server = Server::new(None);
    history(&server);
    let answer = server.answer(Method::GET, "/sessions/s1/embeds/e1", None, None).await;
    assert_eq!((answer.status, answer.body.as_ref()), (StatusCode::OK, PNG));
    assert_eq!(answer.header(header::CONTENT_TYPE), Some("image/png"));
    assert_eq!(answer.header(header::X_CONTENT_TYPE_OPTIONS), Some("nosniff"));
    assert!(answer.header(header::CONTENT_SECURITY_POLICY).is_some_and(|p| p.starts_with("sandbox;")));
    for path in ["/sessions/s1/embeds/e2", "/sessions/nobody/embeds/e1"] {
        let (status, answer) = call(&server, Method::GET, path, None, None).await;
        assert_eq!((status, answer["code"].as_str()), (StatusCode::NOT_FOUND, Some("NOT_FOUND")), "{path}");
    }
}

#[tokio::test]
async fn switches_compactions_and_usage() {
    let server = Server::new(None);
    history(&server);
    let (status, answer) = call(&server, Method::GET, "/sessions/s1/switches", None, None).await;
    assert_eq!((status, keys(&answer)), (StatusCode::OK, vec!["sessionId", "switches"]));
    let switches = answer["switches"].as_array().unwrap();
    assert_eq!(switches.iter().map(|s| s["seq"].as_u64().unwrap()).collect::<Vec<_>>(), [1, 2]);
    assert_eq!(keys(&switches[1]), ["seq", "block_id", "from", "to"]);
    assert_eq!((switches[1]["from"]["provider"].clone(), switches[1]["to"]["model"].clone()), (json!("claude-code"), json!("gpt-5")));
    let (status, answer) = call(&server, Method::GET, "/sessions/s1/compactions", None, None).await;
    assert_eq!((status, answer), (StatusCode::OK, json!({"sessionId": "s1", "compactions": []})));
    let (status, answer) = call(&server, Method::GET, "/sessions/s1/usage", None, None).await;
    assert_eq!((status, keys(&answer)), (StatusCode::OK, vec!["responses", "totals", "prices"]));
    for path in ["/sessions/nobody/switches", "/sessions/nobody/compactions", "/sessions/nobody/usage"] {
        let (status, answer) = call(&server, Method::GET, path, None, None).await;
        assert_eq!((status, answer["code"].as_str()), (StatusCode::NOT_FOUND, Some("NOT_FOUND")), "{path}");
    }
}
