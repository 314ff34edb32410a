//! Odd ids and odd requests on every route: `..`, percent-encoded slashes and dots, NUL, bytes
//! that are not UTF-8, a 10,000-character id; malformed tokens and cookies. Each answer is the
//! documented page or a 4xx with the JSON error shape, never a 500 and never a file of the
//! machine.

use axum::body::Body;
use axum::http::{header, Method, StatusCode};

use super::{Answer, Server};

/// The odd ids, as they appear in a URL (already percent-encoded where they are).
fn odd_ids() -> Vec<String> {
    let mut ids: Vec<String> = ["..", "%2e%2e", "..%2F..%2FCargo.toml", "..%2f..%2f..%2f..%2fetc%2fpasswd", "a%2Fb", "%2F", "%00", "a%00b", "%FF%FE", "%", "%zz", "a%20b"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    ids.push("x".repeat(10_000));
    ids
}

/// Every route with `{id}` where an id goes (in the path or as `?session=`).
fn routes(id: &str) -> Vec<(Method, String)> {
    let mut routes = vec![
        (Method::GET, format!("/s/{id}")),
        (Method::GET, format!("/assets/{id}")),
        (Method::GET, format!("/agent/sessions/{id}")),
        (Method::PATCH, format!("/agent/sessions/{id}")),
        (Method::DELETE, format!("/agent/sessions/{id}")),
        (Method::GET, format!("/sessions/{id}/blocks")),
        (Method::GET, format!("/sessions/{id}/native/codex")),
        (Method::GET, format!("/sessions/s1/native/{id}")),
        (Method::GET, format!("/sessions/{id}/embeds/{id}")),
        (Method::GET, format!("/sessions/s1/embeds/{id}")),
        (Method::GET, format!("/sessions/{id}/usage")),
        (Method::GET, format!("/sessions/{id}/switches")),
        (Method::GET, format!("/sessions/{id}/compactions")),
        (Method::GET, format!("/agent/status?session={id}")),
        (Method::GET, format!("/agent/events?session={id}")),
        (Method::GET, format!("/agent/events?session=s1&since={id}")),
        (Method::GET, format!("/sessions/s1/blocks?since_seq={id}")),
    ];
    for route in ["start", "send", "resume", "restart", "interrupt", "kill", "compact", "set-model"] {
        routes.push((Method::POST, format!("/agent/{route}?session={id}")));
    }
    routes
}

/// A 4xx with `{status: "error", code, message}`, or the app shell of a page; never what a file
/// of this checkout or of the machine holds.
fn check(method: &Method, path: &str, answer: &Answer) {
    let shown = &path[..path.len().min(80)];
    let text = String::from_utf8_lossy(&answer.body);
    assert!(!text.contains("[workspace]") && !text.contains("root:x:0:0"), "{method} {shown}: a file's contents");
    if answer.status.is_success() {
        // The app shell, or the documented answer of stopping an agent there is none of.
        let no_agent = path.starts_with("/agent/") && *method == Method::POST && answer.json()["status"] == "no_session";
        assert!(path.starts_with("/s/") || no_agent, "{method} {shown} answered {}: {text:.200}", answer.status);
        return;
    }
    assert!(answer.status.is_client_error(), "{method} {shown} answered {}: {text:.200}", answer.status);
    let body = answer.json();
    assert_eq!(body["status"], "error", "{method} {shown} answered {} {text:.200}", answer.status);
    assert!(body["code"].is_string() && body["message"].is_string(), "{method} {shown}: {body}");
    assert!(answer.header(header::CONTENT_TYPE).is_some_and(|t| t.starts_with("application/json")), "{method} {shown}");
}

#[tokio::test]
async fn odd_ids_in_every_route_are_4xx_with_the_error_shape() {
    for id in odd_ids() {
        let reads = Server::new(None);
        reads.session("s1");
        for (method, path) in routes(&id) {
            // A change gets a server of its own: a start makes its session (as for any id the
            // store takes), which a later request would find.
            let own;
            let server = if method == Method::GET {
                &reads
            } else {
                own = Server::new(None);
                own.session("s1");
                &own
            };
            let body = (method != Method::GET && method != Method::DELETE).then_some("{}");
            let request = Server::request(method.clone(), &path).header(header::CONTENT_TYPE, "application/json");
            let answer = server.send(request.body(body.map_or_else(Body::empty, Body::from)).unwrap()).await;
            check(&method, &path, &answer);
        }
    }
}

#[tokio::test]
async fn traversal_in_the_assets_route_never_reaches_a_file() {
    let server = Server::new(None);
    for path in ["/assets/..%2F..%2FCargo.toml", "/assets/%2e%2e/%2e%2e/Cargo.toml", "/assets/../../Cargo.toml", "/assets/..%5c..%5cCargo.toml", "/assets/style.css%00.js", "/assets//etc/passwd"] {
        let answer = server.answer(Method::GET, path, None, None).await;
        check(&Method::GET, path, &answer);
        assert!(answer.status.is_client_error(), "{path}: {}", answer.status);
    }
}

#[tokio::test]
async fn malformed_tokens_and_cookies_are_401_with_the_error_shape() {
    let server = Server::new(Some("secret"));
    let long = format!("Bearer {}", "s".repeat(10_000));
    let authorizations: Vec<&[u8]> = vec![b"Bearer", b"Bearer ", b"bearer secret", b"Basic c2VjcmV0", b"Bearer secret\xff", b"Bearer \xc3\x28", b"Bearersecret", b"Bearer  secret x", long.as_bytes()];
    let cookies: Vec<&[u8]> = vec![b"sna_session", b"sna_session=", b";;;", b"=secret", b"sna_session=\xff\xfe", b"sna_session=a; sna_session=b", b"other=1; sna_session"];
    let mut requests = Vec::new();
    for value in authorizations {
        requests.push((header::AUTHORIZATION, value));
    }
    for value in cookies {
        requests.push((header::COOKIE, value));
    }
    for (name, value) in requests {
        for path in ["/info", "/agent/sessions", "/agent/events?session=s1", "/sessions/s1/blocks"] {
            let value = header::HeaderValue::from_bytes(value).unwrap();
            let answer = server.send(Server::request(Method::GET, path).header(name.clone(), value.clone()).body(Body::empty()).unwrap()).await;
            assert_eq!(answer.status, StatusCode::UNAUTHORIZED, "{path} {name}: {value:?}");
            check(&Method::GET, path, &answer);
        }
    }
}

#[tokio::test]
async fn odd_hosts_and_origins_are_403_with_the_error_shape() {
    let server = Server::new(None);
    let hosts: Vec<&[u8]> = vec![b"", b"127.0.0.1:7777\xff", b"[::1", b"]", b":7777", b"localhost.:7777", &[b'a'; 8000]];
    for host in hosts {
        let value = header::HeaderValue::from_bytes(host).unwrap();
        let request = axum::http::Request::builder().uri("/info").header(header::HOST, value.clone()).body(Body::empty()).unwrap();
        let answer = server.send(request).await;
        assert_eq!(answer.status, StatusCode::FORBIDDEN, "{value:?}");
        check(&Method::GET, "/info", &answer);
    }
    let origin = header::HeaderValue::from_bytes(b"http://127.0.0.1:7777\xff").unwrap();
    let request = Server::request(Method::POST, "/agent/sessions").header(header::ORIGIN, origin).body(Body::empty()).unwrap();
    let answer = server.send(request).await;
    assert_eq!(answer.status, StatusCode::FORBIDDEN);
    check(&Method::POST, "/agent/sessions", &answer);
}

#[tokio::test]
async fn heads_over_the_limits_are_431_with_the_error_shape_before_the_token_is_read() {
    use crate::serve::api::{MAX_HEAD, MAX_HEADERS};
    let server = Server::new(Some("secret"));
    let mut many = Server::request(Method::GET, "/info");
    for i in 0..MAX_HEADERS {
        many = many.header(format!("x-{i}"), "v");
    }
    let answer = server.send(many.body(Body::empty()).unwrap()).await;
    assert_eq!(answer.status, StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE);
    check(&Method::GET, "/info", &answer);
    assert_eq!(answer.json()["code"], "TOO_LARGE");
    assert!(answer.json()["message"].as_str().unwrap().contains(&format!("{} header fields", MAX_HEADERS + 1)), "{}", answer.json());
    let big = header::HeaderValue::from_str(&"a".repeat(MAX_HEAD)).unwrap();
    let answer = server.send(Server::request(Method::GET, "/sessions/s1/blocks").header("x-big", big).body(Body::empty()).unwrap()).await;
    assert_eq!(answer.status, StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE);
    check(&Method::GET, "/sessions/s1/blocks", &answer);
    // Within both limits, the request goes on to the token check.
    let within = header::HeaderValue::from_str(&"a".repeat(MAX_HEAD / 2)).unwrap();
    let answer = server.send(Server::request(Method::GET, "/info").header("x-big", within).body(Body::empty()).unwrap()).await;
    assert_eq!(answer.status, StatusCode::UNAUTHORIZED);
}
