//! Canonical blocks and host events as ACP `session/update`s, and ACP prompt content as a user
//! message. Conversion only: what a block is and when it was made is the core's.

use agent_client_protocol::v1::schema::{
    BlobResourceContents, ContentBlock, ContentChunk, EmbeddedResource, EmbeddedResourceResource, ImageContent, SessionUpdate, TextResourceContents, ToolCall,
    ToolCallContent, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields, ToolKind,
};
use base64::Engine as _;
use serde_json::Value;
use sna_history::host::Image;
use sna_history::model::{content_pieces, Piece};
use sna_history::{Actor, Block, Embed, Kind, Session};

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

/// What kind of tool a tool name is, for the editor's icon.
pub fn tool_kind(name: &str) -> ToolKind {
    let name = name.to_ascii_lowercase();
    let name = name.rsplit("__").next().unwrap_or(&name);
    match name {
        "bash" | "shell" | "exec_command" | "local_shell" | "run_shell_command" | "commandexecution" | "execute" | "killshell" | "bashoutput" => ToolKind::Execute,
        "read" | "read_file" | "read_many_files" | "view" | "notebookread" => ToolKind::Read,
        "edit" | "multiedit" | "write" | "write_file" | "replace" | "apply_patch" | "patch" | "notebookedit" | "filechange" => ToolKind::Edit,
        "grep" | "glob" | "search" | "search_file_content" | "list" | "ls" | "list_directory" | "find" | "codebase_search" => ToolKind::Search,
        "webfetch" | "web_fetch" | "fetch" | "websearch" | "web_search" | "google_web_search" => ToolKind::Fetch,
        "think" | "todowrite" | "todoread" | "update_plan" | "write_todos" => ToolKind::Think,
        _ => ToolKind::Other,
    }
}

/// A tool input as JSON (the text itself when it is not JSON).
fn input_value(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_string()))
}

/// A line for a person: the tool and what it works on.
pub fn tool_title(name: &str, input: &Value) -> String {
    let detail = ["command", "cmd", "file_path", "path", "filePath", "pattern", "url", "query", "description"]
        .iter()
        .find_map(|key| match &input[*key] {
            Value::String(s) if !s.is_empty() => Some(s.clone()),
            Value::Array(parts) if !parts.is_empty() => Some(parts.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(" ")),
            _ => None,
        });
    match detail {
        Some(detail) => {
            let line = detail.lines().next().unwrap_or("");
            let cut: String = line.chars().take(120).collect();
            format!("{name}: {cut}")
        }
        None if name.is_empty() => "tool".to_string(),
        None => name.to_string(),
    }
}

/// The `tool_call` of a tool_use block (in progress until its result comes).
pub fn tool_call(block: &Block) -> Option<SessionUpdate> {
    let tool = block.tool.as_ref()?;
    let name = tool.name.clone().unwrap_or_default();
    let input = input_value(&block.content);
    let call = ToolCall::new(tool.call_id.clone(), tool_title(&name, &input)).kind(tool_kind(&name)).status(ToolCallStatus::InProgress).raw_input(input).name(name);
    Some(SessionUpdate::ToolCall(call))
}

/// The `tool_call_update` of a tool_result block: completed or failed, with its output.
pub fn tool_result(session: &Session, block: &Block) -> Option<SessionUpdate> {
    let tool = block.tool.as_ref()?;
    let status = if tool.is_error == Some(true) { ToolCallStatus::Failed } else { ToolCallStatus::Completed };
    let content: Vec<ToolCallContent> = content_blocks(session, block).into_iter().map(ToolCallContent::from).collect();
    let fields = ToolCallUpdateFields::new().status(status).raw_output(Value::String(block.content.clone())).content(content);
    Some(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(tool.call_id.clone(), fields)))
}

/// The bytes of an embed: carried by the block, else read from the store.
fn embed_bytes(session: &Session, id: &str, embed: &Embed) -> Option<Vec<u8>> {
    embed.data.clone().or_else(|| session.embed(id).ok())
}

