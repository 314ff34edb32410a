//! The router of `sna serve` over an in-memory store, one request at a time
//! (`tower::ServiceExt::oneshot`): the pages and assets, the history and session routes, and the
//! error answers (404, 400, 401, 403, 405). The real-CLI tests in tests/conformance drive the
//! agent routes with runtimes.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::http::{header, Method, Request, StatusCode};
use serde_json::{json, Value};
use sna_history::host::{Host, HostOptions};
use sna_history::Store;
use tower::ServiceExt;

use super::{api, App};

fn app(token: Option<&str>) -> axum::Router {
    let store = Store::open_in_memory().unwrap();
    let host = Host::new(store, HostOptions { bins: BTreeMap::new(), env: BTreeMap::new(), home: None });
    let app = App {
        host,
        token: token.map(str::to_string),
        cookies: Mutex::new(HashSet::new()),
        pending: Mutex::new(HashMap::new()),
        max_body: 1 << 20,
        loopback: true,
    };
    api::router(Arc::new(app))
}

/// One request; the status and the body (JSON when it is JSON, else a string).
async fn call(router: &axum::Router, method: Method, path: &str, body: Option<&str>, token: Option<&str>) -> (StatusCode, Value) {
    let mut request = Request::builder().method(method).uri(path).header(header::HOST, "127.0.0.1:7777");
    if body.is_some() {
        request = request.header(header::CONTENT_TYPE, "application/json");
    }
    if let Some(token) = token {
        request = request.header(header::AUTHORIZATION, format!("Bearer {token}"));
    }
    let request = request.body(body.map_or_else(Body::empty, |b| Body::from(b.to_string()))).unwrap();
    let response = router.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
    let text = String::from_utf8_lossy(&bytes).into_owned();
    (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
}

#[tokio::test]
async fn pages_and_assets() {
    let router = app(None);
    for path in ["/", "/s/any", "/login", "/assets/style.css", "/assets/timeline.js", "/assets/app.js", "/assets/login.js"] {
        assert_eq!(call(&router, Method::GET, path, None, None).await.0, StatusCode::OK, "{path}");
    }
    let (status, body) = call(&router, Method::GET, "/assets/nope.js", None, None).await;
    assert_eq!((status, body["code"].as_str()), (StatusCode::NOT_FOUND, Some("NOT_FOUND")));
}

#[tokio::test]
async fn sessions_made_listed_read_renamed_and_deleted() {
    let router = app(None);
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
async fn unknown_sessions_are_404() {
    let router = app(None);
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
}

#[tokio::test]
async fn bad_bodies_are_400_and_wrong_methods_405() {
    let router = app(None);
    for body in ["not json", r#"{"title": 3}"#, "[1, 2]"] {
        let (status, answer) = call(&router, Method::POST, "/agent/sessions", Some(body), None).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {answer}");
        assert_eq!(answer["code"], "INVALID_INPUT", "{body}");
    }
    assert_eq!(call(&router, Method::PUT, "/info", None, None).await.0, StatusCode::METHOD_NOT_ALLOWED);
}

#[tokio::test]
async fn a_token_is_needed_where_one_is_set() {
    let router = app(Some("secret"));
    let (status, body) = call(&router, Method::GET, "/info", None, None).await;
    assert_eq!((status, body["code"].as_str()), (StatusCode::UNAUTHORIZED, Some("UNAUTHORIZED")));
    assert_eq!(call(&router, Method::GET, "/info", None, Some("wrong")).await.0, StatusCode::UNAUTHORIZED);
    assert_eq!(call(&router, Method::GET, "/info", None, Some("secret")).await.0, StatusCode::OK);
    // The login page and what it loads are open; other pages send the browser to it.
    assert_eq!(call(&router, Method::GET, "/login", None, None).await.0, StatusCode::OK);
    assert_eq!(call(&router, Method::GET, "/", None, None).await.0, StatusCode::SEE_OTHER);
}

#[tokio::test]
async fn a_host_that_is_not_loopback_is_403() {
    let router = app(None);
    let request = Request::builder().uri("/info").header(header::HOST, "evil.example:7777").body(Body::empty()).unwrap();
    assert_eq!(router.oneshot(request).await.unwrap().status(), StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn the_ui_markdown_route_renders_each_text() {
    let router = app(None);
    let body = r###"{"texts": ["## Title\n\n**bold** <b>x</b>", "", "![a](embed://e1)"]}"###;
    let (status, answer) = call(&router, Method::POST, "/ui/markdown", Some(body), None).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let expected = json!({"html": [
        "<h2>Title</h2>\n<p><strong>bold</strong> &lt;b&gt;x&lt;/b&gt;</p>",
        "",
        "<p><span class=\"embed-ref\" data-embed=\"e1\">a</span></p>",
    ]});
    assert_eq!(answer, expected);
    // Bad bodies name what is wrong; a token is needed where one is set.
    for (body, says) in [("{}", "missing field `texts`"), (r#"{"texts": [1]}"#, "expected a string"), (r#"{"texts": [], "x": 1}"#, "unknown field `x`"), ("nope", "expected")] {
        let (status, answer) = call(&router, Method::POST, "/ui/markdown", Some(body), None).await;
        assert_eq!((status, answer["code"].as_str()), (StatusCode::BAD_REQUEST, Some("INVALID_INPUT")), "{body}");
        let message = answer["message"].as_str().unwrap();
        assert!(message.starts_with("body: ") && message.contains(says), "{body}: {message}");
    }
    assert_eq!(call(&router, Method::GET, "/ui/markdown", None, None).await.0, StatusCode::METHOD_NOT_ALLOWED);
    let guarded = app(Some("secret"));
    assert_eq!(call(&guarded, Method::POST, "/ui/markdown", Some(r#"{"texts": []}"#), None).await.0, StatusCode::UNAUTHORIZED);
    assert_eq!(call(&guarded, Method::POST, "/ui/markdown", Some(r#"{"texts": []}"#), Some("secret")).await.1, json!({"html": []}));
}
