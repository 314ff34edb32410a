//! `/agent/sessions`: made, listed, read, renamed and deleted, and the bodies they refuse.

use axum::http::{Method, StatusCode};
use serde_json::json;

use super::{call, keys, refused, Server};

const SESSION_KEYS: [&str; 12] = ["id", "title", "label", "cwd", "createdAt", "updatedAt", "blockCount", "providers", "modelProviders", "models", "origin", "agent"];

#[tokio::test]
async fn sessions_made_listed_read_renamed_and_deleted() {
    let router = Server::new(None);
    let (status, info) = call(&router, Method::GET, "/info", None, None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(info["version"], env!("CARGO_PKG_VERSION"));
    let (status, made) = call(&router, Method::POST, "/agent/sessions", Some(r#"{"id": "s1", "title": "First"}"#), None).await;
    assert_eq!((status, made["id"].as_str(), made["title"].as_str()), (StatusCode::CREATED, Some("s1"), Some("First")));
    let (status, list) = call(&router, Method::GET, "/agent/sessions", None, None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(list["sessions"].as_array().unwrap().iter().map(|s| s["id"].clone()).collect::<Vec<_>>(), vec![json!("s1")]);
    assert_eq!(call(&router, Method::GET, "/agent/sessions/s1", None, None).await.1["blockCount"], 0);
    let (status, renamed) = call(&router, Method::PATCH, "/agent/sessions/s1", Some(r#"{"title": "Renamed"}"#), None).await;
    assert_eq!((status, renamed["title"].as_str()), (StatusCode::OK, Some("Renamed")));
    for path in ["/sessions/s1/blocks", "/sessions/s1/switches", "/sessions/s1/compactions", "/sessions/s1/usage"] {
        assert_eq!(call(&router, Method::GET, path, None, None).await.0, StatusCode::OK, "{path}");
    }
    assert!(call(&router, Method::DELETE, "/agent/sessions/s1", None, None).await.0.is_success());
    assert_eq!(call(&router, Method::GET, "/agent/sessions/s1", None, None).await.0, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_session_answers_every_field_in_order() {
    let server = Server::new(None);
    let (status, made) = call(&server, Method::POST, "/agent/sessions", Some(r#"{"id": "s1", "label": "Label", "title": "Title", "cwd": "/home/dev/p"}"#), None).await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(keys(&made), SESSION_KEYS);
    // `label` wins over `title`, and both keys answer the title.
    assert_eq!((made["title"].as_str(), made["label"].as_str(), made["cwd"].as_str()), (Some("Label"), Some("Label"), Some("/home/dev/p")));
    assert_eq!((made["providers"].clone(), made["agent"].clone(), made["origin"].clone()), (json!([]), json!(null), json!(null)));
    let (_, read) = call(&server, Method::GET, "/agent/sessions/s1", None, None).await;
    assert_eq!(read, made);
    let (_, list) = call(&server, Method::GET, "/agent/sessions", None, None).await;
    assert_eq!((keys(&list), list["sessions"][0].clone()), (vec!["sessions"], made));
    // An empty body is `{}`: a session with a new id.
    let (status, fresh) = call(&server, Method::POST, "/agent/sessions", Some("  "), None).await;
    assert_eq!(status, StatusCode::CREATED);
    assert!(fresh["id"].as_str().is_some_and(|id| id.len() == 36 && id != "s1"), "{fresh}");
    let (_, patched) = call(&server, Method::PATCH, "/agent/sessions/s1", Some(r#"{"cwd": "/home/dev/q", "title": null}"#), None).await;
    assert_eq!((patched["title"].as_str(), patched["cwd"].as_str()), (Some("Label"), Some("/home/dev/q")));
    let (status, deleted) = call(&server, Method::DELETE, "/agent/sessions/s1", None, None).await;
    assert_eq!((status, deleted), (StatusCode::OK, json!({"status": "deleted", "id": "s1"})));
    assert_eq!(keys(&call(&server, Method::DELETE, "/agent/sessions/s1", None, None).await.1), ["status", "code", "message"]);
}

#[tokio::test]
async fn a_taken_id_is_409() {
    let server = Server::new(None);
    server.session("taken");
    let (status, answer) = call(&server, Method::POST, "/agent/sessions", Some(r#"{"id": "taken"}"#), None).await;
    assert_eq!((status, answer["code"].as_str()), (StatusCode::CONFLICT, Some("CONFLICT")));
}

#[tokio::test]
async fn unknown_sessions_are_404() {
    let router = Server::new(None);
    for (method, path) in [
        (Method::GET, "/agent/sessions/nope"),
        (Method::GET, "/sessions/nope/blocks"),
        (Method::GET, "/sessions/nope/switches"),
        (Method::GET, "/sessions/nope/usage"),
        (Method::GET, "/sessions/nope/embeds/e1"),
        (Method::GET, "/nowhere"),
    ] {
        let (status, body) = call(&router, method, path, None, None).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}: {body}");
        assert_eq!(body["status"], "error", "{path}");
    }
    for (method, path, body) in [(Method::PATCH, "/agent/sessions/nope", Some(r#"{"title": "x"}"#)), (Method::DELETE, "/agent/sessions/nope", None)] {
        let (status, answer) = call(&router, method, path, body, None).await;
        assert_eq!((status, answer["code"].as_str()), (StatusCode::NOT_FOUND, Some("NOT_FOUND")), "{path}");
    }
}

#[tokio::test]
async fn bad_bodies_are_400_and_wrong_methods_405() {
    let router = Server::new(None);
    for body in ["not json", r#"{"title": 3}"#, "[1, 2]"] {
        let (status, answer) = call(&router, Method::POST, "/agent/sessions", Some(body), None).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {answer}");
        assert_eq!(answer["code"], "INVALID_INPUT", "{body}");
    }
    assert_eq!(call(&router, Method::PUT, "/info", None, None).await.0, StatusCode::METHOD_NOT_ALLOWED);
}

#[tokio::test]
async fn bad_bodies_name_the_field() {
    let server = Server::new(None);
    server.session("s1");
    let (post, patch) = ((Method::POST, "/agent/sessions"), (Method::PATCH, "/agent/sessions/s1"));
    refused(&server, post.0.clone(), post.1, r#"{"title": 3}"#, "title: expected a string").await;
    refused(&server, post.0.clone(), post.1, r#"{"id": ["a"]}"#, "id: expected a string").await;
    refused(&server, post.0.clone(), post.1, "[1, 2]", "body: expected a JSON object").await;
    refused(&server, post.0.clone(), post.1, r#""s1""#, "body: expected a JSON object").await;
    refused(&server, post.0.clone(), post.1, r#"{"colour": "red"}"#, "colour: unknown field; this route takes id, label, title, cwd").await;
    refused(&server, post.0.clone(), post.1, r#"{"meta": {}}"#, "meta: unknown field (sna serve keeps no metadata); this route takes id, label, title, cwd").await;
    refused(&server, patch.0.clone(), patch.1, r#"{"id": "s2"}"#, "id: unknown field; this route takes label, title, cwd").await;
    refused(&server, patch.0.clone(), patch.1, r#"{"cwd": false}"#, "cwd: expected a string").await;
    // An unknown key is named before a bad value; bad values in the order the route reads them.
    refused(&server, post.0.clone(), post.1, r#"{"title": 3, "x": 1}"#, "x: unknown field; this route takes id, label, title, cwd").await;
    refused(&server, post.0.clone(), post.1, r#"{"cwd": 1, "id": 2}"#, "id: expected a string").await;
    let (status, answer) = call(&server, post.0, post.1, Some("{\"id\": "), None).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(answer["message"].as_str().is_some_and(|m| m.starts_with("body: not JSON: ")), "{answer}");
}