/// A block's content as ACP content: text, images, other embeds as embedded resources.
pub fn content_blocks(session: &Session, block: &Block) -> Vec<ContentBlock> {
    let mut out = Vec::new();
    for piece in content_pieces(block) {
        match piece {
            Piece::Text(text) => out.push(ContentBlock::from(text.to_string())),
            Piece::Embed(id, embed) => {
                let Some(bytes) = embed_bytes(session, id, embed) else {
                    out.push(ContentBlock::from(format!("[attachment {} ({}, {} bytes) not in the store]", embed.name.as_deref().unwrap_or(id), embed.mime, embed.size)));
                    continue;
                };
                if embed.mime.starts_with("image/") {
                    out.push(ContentBlock::Image(ImageContent::new(B64.encode(&bytes), embed.mime.clone())));
                } else {
                    let uri = format!("embed://{id}");
                    let resource = match String::from_utf8(bytes) {
                        Ok(text) if embed.mime.starts_with("text/") => EmbeddedResourceResource::TextResourceContents(TextResourceContents::new(text, uri).mime_type(embed.mime.clone())),
                        Ok(text) => EmbeddedResourceResource::BlobResourceContents(BlobResourceContents::new(B64.encode(text.as_bytes()), uri).mime_type(embed.mime.clone())),
                        Err(e) => EmbeddedResourceResource::BlobResourceContents(BlobResourceContents::new(B64.encode(e.into_bytes()), uri).mime_type(embed.mime.clone())),
                    };
                    out.push(ContentBlock::Resource(EmbeddedResource::new(resource)));
                }
            }
        }
    }
    out
}

/// The updates that show a stored block in the editor (`session/load`): none for the runtime's
/// bookkeeping.
pub fn block_updates(session: &Session, block: &Block) -> Vec<SessionUpdate> {
    if block.is_bookkeeping() {
        return Vec::new();
    }
    match (block.actor, block.kind) {
        (Actor::User, Kind::Text) => content_blocks(session, block).into_iter().map(|c| SessionUpdate::UserMessageChunk(ContentChunk::new(c))).collect(),
        (_, Kind::Text) | (_, Kind::Error) => content_blocks(session, block).into_iter().map(|c| SessionUpdate::AgentMessageChunk(ContentChunk::new(c))).collect(),
        (_, Kind::Thinking) if !block.content.trim().is_empty() => vec![SessionUpdate::AgentThoughtChunk(ContentChunk::new(ContentBlock::from(block.content.clone())))],
        (_, Kind::ToolUse) => tool_call(block).into_iter().collect(),
        (_, Kind::ToolResult) => tool_result(session, block).into_iter().collect(),
        _ => Vec::new(),
    }
}

/// A prompt's content as the user's message: its text (text blocks, links, and text resources or
/// blobs that are UTF-8 text, in order) and its images (image blocks and image blobs). Other binary
/// resources are refused. `Err` starts with the field that is wrong.
pub fn prompt_message(prompt: &[ContentBlock]) -> Result<(String, Vec<Image>), String> {
    let mut text = Vec::new();
    let mut images = Vec::new();
    for (i, block) in prompt.iter().enumerate() {
        match block {
            ContentBlock::Text(t) => text.push(t.text.clone()),
            ContentBlock::Image(image) => {
                let data = B64.decode(image.data.as_bytes()).map_err(|e| format!("prompt[{i}].data: not base64 ({e})"))?;
                images.push(checked(Image { mime: image.mime_type.clone(), data }, &format!("prompt[{i}]"), "mimeType", "data")?);
            }
            ContentBlock::ResourceLink(link) => text.push(format!("[{}]({})", link.name, link.uri)),
            ContentBlock::Resource(embedded) => match &embedded.resource {
                EmbeddedResourceResource::TextResourceContents(r) => text.push(format!("<resource uri=\"{}\">\n{}\n</resource>", r.uri, r.text)),
                EmbeddedResourceResource::BlobResourceContents(r) => {
                    let data = B64.decode(r.blob.as_bytes()).map_err(|e| format!("prompt[{i}].resource.blob: not base64 ({e})"))?;
                    let mime = r.mime_type.as_deref().unwrap_or("application/octet-stream");
                    if mime.starts_with("image/") {
                        images.push(checked(Image { mime: mime.to_string(), data }, &format!("prompt[{i}].resource"), "mimeType", "blob")?);
                    } else {
                        // Text sent as a blob is text; other bytes the host cannot pass on (it sends a
                        // runtime text and images), so they are refused rather than lost.
                        let Ok(body) = String::from_utf8(data) else {
                            return Err(format!("prompt[{i}].resource: a binary {mime} resource cannot be passed on (images and text are taken)"));
                        };
                        text.push(format!("<resource uri=\"{}\">\n{body}\n</resource>", r.uri));
                    }
                }
                _ => return Err(format!("prompt[{i}].resource: an unknown kind of resource")),
            },
            ContentBlock::Audio(_) => return Err(format!("prompt[{i}]: audio is not supported (the prompt capabilities say so)")),
            _ => return Err(format!("prompt[{i}]: an unknown kind of content")),
        }
    }
    if text.iter().all(|t| t.trim().is_empty()) && images.is_empty() {
        return Err("prompt: empty (no text, no image)".to_string());
    }
    Ok((text.join("\n\n"), images))
}

