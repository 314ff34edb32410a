//! The server's own routes (`/info`, the pages, the login, the assets) and the guard in front of
//! every route: the token, the cookie, loopback names, other sites' origins; the router's 404 and
//! 405; bodies over the limit.

use axum::body::Body;
use axum::http::{header, Method, Request, StatusCode};
use serde_json::json;

use super::{call, keys, Server};

#[tokio::test]
async fn pages_and_assets() {
    let router = Server::new(None);
    router.session("any");
    for path in ["/", "/s/any", "/login", "/assets/style.css", "/assets/timeline.js", "/assets/app.js", "/assets/login.js"] {
        assert_eq!(call(&router, Method::GET, path, None, None).await.0, StatusCode::OK, "{path}");
    }
    let (status, body) = call(&router, Method::GET, "/assets/nope.js", None, None).await;
    assert_eq!((status, body["code"].as_str()), (StatusCode::NOT_FOUND, Some("NOT_FOUND")));
}

#[tokio::test]
async fn pages_say_what_they_are_and_load_only_this_server() {
    let server = Server::new(None);
    server.session("s1");
    for (path, kind) in [("/", "text/html"), ("/s/s1", "text/html"), ("/login", "text/html"), ("/assets/style.css", "text/css"), ("/assets/app.js", "text/javascript")] {
        let answer = server.answer(Method::GET, path, None, None).await;
        assert!(answer.header(header::CONTENT_TYPE).is_some_and(|t| t.starts_with(kind)), "{path}: {:?}", answer.headers);
        assert!(answer.header(header::CONTENT_SECURITY_POLICY).is_some_and(|p| p.starts_with("default-src 'self'")), "{path}");
        assert_eq!(answer.header(header::X_CONTENT_TYPE_OPTIONS), Some("nosniff"), "{path}");
    }
    // `/` and `/s/{id}` are the same app shell.
    assert_eq!(server.answer(Method::GET, "/", None, None).await.body, server.answer(Method::GET, "/s/s1", None, None).await.body);
}

/// A page as a browser asks for it.
async fn browse(server: &Server, path: &str) -> super::Answer {
    let request = Server::request(Method::GET, path).header(header::ACCEPT, "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8");
    server.send(request.body(Body::empty()).unwrap()).await
}

