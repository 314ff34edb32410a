//! The agent routes without a runtime to run: the bodies they refuse, the sessions they do not
//! know, what they answer when no agent runs, and a start whose executable is missing.

use axum::body::Body;
use axum::http::{header, Method, StatusCode};
use serde_json::json;
use sna_history::{Actor, Block, Kind};

use super::{call, keys, refused, Server};

const START_TAKES: &str = "provider, model, prompt, cwd, permissionMode, configDir, extraArgs, force, contextWindow";
const RESUME_TAKES: &str = "provider, model, prompt, permissionMode, configDir, extraArgs, contextWindow";

#[tokio::test]
async fn start_refuses_bad_bodies_naming_the_field() {
    let server = Server::new(None);
    let start = |body: String, message: String| {
        let server = &server;
        async move { refused(server, Method::POST, "/agent/start?session=s1", &body, &message).await }
    };
    start(r#"{"colour": 1}"#.into(), format!("colour: unknown field; this route takes {START_TAKES}")).await;
    start(r#"{"meta": {"a": 1}}"#.into(), format!("meta: unknown field (sna serve keeps no metadata); this route takes {START_TAKES}")).await;
    start(r#"{"model": 4}"#.into(), "model: expected a string".into()).await;
    start(r#"{"extraArgs": ["--a", 1]}"#.into(), "extraArgs[1]: expected a string".into()).await;
    start(r#"{"extraArgs": "--a"}"#.into(), "extraArgs: expected a list of strings".into()).await;
    for window in ["0", "-1", "1.5", "\"8\""] {
        start(format!(r#"{{"contextWindow": {window}}}"#), "contextWindow: expected a whole number above 0".into()).await;
    }
    start(r#"{"force": "yes"}"#.into(), "force: expected true or false".into()).await;
    start("[]".into(), "body: expected a JSON object".into()).await;
    // Bad values are named in the order the route reads them, whatever the body's order.
    start(r#"{"prompt": 1, "cwd": 2}"#.into(), "cwd: expected a string".into()).await;
    start(r#"{"force": 1, "contextWindow": 0}"#.into(), "contextWindow: expected a whole number above 0".into()).await;
    let (status, answer) = call(&server, Method::POST, "/agent/start", Some(r#"{"provider": "nope"}"#), None).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(answer["message"].as_str().is_some_and(|m| m.starts_with("provider: ") && m.contains("nope")), "{answer}");
    // Nothing was started, and no session was made.
    assert_eq!(call(&server, Method::GET, "/agent/status?session=s1", None, None).await.0, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_start_whose_executable_is_missing_is_404_and_no_agent_runs() {
    let server = Server::new(None);
    for runtime in ["claude-code", "codex"] {
        let body = json!({"provider": runtime, "cwd": "/home/dev/p"}).to_string();
        let (status, answer) = call(&server, Method::POST, "/agent/start?session=s1", Some(&body), None).await;
        assert_eq!((status, answer["code"].as_str()), (StatusCode::NOT_FOUND, Some("NOT_FOUND")), "{runtime}: {answer}");
        assert!(answer["message"].as_str().is_some_and(|m| m.contains("no such program")), "{answer}");
    }
    // Nothing is left of it: no agent, and no session (it was made for the start).
    assert_eq!(call(&server, Method::GET, "/agent/status?session=s1", None, None).await.0, StatusCode::NOT_FOUND);
    assert_eq!(call(&server, Method::GET, "/agent/sessions/s1", None, None).await.0, StatusCode::NOT_FOUND);
    for (path, body) in [("/agent/kill?session=s1", "{}"), ("/agent/interrupt?session=s1", "{}"), ("/agent/set-model?session=s1", r#"{"model": "m"}"#), ("/agent/compact?session=s1", "{}")] {
        assert_eq!(call(&server, Method::POST, path, Some(body), None).await, (StatusCode::OK, json!({"status": "no_session"})), "{path}");
    }
    for (path, body) in [("/agent/send?session=s1&wait=1", r#"{"message": "hi"}"#)] {
        let (status, answer) = call(&server, Method::POST, path, Some(body), None).await;
        assert_eq!((status, answer["code"].as_str()), (StatusCode::NOT_FOUND, Some("NOT_FOUND")), "{path}: {answer}");
    }
    // A session that was there is kept, with what it held; no agent is left for it.
    server.session("s2").append(Block::new(Actor::User, Kind::Text, "hello")).unwrap();
    let body = json!({"provider": "codex"}).to_string();
    assert_eq!(call(&server, Method::POST, "/agent/start?session=s2", Some(&body), None).await.0, StatusCode::NOT_FOUND);
    assert_eq!(call(&server, Method::GET, "/agent/sessions/s2", None, None).await.0, StatusCode::OK);
    let (status, state) = call(&server, Method::GET, "/agent/status?session=s2", None, None).await;
    assert_eq!((status, state["alive"].as_bool()), (StatusCode::OK, Some(false)), "{state}");
    assert!(server.app.host.agent("s2").is_none());
}

/// Issue 47: as root, Claude Code asked to bypass permissions exits at start, so a start answered
/// `started` and the first turn failed. The start (and a resume) is now a 400 naming the field and
/// what to do, before a resume file is written or a process started; as another user the start goes
/// on (and finds no executable here). Codex bypasses as root: the refusal is Claude Code's alone.
#[tokio::test]
async fn bypassing_permissions_in_claude_code_as_root_is_refused_before_anything_runs() {
    let server = Server::new(None);
    server.session("s3").append(Block::new(Actor::User, Kind::Text, "hello")).unwrap();
    let root = sna_test_support::running_as_root();
    for (path, body) in [
        ("/agent/start?session=s1", json!({"provider": "claude-code", "cwd": "/home/dev/p", "permissionMode": "bypassPermissions"})),
        ("/agent/start?session=s2", json!({"provider": "claude-code", "cwd": "/home/dev/p", "extraArgs": ["--dangerously-skip-permissions"]})),
        ("/agent/resume?session=s3", json!({"provider": "claude-code", "permissionMode": "bypassPermissions"})),
    ] {
        let (status, answer) = call(&server, Method::POST, path, Some(&body.to_string()), None).await;
        let message = answer["message"].as_str().unwrap_or("");
        if root {
            assert_eq!((status, answer["code"].as_str()), (StatusCode::BAD_REQUEST, Some("INVALID_INPUT")), "{path}: {answer}");
            assert!(message.starts_with("field \"permission_mode\": Claude Code refuses to bypass permissions when run as root"), "{message}");
            assert!(message.contains("IS_SANDBOX=1"), "{message}");
        } else {
            assert_eq!(status, StatusCode::NOT_FOUND, "{path}: {answer}");
        }
    }
    if root {
        assert!(!server.home.path().join(".claude").exists(), "the refused resume wrote Claude Code's file");
    }
    let body = json!({"provider": "codex", "cwd": "/home/dev/p", "permissionMode": "bypassPermissions"}).to_string();
    let (status, answer) = call(&server, Method::POST, "/agent/start?session=s4", Some(&body), None).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{answer}");
    assert!(answer["message"].as_str().is_some_and(|m| m.contains("no such program")), "{answer}");
}

#[tokio::test]
async fn send_needs_a_message_or_an_image_and_a_started_agent() {
    let server = Server::new(None);
    server.session("s1");
    let send = "/agent/send?session=s1";
    refused(&server, Method::POST, send, "{}", "message: give a message or an image").await;
    refused(&server, Method::POST, send, r#"{"message": ""}"#, "message: give a message or an image").await;
    refused(&server, Method::POST, send, r#"{"message": 1}"#, "message: expected a string").await;
    refused(&server, Method::POST, send, r#"{"text": "hi"}"#, "text: unknown field; this route takes message, images").await;
    refused(&server, Method::POST, send, r#"{"images": "x"}"#, "images: expected a list of {base64, mimeType}").await;
    refused(&server, Method::POST, send, r#"{"images": [3]}"#, "images[0].base64: expected base64 text").await;
    refused(&server, Method::POST, send, r#"{"images": [{"base64": "aGk="}]}"#, "images[0].mimeType: expected a mime type such as image/png").await;
    let (status, answer) = call(&server, Method::POST, send, Some(r#"{"images": [{"data": "aGk=", "mime": "image/png"}, {"base64": "%%", "mimeType": "image/png"}]}"#), None).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(answer["message"].as_str().is_some_and(|m| m.starts_with("images[1].base64: not base64")), "{answer}");
    let (status, answer) = call(&server, Method::POST, send, Some(r#"{"images": [{"base64": "data:text/plain;base64,aGk=", "mimeType": "text/plain"}]}"#), None).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(answer["message"].as_str().is_some_and(|m| m.starts_with("images[0].mimeType: ") && m.contains("not an image type")), "{answer}");
    // A good message to a session without an agent: 404, saying how to start one.
    for body in [r#"{"message": "hi"}"#, r#"{"images": [{"base64": "data:image/png;base64,aGk=", "mimeType": "image/png"}]}"#] {
        let (status, answer) = call(&server, Method::POST, &format!("{send}&wait=1"), Some(body), None).await;
        assert_eq!((status, answer["code"].as_str()), (StatusCode::NOT_FOUND, Some("NOT_FOUND")), "{body}");
        assert!(answer["message"].as_str().is_some_and(|m| m.contains("POST /agent/start")), "{answer}");
    }
}

#[tokio::test]
async fn resume_and_restart_refuse_bad_bodies_and_unknown_sessions() {
    let server = Server::new(None);
    for route in ["/agent/resume", "/agent/restart"] {
        let path = format!("{route}?session=s1");
        refused(&server, Method::POST, &path, r#"{"force": true}"#, &format!("force: unknown field; this route takes {RESUME_TAKES}")).await;
        refused(&server, Method::POST, &path, r#"{"cwd": "/home/dev"}"#, &format!("cwd: unknown field; this route takes {RESUME_TAKES}")).await;
        refused(&server, Method::POST, &path, r#"{"prompt": 1, "configDir": 2}"#, "configDir: expected a string").await;
        refused(&server, Method::POST, &path, r#"{"configDir": 1, "extraArgs": [2]}"#, "extraArgs[0]: expected a string").await;
        refused(&server, Method::POST, &path, r#"{"contextWindow": 0}"#, "contextWindow: expected a whole number above 0").await;
        let (status, answer) = call(&server, Method::POST, &path, Some("{}"), None).await;
        assert_eq!((status, answer["code"].as_str()), (StatusCode::NOT_FOUND, Some("NOT_FOUND")), "{route}: {answer}");
    }
    // A stored session, and a runtime whose executable is missing.
    server.session("s1").append(Block::new(Actor::User, Kind::Text, "hello")).unwrap();
    for route in ["/agent/resume", "/agent/restart"] {
        let (status, answer) = call(&server, Method::POST, &format!("{route}?session=s1"), Some(r#"{"provider": "codex"}"#), None).await;
        assert_eq!((status, answer["code"].as_str()), (StatusCode::NOT_FOUND, Some("NOT_FOUND")), "{route}: {answer}");
        assert!(answer["message"].as_str().is_some_and(|m| m.contains("cannot run Codex")), "{answer}");
    }
}

#[tokio::test]
async fn without_an_agent_kill_interrupt_compact_and_set_model_answer_no_session() {
    let server = Server::new(None);
    for (path, body) in [("/agent/kill", None), ("/agent/interrupt", None), ("/agent/compact", Some("{}")), ("/agent/compact?session=s2", Some(r#"{"instructions": "keep the plan"}"#)), ("/agent/set-model", Some(r#"{"model": "m"}"#))] {
        assert_eq!(call(&server, Method::POST, path, body, None).await, (StatusCode::OK, json!({"status": "no_session"})), "{path}");
    }
    refused(&server, Method::POST, "/agent/set-model", "{}", "model: expected the model's name").await;
    refused(&server, Method::POST, "/agent/set-model", r#"{"model": ""}"#, "model: expected the model's name").await;
    refused(&server, Method::POST, "/agent/set-model", r#"{"model": 5}"#, "model: expected a string").await;
    refused(&server, Method::POST, "/agent/set-model", r#"{"model": "m", "provider": "codex"}"#, "provider: unknown field; this route takes model").await;
    refused(&server, Method::POST, "/agent/compact", r#"{"instructions": []}"#, "instructions: expected a string").await;
    refused(&server, Method::POST, "/agent/compact", r#"{"summary": "x"}"#, "summary: unknown field; this route takes instructions").await;
}

#[tokio::test]
async fn status_of_a_stored_session_without_an_agent() {
    let server = Server::new(None);
    let (status, answer) = call(&server, Method::GET, "/agent/status?session=nobody", None, None).await;
    assert_eq!((status, answer["code"].as_str()), (StatusCode::NOT_FOUND, Some("NOT_FOUND")));
    let session = server.app.host.store().create_session(sna_history::NewSession::new().id("s1").cwd("/home/dev/p")).unwrap();
    session.append(Block::new(Actor::User, Kind::Text, "question")).unwrap();
    session.append(Block::new(Actor::Assistant, Kind::Text, "answer")).unwrap();
    session.append(Block::new(Actor::System, Kind::Text, "bookkeeping")).unwrap();
    let (status, state) = call(&server, Method::GET, "/agent/status?session=s1", None, None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        keys(&state),
        ["alive", "agentStatus", "sessionId", "eventCount", "messageCount", "lastMessage", "config", "provider", "model", "pid", "spawns", "nativeId", "cursor"]
    );
    assert_eq!(
        state,
        json!({
            "alive": false, "agentStatus": "disconnected", "sessionId": "s1", "eventCount": 0, "messageCount": 3,
            "lastMessage": {"seq": 1, "actor": "assistant", "content": "answer"},
            "config": {"provider": null, "model": null, "cwd": "/home/dev/p"},
            "provider": null, "model": null, "pid": null, "spawns": 0, "nativeId": null, "cursor": null
        })
    );
    // `default` when no session is named.
    assert_eq!(call(&server, Method::GET, "/agent/status", None, None).await.0, StatusCode::NOT_FOUND);
    server.session("default");
    assert_eq!(call(&server, Method::GET, "/agent/status", None, None).await.1["sessionId"], "default");
}

#[tokio::test]
async fn events_of_a_stored_session_stream_and_bad_cursors_are_400() {
    let server = Server::new(None);
    let (status, answer) = call(&server, Method::GET, "/agent/events?session=nobody", None, None).await;
    assert_eq!((status, answer["code"].as_str()), (StatusCode::NOT_FOUND, Some("NOT_FOUND")));
    server.session("s1");
    refused_get(&server, "/agent/events?session=s1&since=soon", "since: expected an event cursor (a number)").await;
    let request = Server::request(Method::GET, "/agent/events?session=s1").header("last-event-id", "x").body(Body::empty()).unwrap();
    let answer = server.send(request).await;
    assert_eq!((answer.status, answer.json()["message"].as_str()), (StatusCode::BAD_REQUEST, Some("since: expected an event cursor (a number)")));
    // A stored session can be subscribed to before an agent starts: the stream opens (its body,
    // which never ends, is not read here).
    let request = Server::request(Method::GET, "/agent/events?session=s1&since=0").body(Body::empty()).unwrap();
    let response = tower::ServiceExt::oneshot(server.router.clone(), request).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()), Some("text/event-stream"));
    assert_eq!(response.headers().get("x-accel-buffering").and_then(|v| v.to_str().ok()), Some("no"));
}

async fn refused_get(server: &Server, path: &str, message: &str) {
    let (status, answer) = call(server, Method::GET, path, None, None).await;
    assert_eq!((status, answer["code"].as_str(), answer["message"].as_str()), (StatusCode::BAD_REQUEST, Some("INVALID_INPUT"), Some(message)), "{path}");
}