/// The image as the host will take it, or an error that names its field of the prompt:
/// `<at>.<mime_key>` or `<at>.<data_key>`.
fn checked(image: Image, at: &str, mime_key: &str, data_key: &str) -> Result<Image, String> {
    match image.check() {
        Ok(()) => Ok(image),
        Err(sna_history::Error::InvalidInput { message, location }) => {
            let key = if location.field.as_deref() == Some("data") { data_key } else { mime_key };
            Err(format!("{at}.{key}: {message}"))
        }
        Err(e) => Err(format!("{at}: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol::v1::schema::TextContent;

    fn blob(mime: &str, bytes: &[u8]) -> ContentBlock {
        let contents = BlobResourceContents::new(B64.encode(bytes), "file:///home/dev/x").mime_type(mime.to_string());
        ContentBlock::Resource(EmbeddedResource::new(EmbeddedResourceResource::BlobResourceContents(contents)))
    }

    #[test]
    fn a_prompt_keeps_text_images_and_resources_in_order() {
        let text_resource = TextResourceContents::new("fn main() {}", "file:///home/dev/main.rs").mime_type("text/x-rust".to_string());
        let prompt = vec![
            ContentBlock::Text(TextContent::new("look")),
            ContentBlock::Resource(EmbeddedResource::new(EmbeddedResourceResource::TextResourceContents(text_resource))),
            blob("application/json", b"{\"a\": 1}"),
            blob("image/png", b"\x89PNG"),
        ];
        let (text, images) = prompt_message(&prompt).unwrap();
        assert_eq!(
            text,
            "look\n\n<resource uri=\"file:///home/dev/main.rs\">\nfn main() {}\n</resource>\n\n<resource uri=\"file:///home/dev/x\">\n{\"a\": 1}\n</resource>"
        );
        assert_eq!(images, vec![Image { mime: "image/png".into(), data: b"\x89PNG".to_vec() }]);
    }

    #[test]
    fn bytes_no_runtime_takes_are_refused_with_the_field() {
        let pdf = vec![ContentBlock::Text(TextContent::new("read")), blob("application/pdf", b"%PDF-1.4\n\xff\xfe")];
        let err = prompt_message(&pdf).unwrap_err();
        assert!(err.starts_with("prompt[1].resource: a binary application/pdf resource"), "{err}");
        let not_image = vec![ContentBlock::Image(ImageContent::new(B64.encode(b"hi"), "text/plain"))];
        assert!(prompt_message(&not_image).unwrap_err().starts_with("prompt[0].mimeType: "));
        let empty = vec![ContentBlock::Image(ImageContent::new("", "image/png"))];
        assert!(prompt_message(&empty).unwrap_err().starts_with("prompt[0].data: "));
        let empty_blob = vec![ContentBlock::Text(TextContent::new("see")), blob("image/png", b"")];
        assert!(prompt_message(&empty_blob).unwrap_err().starts_with("prompt[1].resource.blob: "));
    }
}