/// Issue 47: `/s/<an id the store does not hold>` served the app shell, which showed an empty
/// session marked "disconnected". It is a 404 page that says there is no such session (the
/// error's JSON for a client that does not take HTML).
#[tokio::test]
async fn an_unknown_session_page_is_a_404_that_says_so() {
    let server = Server::new(None);
    let answer = browse(&server, "/s/no%3Cb%3Ebody").await;
    assert_eq!(answer.status, StatusCode::NOT_FOUND);
    assert!(answer.header(header::CONTENT_TYPE).is_some_and(|t| t.starts_with("text/html")), "{:?}", answer.headers);
    assert!(answer.header(header::CONTENT_SECURITY_POLICY).is_some_and(|p| p.starts_with("default-src 'self'")));
    let page = String::from_utf8(answer.body.to_vec()).unwrap();
    assert!(page.contains("<title>No such session · sna</title>"), "{page}");
    assert!(page.contains("<h1>No such session</h1>"), "{page}");
    // The id is shown as text, never as markup.
    assert!(page.contains("<code>no&lt;b&gt;body</code>") && !page.contains("<b>"), "{page}");
    assert!(page.contains(r#"<a href="/">"#), "a way back to the list: {page}");
    assert!(!page.contains("/assets/session.js"), "not the app shell: {page}");
    let (status, body) = call(&server, Method::GET, "/s/nobody", None, None).await;
    assert_eq!((status, body["code"].as_str()), (StatusCode::NOT_FOUND, Some("NOT_FOUND")), "{body}");
    assert!(body["message"].as_str().is_some_and(|m| m.contains("nobody")), "{body}");
    // Once stored, the id's page is the app shell.
    server.session("somebody");
    let answer = browse(&server, "/s/somebody").await;
    assert_eq!((answer.status, &answer.body), (StatusCode::OK, &browse(&server, "/").await.body));
    // With a token, a browser without it is sent to the login first, whether the id exists or not.
    let guarded = Server::new(Some("secret"));
    let answer = browse(&guarded, "/s/nobody").await;
    assert_eq!((answer.status, answer.header(header::LOCATION)), (StatusCode::SEE_OTHER, Some("/login")));
    assert_eq!(guarded.answer(Method::GET, "/s/nobody", None, Some("secret")).await.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn info_names_the_version_the_auth_and_every_runtime() {
    let server = Server::new(None);
    let (status, info) = call(&server, Method::GET, "/info", None, None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(keys(&info), ["version", "auth", "runtimes"]);
    assert_eq!((info["version"].as_str(), info["auth"].as_bool()), (Some(env!("CARGO_PKG_VERSION")), Some(false)));
    let runtimes = info["runtimes"].as_array().unwrap();
    assert_eq!(runtimes[0], json!({"id": "claude-code", "name": "Claude Code", "available": false}));
    let ids: Vec<&str> = runtimes.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(ids, sna_history::Runtime::ALL.iter().map(|r| r.as_str()).collect::<Vec<_>>());
    let server = Server::new(Some("secret"));
    assert_eq!(call(&server, Method::GET, "/info", None, Some("secret")).await.1["auth"], true);
}

#[tokio::test]
async fn a_token_is_needed_where_one_is_set() {
    let router = Server::new(Some("secret"));
    let (status, body) = call(&router, Method::GET, "/info", None, None).await;
    assert_eq!((status, body["code"].as_str()), (StatusCode::UNAUTHORIZED, Some("UNAUTHORIZED")));
    assert_eq!(call(&router, Method::GET, "/info", None, Some("wrong")).await.0, StatusCode::UNAUTHORIZED);
    assert_eq!(call(&router, Method::GET, "/info", None, Some("secret")).await.0, StatusCode::OK);
    // The login page and what it loads are open; other pages send the browser to it.
    assert_eq!(call(&router, Method::GET, "/login", None, None).await.0, StatusCode::OK);
    assert_eq!(call(&router, Method::GET, "/", None, None).await.0, StatusCode::SEE_OTHER);
}

#[tokio::test]
async fn with_a_token_every_api_route_and_other_asset_is_401() {
    let server = Server::new(Some("secret"));
    for (method, path) in [
        (Method::GET, "/openapi.json"),
        (Method::GET, "/agent/sessions"),
        (Method::POST, "/agent/sessions"),
        (Method::GET, "/agent/sessions/s1"),
        (Method::POST, "/agent/start"),
        (Method::POST, "/agent/kill"),
        (Method::GET, "/agent/status"),
        (Method::GET, "/agent/events"),
        (Method::GET, "/sessions/s1/blocks"),
        (Method::GET, "/assets/app.js"),
    ] {
        let (status, body) = call(&server, method, path, None, None).await;
        assert_eq!((status, body["code"].as_str()), (StatusCode::UNAUTHORIZED, Some("UNAUTHORIZED")), "{path}");
    }
    for path in ["/login", "/assets/login.js", "/assets/style.css"] {
        assert_eq!(call(&server, Method::GET, path, None, None).await.0, StatusCode::OK, "{path}");
    }
    let answer = server.answer(Method::GET, "/s/s1", None, None).await;
    assert_eq!((answer.status, answer.header(header::LOCATION)), (StatusCode::SEE_OTHER, Some("/login")));
}

/// The cookie of an answer that sets one, as a request sends it back.
fn cookie(answer: &super::Answer) -> String {
    let set = answer.header(header::SET_COOKIE).expect("a cookie");
    assert!(set.contains("HttpOnly") && set.contains("SameSite=Strict"), "{set}");
    set.split(';').next().unwrap().to_string()
}

async fn with_cookie(server: &Server, path: &str, cookie: &str) -> StatusCode {
    server.send(Server::request(Method::GET, path).header(header::COOKIE, cookie).body(Body::empty()).unwrap()).await.status
}

async fn login(server: &Server, form: &str) -> super::Answer {
    let request = Server::request(Method::POST, "/login").header(header::CONTENT_TYPE, "application/x-www-form-urlencoded");
    server.send(request.body(Body::from(form.to_string())).unwrap()).await
}

#[tokio::test]
async fn the_login_and_the_token_in_a_page_link_set_the_cookie() {
    let server = Server::new(Some("s3cret+"));
    let answer = login(&server, "token=s3cret%2B").await;
    assert_eq!((answer.status, answer.header(header::LOCATION)), (StatusCode::SEE_OTHER, Some("/")));
    let from_form = cookie(&answer);
    assert_eq!(with_cookie(&server, "/info", &from_form).await, StatusCode::OK);
    assert_eq!(with_cookie(&server, "/", &from_form).await, StatusCode::OK);
    assert_eq!(with_cookie(&server, "/info", "sna_session=forged").await, StatusCode::UNAUTHORIZED);

    let answer = login(&server, "token=wrong").await;
    assert_eq!((answer.status, answer.header(header::LOCATION)), (StatusCode::SEE_OTHER, Some("/login?failed=1")));
    assert!(answer.header(header::SET_COOKIE).is_none());

    // `/s/{id}?token=…` once: the cookie, and the same page without the token.
    let answer = server.answer(Method::GET, "/s/s1?token=s3cret%2B", None, None).await;
    assert_eq!((answer.status, answer.header(header::LOCATION)), (StatusCode::SEE_OTHER, Some("/s/s1")));
    assert_eq!(with_cookie(&server, "/agent/sessions", &cookie(&answer)).await, StatusCode::OK);
    let answer = server.answer(Method::GET, "/?token=wrong", None, None).await;
    assert_eq!((answer.status, answer.header(header::LOCATION)), (StatusCode::SEE_OTHER, Some("/login")));
}

#[tokio::test]
async fn the_login_of_a_server_without_a_token_goes_home_and_a_large_form_is_413() {
    let server = Server::new(None);
    let answer = login(&server, "token=anything").await;
    assert_eq!((answer.status, answer.header(header::LOCATION)), (StatusCode::SEE_OTHER, Some("/")));
    let server = Server::new(Some("secret"));
    let answer = login(&server, &format!("token={}", "x".repeat(64 * 1024 + 1))).await;
    assert_eq!((answer.status, answer.json()["code"].as_str()), (StatusCode::PAYLOAD_TOO_LARGE, Some("TOO_LARGE")));
}

#[tokio::test]
async fn a_host_that_is_not_loopback_is_403() {
    let router = Server::new(None);
    let request = Request::builder().uri("/info").header(header::HOST, "evil.example:7777").body(Body::empty()).unwrap();
    assert_eq!(router.send(request).await.status, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn every_route_refuses_a_host_that_is_not_loopback() {
    let server = Server::new(None);
    for (method, path) in [(Method::GET, "/"), (Method::GET, "/openapi.json"), (Method::POST, "/agent/sessions"), (Method::GET, "/sessions/s1/usage"), (Method::POST, "/login")] {
        let request = Request::builder().method(method).uri(path).header(header::HOST, "rebound.example").body(Body::empty()).unwrap();
        let answer = server.send(request).await;
        assert_eq!((answer.status, answer.json()["code"].as_str()), (StatusCode::FORBIDDEN, Some("FORBIDDEN")), "{path}");
    }
    // `localhost` and IPv6 loopback are loopback names.
    for host in ["localhost:7777", "[::1]:7777"] {
        let request = Request::builder().uri("/info").header(header::HOST, host).body(Body::empty()).unwrap();
        assert_eq!(server.send(request).await.status, StatusCode::OK, "{host}");
    }
}

#[tokio::test]
async fn a_mutating_request_from_another_origin_is_403() {
    let server = Server::new(None);
    let from = |origin: &str, method: Method, path: &str| {
        Server::request(method, path).header(header::ORIGIN, origin).header(header::CONTENT_TYPE, "application/json").body(Body::from("{}")).unwrap()
    };
    for (method, path) in [(Method::POST, "/agent/sessions"), (Method::POST, "/agent/kill"), (Method::DELETE, "/agent/sessions/s1"), (Method::PATCH, "/agent/sessions/s1")] {
        let answer = server.send(from("http://evil.example", method, path)).await;
        assert_eq!((answer.status, answer.json()["code"].as_str()), (StatusCode::FORBIDDEN, Some("FORBIDDEN")), "{path}");
    }
    // The server's own origin may; a read from anywhere may.
    assert_eq!(server.send(from("http://127.0.0.1:7777", Method::POST, "/agent/sessions")).await.status, StatusCode::CREATED);
    assert_eq!(server.send(from("http://evil.example", Method::GET, "/agent/sessions")).await.status, StatusCode::OK);
}

#[tokio::test]
async fn unknown_routes_are_404_and_other_methods_405() {
    let server = Server::new(None);
    for path in ["/nowhere", "/agent", "/agent/sessions/s1/more", "/sessions/s1", "/assets"] {
        let (status, body) = call(&server, Method::GET, path, None, None).await;
        assert_eq!((status, body["code"].as_str(), body["message"].as_str()), (StatusCode::NOT_FOUND, Some("NOT_FOUND"), Some("no such route")), "{path}");
    }
    for (method, path) in [(Method::PUT, "/info"), (Method::GET, "/agent/start"), (Method::DELETE, "/agent/start"), (Method::POST, "/sessions/s1/blocks"), (Method::PUT, "/agent/sessions")] {
        let (status, body) = call(&server, method, path, None, None).await;
        assert_eq!((status, body["code"].as_str()), (StatusCode::METHOD_NOT_ALLOWED, Some("METHOD_NOT_ALLOWED")), "{path}");
    }
}

#[tokio::test]
async fn a_body_over_the_limit_is_413() {
    let server = Server::new(None);
    let big = format!("{{\"title\": \"{}\"}}", "x".repeat(1 << 20));
    for (method, path) in [(Method::POST, "/agent/sessions"), (Method::PATCH, "/agent/sessions/s1"), (Method::POST, "/agent/start"), (Method::POST, "/agent/send"), (Method::POST, "/agent/compact")]
        .into_iter()
        .chain([(Method::POST, "/agent/resume"), (Method::POST, "/agent/restart"), (Method::POST, "/agent/set-model")])
    {
        let (status, body) = call(&server, method, path, Some(&big), None).await;
        assert_eq!((status, body["code"].as_str()), (StatusCode::PAYLOAD_TOO_LARGE, Some("TOO_LARGE")), "{path}");
        assert_eq!(body["message"], format!("the body is larger than {} bytes", 1 << 20));
    }
}
