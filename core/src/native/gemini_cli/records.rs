//! What a line of a Gemini CLI session log is, what makes one malformed, and the CLI's loader: the
//! message list a log amounts to (the last version of an id wins in the place the id first
//! appeared; `$set.messages` replaces the list; `$rewindTo` cuts it).

use serde_json::{Map, Value};

use crate::json::json_type;
use crate::native::common::{malformed, Malformed};

/// What a log line is, in the order the CLI's loader asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Record {
    /// `{"$rewindTo": id}`.
    Rewind,
    /// A message: a record with a string `id`.
    Message,
    /// `{"$set": {…}}`: metadata, and with `messages` the whole list.
    Set,
    /// The session header: string `sessionId` and `projectHash`.
    Header,
    /// Anything else (ignored by the CLI, kept by the importer).
    Other,
}

/// The message types the CLI writes.
pub(super) const MESSAGE_TYPES: [&str; 5] = ["user", "gemini", "info", "error", "warning"];

/// What `record` is.
pub(super) fn classify(record: &Map<String, Value>) -> Record {
    if record.get("$rewindTo").is_some_and(Value::is_string) {
        Record::Rewind
    } else if record.get("id").is_some_and(Value::is_string) {
        Record::Message
    } else if record.get("$set").is_some_and(Value::is_object) {
        Record::Set
    } else if is_header(record) {
        Record::Header
    } else {
        Record::Other
    }
}

/// True for a session header (or a whole legacy session document, which starts the same).
pub(super) fn is_header(record: &Map<String, Value>) -> bool {
    record.get("sessionId").is_some_and(Value::is_string) && record.get("projectHash").is_some_and(Value::is_string)
}

/// Why a message record cannot be read as one: the fields the importer relies on, checked.
fn check_message(message: &Map<String, Value>, at: &str) -> Result<(), Malformed> {
    let field = |name: &str| if at.is_empty() { name.to_string() } else { format!("{at}.{name}") };
    match message.get("type") {
        Some(Value::String(_)) => {}
        None => return Err(malformed(field("type"), "a message record needs a \"type\"")),
        Some(other) => return Err(malformed(field("type"), format!("\"type\" must be a string, not {}", json_type(other)))),
    }
    match message.get("content") {
        None | Some(Value::Null | Value::String(_)) => {}
        Some(Value::Array(parts)) => {
            if let Some((i, part)) = parts.iter().enumerate().find(|(_, p)| !p.is_object()) {
                return Err(malformed(field(&format!("content[{i}]")), format!("a part must be an object, not {}", json_type(part))));
            }
        }
        Some(other) => return Err(malformed(field("content"), format!("\"content\" must be a string or a list of parts, not {}", json_type(other)))),
    }
    for key in ["toolCalls", "thoughts"] {
        match message.get(key) {
            None | Some(Value::Null) => {}
            Some(Value::Array(items)) => {
                if let Some((i, item)) = items.iter().enumerate().find(|(_, p)| !p.is_object()) {
                    return Err(malformed(field(&format!("{key}[{i}]")), format!("an entry must be an object, not {}", json_type(item))));
                }
            }
            Some(other) => return Err(malformed(field(key), format!("\"{key}\" must be a list, not {}", json_type(other)))),
        }
    }
    Ok(())
}

/// Why a log line cannot be read as the record it claims to be.
pub(super) fn check_record(value: &Value) -> Result<(), Malformed> {
    let Value::Object(record) = value else {
        return Err(Malformed { reason: format!("a log line must be a JSON object, not {}", json_type(value)), field: None });
    };
    match classify(record) {
        Record::Message => check_message(record, ""),
        Record::Set | Record::Header => {
            let (messages, at) = match classify(record) {
                Record::Set => (record["$set"].get("messages"), "$set.messages"),
                _ => (record.get("messages"), "messages"),
            };
            match messages {
                None => Ok(()),
                Some(Value::Array(list)) => {
                    for (i, message) in list.iter().enumerate() {
                        let at = format!("{at}[{i}]");
                        let Value::Object(message) = message else {
                            return Err(malformed(at, format!("a message must be an object, not {}", json_type(message))));
                        };
                        if !message.get("id").is_some_and(Value::is_string) {
                            return Err(malformed(format!("{at}.id"), "a message of the list has no string \"id\": it refers to nothing"));
                        }
                        check_message(message, &at)?;
                    }
                    Ok(())
                }
                Some(other) if at == "$set.messages" => Err(malformed(at, format!("\"$set.messages\" must be a list of messages, not {}", json_type(other)))),
                Some(_) => Ok(()),
            }
        }
        Record::Rewind | Record::Other => Ok(()),
    }
}

/// Where the final version of a message comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct From {
    /// The index of the record (the log line) in the log.
    pub record: usize,
    /// Its place in that record's message list (`$set.messages`, a header's `messages`), or `None`
    /// for a message record of its own.
    pub index: Option<usize>,
}

/// The message list a log amounts to, and what could not be applied.
#[derive(Debug, Default)]
pub(super) struct Loaded {
    /// The messages, in order: where each one's final version is.
    pub messages: Vec<(String, From)>,
    /// The merged metadata (headers and `$set`s, without `messages`).
    pub meta: Map<String, Value>,
    /// Records that could not be applied (a `$rewindTo` naming no message), with why.
    pub refused: Vec<(usize, String)>,
}

