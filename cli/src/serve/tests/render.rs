//! `POST /ui/markdown`: the web UI's Markdown rendered by the server, and the bodies it refuses.

use axum::http::{Method, StatusCode};
use serde_json::json;

use super::{call, refused, Server};

#[tokio::test]
async fn the_ui_markdown_route_renders_each_text() {
    let server = Server::new(None);
    let body = r###"{"texts": ["## Title\n\n**bold** <b>x</b>", "", "![a](embed://e1)"]}"###;
    let (status, answer) = call(&server, Method::POST, "/ui/markdown", Some(body), None).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let expected = json!({"html": [
        "<h2>Title</h2>\n<p><strong>bold</strong> &lt;b&gt;x&lt;/b&gt;</p>",
        "",
        "<p><span class=\"embed-ref\" data-embed=\"e1\">a</span></p>",
    ]});
    assert_eq!(answer, expected);
    // Bad bodies name what is wrong.
    refused(&server, Method::POST, "/ui/markdown", r#"{"texts": [], "x": 1}"#, "x: unknown field; this route takes texts").await;
    refused(&server, Method::POST, "/ui/markdown", "[1]", "body: expected a JSON object").await;
    for (body, field, says) in [("{}", "", "missing field `texts`"), (r#"{"texts": [1]}"#, "texts[0]", "expected a string")] {
        let (status, answer) = call(&server, Method::POST, "/ui/markdown", Some(body), None).await;
        assert_eq!((status, answer["code"].as_str()), (StatusCode::BAD_REQUEST, Some("INVALID_INPUT")), "{body}");
        let message = answer["message"].as_str().unwrap();
        assert!(message.starts_with(field) && message.contains(says), "{body}: {message}");
    }
    assert_eq!(call(&server, Method::GET, "/ui/markdown", None, None).await.0, StatusCode::METHOD_NOT_ALLOWED);
    let guarded = Server::new(Some("secret"));
    assert_eq!(call(&guarded, Method::POST, "/ui/markdown", Some(r#"{"texts": []}"#), None).await.0, StatusCode::UNAUTHORIZED);
    assert_eq!(call(&guarded, Method::POST, "/ui/markdown", Some(r#"{"texts": []}"#), Some("secret")).await.1, json!({"html": []}));
}
