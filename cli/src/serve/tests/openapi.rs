//! `/openapi.json` against the router: it parses as OpenAPI 3.1, its references resolve, every
//! path the router routes is in it with exactly the methods the router takes, and the typed
//! bodies agree with what the handlers read and answer.

use std::collections::BTreeSet;

use axum::http::{header, Method, StatusCode};
use oas3::spec::{ObjectOrReference, Schema, Spec};
use sna_history::field_names;

use super::super::requests::{CompactBody, JsonBody, ModelBody, NewSessionBody, ResumeBody, SendBody, SessionUpdate, StartBody};
use super::super::responses::Session;
use super::{call, Server};
use crate::ui::session_json;

/// The methods a route may take (HEAD goes with GET in axum, and no route takes the others).
const METHODS: [Method; 6] = [Method::GET, Method::POST, Method::PUT, Method::PATCH, Method::DELETE, Method::OPTIONS];

async fn document(server: &Server) -> Spec {
    let answer = server.answer(Method::GET, "/openapi.json", None, None).await;
    assert_eq!((answer.status, answer.header(header::CONTENT_TYPE)), (StatusCode::OK, Some("application/json")));
    let text = String::from_utf8(answer.body.to_vec()).unwrap();
    // Every reference, however deep, names a schema the document has.
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut stack = vec![&json];
    while let Some(value) = stack.pop() {
        match value {
            serde_json::Value::Object(map) => {
                if let Some(target) = map.get("$ref").and_then(|r| r.as_str()) {
                    let name = target.strip_prefix("#/components/schemas/").unwrap_or_else(|| panic!("a reference elsewhere: {target}"));
                    assert!(json["components"]["schemas"].get(name).is_some(), "{target} is not in the document");
                }
                stack.extend(map.values());
            }
            serde_json::Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    oas3::from_json(text).expect("an OpenAPI 3.1 document")
}

/// The paths the router routes, read from the router itself: axum's `Debug` of a router lists
/// each route's path (its fallback's catch-all aside).
fn routed_paths(router: &axum::Router) -> BTreeSet<String> {
    let debug = format!("{router:?}");
    let quoted = regex::Regex::new(r#""(/[^"]*)""#).unwrap();
    quoted.captures_iter(&debug).map(|c| c[1].to_string()).filter(|p| !p.contains("__private__")).collect()
}

#[tokio::test]
async fn the_document_is_openapi_3_1_and_its_references_resolve() {
    let server = Server::new(None);
    let spec = document(&server).await;
    let version = spec.validate_version().expect("a supported OpenAPI version");
    assert_eq!((version.major, version.minor), (3, 1));
    assert_eq!((spec.info.title.as_str(), spec.info.version.as_str()), ("sna serve", env!("CARGO_PKG_VERSION")));
    let mut operations = 0;
    for (path, method, operation) in spec.operations() {
        operations += 1;
        let at = format!("{method} {path}");
        assert!(operation.tags.len() == 1, "{at}: one tag");
        assert!(operation.responses(&spec).keys().any(|s| s.starts_with('2') || s.starts_with('3')), "{at}: no answer that succeeds");
        if let Some(body) = &operation.request_body {
            let body = body.resolve(&spec).unwrap_or_else(|e| panic!("{at}: {e}"));
            for media in body.content.values() {
                media.schema(&spec).unwrap_or_else(|e| panic!("{at}: the body's schema: {e}"));
            }
        }
        for (status, response) in operation.responses(&spec) {
            for media in response.content.values() {
                media.schema(&spec).unwrap_or_else(|e| panic!("{at} {status}: {e}"));
            }
            if status.starts_with('4') || status.starts_with('5') {
                let schema = response.content.get("application/json").and_then(|m| m.schema.clone());
                let error = match schema {
                    Some(Schema::Object(schema)) => matches!(*schema, ObjectOrReference::Ref { ref ref_path, .. } if ref_path == "#/components/schemas/ErrorBody"),
                    _ => false,
                };
                assert!(error, "{at} {status}: not an ErrorBody");
            }
        }
        // Every path parameter is declared.
        let declared: BTreeSet<String> = operation.parameters(&spec).unwrap().into_iter().map(|p| p.name).collect();
        for name in path.split('/').filter_map(|s| s.strip_prefix('{')?.strip_suffix('}')) {
            assert!(declared.contains(name), "{at}: the parameter {name} is not declared");
        }
    }
    assert!(operations > 20, "{operations} operations");
}

#[tokio::test]
async fn every_route_is_documented_with_exactly_its_methods() {
    let server = Server::new(None);
    let spec = document(&server).await;
    let documented: BTreeSet<String> = spec.paths.as_ref().unwrap().keys().cloned().collect();
    let routed = routed_paths(&server.router);
    assert!(routed.contains("/info") && routed.contains("/sessions/{id}/usage"), "the router's paths were not read: {routed:?}");
    assert_eq!(routed, documented, "the router's paths (left) and the document's (right)");
    for path in &documented {
        let concrete: String = path.split('/').map(|s| if s.starts_with('{') { "x" } else { s }).collect::<Vec<_>>().join("/");
        for method in METHODS {
            // A body that is not JSON: no route acts on it.
            let (status, answer) = call(&server, method.clone(), &concrete, Some("not json"), None).await;
            let routed = status != StatusCode::METHOD_NOT_ALLOWED;
            assert!(answer.get("message").and_then(|m| m.as_str()) != Some("no such route"), "{method} {concrete}: {answer}");
            assert_eq!(routed, spec.operation(&method, path).is_some(), "{method} {path}: the router answered {status}");
        }
    }
}

#[tokio::test]
async fn openapi_json_needs_the_token_where_one_is_set_and_says_so() {
    let server = Server::new(Some("secret"));
    assert_eq!(call(&server, Method::GET, "/openapi.json", None, None).await.0, StatusCode::UNAUTHORIZED);
    let answer = server.answer(Method::GET, "/openapi.json", None, Some("secret")).await;
    assert_eq!(answer.status, StatusCode::OK);
    let spec = oas3::from_json(String::from_utf8(answer.body.to_vec()).unwrap()).unwrap();
    let schemes: BTreeSet<&str> = spec.components.as_ref().unwrap().security_schemes.keys().map(String::as_str).collect();
    assert_eq!(schemes, BTreeSet::from(["bearer", "cookie"]));
    let needs = |method: Method, path: &str| spec.operation(&method, path).unwrap().security.len();
    assert_eq!((needs(Method::GET, "/info"), needs(Method::POST, "/agent/start"), needs(Method::GET, "/assets/{name}")), (3, 3, 3));
    assert_eq!((needs(Method::GET, "/"), needs(Method::GET, "/login"), needs(Method::POST, "/login")), (0, 0, 0));
}

/// What a route lists as the keys it takes are the fields its body struct reads.
#[test]
fn each_body_takes_its_fields() {
    fn same<T: JsonBody>() {
        let (mut takes, mut fields) = (T::takes().to_vec(), field_names::<T>().to_vec());
        takes.sort_unstable();
        fields.sort_unstable();
        assert_eq!(takes, fields, "{}", std::any::type_name::<T>());
        assert!(!fields.is_empty());
    }
    same::<NewSessionBody>();
    same::<SessionUpdate>();
    same::<StartBody>();
    same::<ResumeBody>();
    same::<SendBody>();
    same::<CompactBody>();
    same::<ModelBody>();
}

/// The `Session` schema reads back what `session_json` answers, byte for byte, with and without
/// an agent.
#[tokio::test]
async fn the_session_schema_is_what_session_json_answers() {
    let server = Server::new(None);
    let session = server.app.host.store().create_session(sna_history::NewSession::new().id("s1").title("T").cwd("/home/dev/p")).unwrap();
    let mut block = sna_history::Block::new(sna_history::Actor::Assistant, sna_history::Kind::Text, "hi");
    (block.provider, block.model) = (Some("codex".into()), Some("gpt-5".into()));
    session.append(block).unwrap();
    // An agent, not alive (its executable is missing here, so it is made without a start).
    let _ = server.app.host.resume("s1", sna_history::host::ResumeOptions::default());
    let agent = server.app.host.agent("s1");
    assert!(agent.is_some(), "no agent to describe");
    let info = session.info().unwrap();
    for agent in [None, agent.as_ref()] {
        let answered = serde_json::to_string(&session_json(&info, agent)).unwrap();
        let typed: Session = serde_json::from_str(&answered).unwrap_or_else(|e| panic!("{e}: {answered}"));
        assert_eq!(serde_json::to_string(&typed).unwrap(), answered);
    }
}

/// A JSON body the document calls optional may be empty (`{}`); one it requires may not.
#[tokio::test]
async fn an_empty_body_is_refused_only_where_the_document_requires_one() {
    let server = Server::new(None);
    let spec = document(&server).await;
    let mut checked = 0;
    for (path, method, operation) in spec.operations() {
        let Some(body) = operation.request_body.as_ref().map(|b| b.resolve(&spec).unwrap()) else { continue };
        if !body.content.contains_key("application/json") {
            continue;
        }
        let concrete = path.replace("{id}", "x");
        let (status, answer) = call(&server, method.clone(), &concrete, Some(""), None).await;
        assert_eq!(status == StatusCode::BAD_REQUEST, body.required.unwrap_or(false), "{method} {path}: {status} {answer}");
        checked += 1;
    }
    assert_eq!(checked, 9);
}
