//! `GET /openapi.json`: the HTTP API as an OpenAPI 3.1 document, made from the handlers'
//! operations (`#[utoipa::path]`) and the typed bodies of `requests` and `responses`, so that it
//! cannot drift from them. It needs the token as the other API routes do.

use std::sync::Arc;

use axum::http::header;
use axum::Extension;
use axum::response::{IntoResponse, Response};
use utoipa::openapi::security::{ApiKey, ApiKeyValue, Http, HttpAuthScheme, SecurityRequirement, SecurityScheme};
use utoipa::openapi::{ContentBuilder, OpenApi as Document, Ref, RefOr, ResponseBuilder};
use utoipa::OpenApi;

use super::responses::{ErrorBody, EventBody};
use super::ApiError;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "sna serve",
        description = "The host of sna-history over HTTP: SNA's agent API (`/agent/...`, every route naming its session with \
                       `?session=ID`), the stored history (`/sessions/{id}/...`) and the web UI. Errors are \
                       `{status: \"error\", code, message}`. docs/serve.md says more."
    ),
    tags(
        (name = "sessions", description = "The stored sessions"),
        (name = "agent", description = "A session's agent: a runtime process the host drives"),
        (name = "history", description = "What the store holds of a session, read-only"),
        (name = "server", description = "The server itself"),
        (name = "pages", description = "The web UI"),
    ),
    components(schemas(ErrorBody, EventBody))
)]
struct Base;

/// The document's parts that are not the routes' (the routes add theirs: `api::routes`).
pub(crate) fn base() -> Document {
    Base::openapi()
}

/// Routes the guard lets through without the token (the pages redirect to the login instead).
const OPEN: [&str; 3] = ["/", "/s/{id}", "/login"];

/// The whole document: every route's operation; the 400 and 413 of reading a JSON body (for the
/// routes that take one); the 400 of a path or query that does not decode (for the routes with
/// parameters); the 431 of a head over the limits (`api.rs`); and what the guard adds to each
/// (`auth.rs`): a 403 for a host that is
/// not a loopback name or another site's `Origin`, and, where a token is set, the token (a bearer
/// or the login's cookie) or a 401.
pub(crate) fn complete(mut document: Document) -> Document {
    let components = document.components.get_or_insert_with(Default::default);
    components.add_security_scheme("bearer", SecurityScheme::Http(Http::new(HttpAuthScheme::Bearer)));
    components.add_security_scheme("cookie", SecurityScheme::ApiKey(ApiKey::Cookie(ApiKeyValue::new("sna_session"))));
    let error = |description: &str| {
        ResponseBuilder::new().description(description).content("application/json", ContentBuilder::new().schema(Some(Ref::from_schema_name("ErrorBody"))).build()).build()
    };
    for (path, item) in document.paths.paths.iter_mut() {
        let open = OPEN.contains(&path.as_str());
        for operation in [&mut item.get, &mut item.post, &mut item.put, &mut item.patch, &mut item.delete].into_iter().flatten() {
            let responses = &mut operation.responses.responses;
            // Every JSON body is read by `requests::read`.
            if matches!(&operation.request_body, Some(RefOr::T(body)) if body.content.contains_key("application/json")) {
                let bad = "The body is not a JSON object, holds a key the route does not take, or a bad value (the message starts with the field)";
                responses.entry("400".into()).or_insert_with(|| error(bad).into());
                responses.entry("413".into()).or_insert_with(|| error("The body is larger than `--max-body-mib`").into());
            }
            // A path segment or a query that does not decode is refused before the handler runs.
            if path.contains('{') || operation.parameters.as_ref().is_some_and(|p| !p.is_empty()) {
                let undecodable = "A path segment or a query that is not UTF-8 once percent-decoded, or a parameter that is not what the route takes";
                responses.entry("400".into()).or_insert_with(|| error(undecodable).into());
            }
            responses.insert("431".into(), error("More than 100 header fields, or a target and header fields of more than 256 KiB").into());
            responses.insert("403".into(), error("The host is not a loopback name (a server without a token), or the request is mutating and its `Origin` another site's").into());
            if !open {
                responses.insert("401".into(), error("The server has a token and the request carries neither it nor the login's cookie").into());
                // Either credential, or none when the server has no token.
                let none: SecurityRequirement = Default::default();
                operation.security = Some(vec![SecurityRequirement::new("bearer", Vec::<String>::new()), SecurityRequirement::new("cookie", Vec::<String>::new()), none]);
            }
        }
    }
    document
}

/// The whole document as JSON, made once when the router is (an `Extension` of it).
#[derive(Clone)]
pub(crate) struct Published(Arc<Result<String, String>>);

impl Published {
    /// The routes' document, completed and written.
    pub(crate) fn of(routes: Document) -> Published {
        Published(Arc::new(complete(routes).to_pretty_json().map_err(|e| e.to_string())))
    }
}

/// This API as an OpenAPI 3.1 document.
#[utoipa::path(get, path = "/openapi.json", tag = "server", responses((status = 200, description = "The OpenAPI document", content_type = "application/json", body = Object)))]
pub(crate) async fn document(Extension(published): Extension<Published>) -> Result<Response, ApiError> {
    match published.0.as_ref() {
        Ok(json) => Ok(([(header::CONTENT_TYPE, "application/json")], json.clone()).into_response()),
        Err(e) => {
            eprintln!("sna serve: cannot write the OpenAPI document: {e}");
            Err(ApiError::internal())
        }
    }
}