/// Runs the CLI's loader over `records` (`None` for lines that were not read).
pub(super) fn load(records: &[Option<&Map<String, Value>>]) -> Loaded {
    let mut loaded = Loaded::default();
    let mut place: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    fn put(loaded: &mut Loaded, place: &mut std::collections::HashMap<String, usize>, id: &str, from: From) {
        match place.get(id) {
            Some(&i) => loaded.messages[i].1 = from,
            None => {
                place.insert(id.to_string(), loaded.messages.len());
                loaded.messages.push((id.to_string(), from));
            }
        }
    }
    fn replace_all(loaded: &mut Loaded, place: &mut std::collections::HashMap<String, usize>, record: usize, list: &[Value]) {
        loaded.messages.clear();
        place.clear();
        for (index, message) in list.iter().enumerate() {
            if let Some(id) = message.get("id").and_then(Value::as_str) {
                put(loaded, place, id, From { record, index: Some(index) });
            }
        }
    }
    for (i, record) in records.iter().enumerate() {
        let Some(record) = record else { continue };
        match classify(record) {
            Record::Rewind => {
                let target = record["$rewindTo"].as_str().unwrap_or("");
                match place.get(target).copied() {
                    Some(at) => {
                        for (id, _) in loaded.messages.drain(at..) {
                            place.remove(&id);
                        }
                    }
                    None => loaded.refused.push((i, format!("\"$rewindTo\" names the message {target:?}, which the log does not hold: it refers to nothing"))),
                }
            }
            Record::Message => put(&mut loaded, &mut place, record["id"].as_str().unwrap_or(""), From { record: i, index: None }),
            Record::Set => {
                if let Value::Object(set) = &record["$set"] {
                    for (key, value) in set {
                        if key == "messages" {
                            if let Value::Array(list) = value {
                                replace_all(&mut loaded, &mut place, i, list);
                            }
                        } else {
                            loaded.meta.insert(key.clone(), value.clone());
                        }
                    }
                }
            }
            Record::Header => {
                for (key, value) in record.iter() {
                    if key == "messages" {
                        if let Value::Array(list) = value {
                            replace_all(&mut loaded, &mut place, i, list);
                        }
                    } else {
                        loaded.meta.insert(key.clone(), value.clone());
                    }
                }
            }
            Record::Other => {}
        }
    }
    loaded
}

/// The message a [`From`] names in `records`.
pub(super) fn message_at<'a>(records: &[Option<&'a Map<String, Value>>], from: From) -> Option<&'a Map<String, Value>> {
    let record = records.get(from.record).copied().flatten()?;
    match from.index {
        None => Some(record),
        Some(index) => {
            let list = record.get("$set").and_then(|s| s.get("messages")).or_else(|| record.get("messages"))?;
            list.get(index)?.as_object()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(lines: &[Value]) -> (Vec<String>, Vec<usize>) {
        let maps: Vec<Option<&Map<String, Value>>> = lines.iter().map(Value::as_object).collect();
        let loaded = load(&maps);
        (loaded.messages.iter().map(|(id, _)| id.clone()).collect(), loaded.refused.iter().map(|r| r.0).collect())
    }

    #[test]
    fn the_loader_keeps_first_places_and_last_versions() {
        let lines = [
            json!({"sessionId": "s", "projectHash": "h"}),
            json!({"id": "a", "type": "user", "content": "1"}),
            json!({"id": "b", "type": "gemini", "content": "2"}),
            json!({"id": "a", "type": "user", "content": "1 again"}),
            json!({"id": "c", "type": "user", "content": "3"}),
        ];
        let maps: Vec<Option<&Map<String, Value>>> = lines.iter().map(Value::as_object).collect();
        let loaded = load(&maps);
        assert_eq!(loaded.messages.iter().map(|m| m.0.as_str()).collect::<Vec<_>>(), ["a", "b", "c"]);
        assert_eq!(message_at(&maps, loaded.messages[0].1).unwrap()["content"], "1 again");
        assert_eq!(loaded.meta["sessionId"], "s");
    }

    #[test]
    fn set_messages_replaces_and_rewind_cuts() {
        let (ids, refused) = run(&[
            json!({"id": "a", "type": "user"}),
            json!({"id": "b", "type": "gemini"}),
            json!({"$set": {"messages": [{"id": "x", "type": "user"}, {"id": "b", "type": "gemini"}], "summary": "s"}}),
            json!({"id": "c", "type": "user"}),
            json!({"$rewindTo": "c"}),
            json!({"$rewindTo": "nowhere"}),
            json!({"id": "d", "type": "user"}),
        ]);
        assert_eq!(ids, ["x", "b", "d"]);
        assert_eq!(refused, [5]);
    }

    #[test]
    fn malformed_records_name_the_field() {
        let bad = |v: Value| check_record(&v).err().map(|m| (m.field.unwrap_or_default(), m.reason)).unwrap();
        assert_eq!(bad(json!({"id": "a", "type": 3})).0, "type");
        assert_eq!(bad(json!({"id": "a", "type": "user", "content": 5})).0, "content");
        assert_eq!(bad(json!({"$set": {"messages": [{"type": "user"}]}})).0, "$set.messages[0].id");
        assert_eq!(bad(json!({"$set": {"messages": "all"}})).0, "$set.messages");
        assert_eq!(bad(json!({"id": "a", "type": "gemini", "toolCalls": [1]})).0, "toolCalls[0]");
        assert!(check_record(&json!({"$set": {"lastUpdated": "t"}})).is_ok());
        assert!(check_record(&json!({"something": "else"})).is_ok());
    }
}
