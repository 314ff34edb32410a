//! Ids derived from content, so that imports and exports are deterministic: embed ids, derived
//! UUIDs and short hashes, and the embed link syntax that refers to an embed by id.

use sha2::{Digest, Sha256};

use super::Embed;

/// Embed id for some bytes: a prefix of their SHA-256, so the same bytes get the same id.
pub(crate) fn embed_id(embed: &Embed) -> String {
    format!("sha256-{}", &embed.sha256[..24])
}

/// The embed syntax of docs/design.md §1 naming embed `id`.
pub(crate) fn embed_link(label: &str, id: &str) -> String {
    format!("![{label}](embed://{id})")
}

/// True for a UUID in its hyphenated 36-character form, in either case.
pub(crate) fn is_uuid(text: &str) -> bool {
    uuid::Uuid::try_parse(text).is_ok() && text.len() == 36
}

/// SHA-256 of the parts, each followed by a NUL byte (so that ("ab","c") and ("a","bc") differ).
pub(crate) fn parts_digest(parts: &[&str]) -> [u8; 32] {
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update(part.as_bytes());
        hasher.update([0u8]);
    }
    hasher.finalize().into()
}

/// A UUID (version 4 layout) derived from the parts, so that exports are deterministic.
pub(crate) fn derived_uuid(parts: &[&str]) -> String {
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&parts_digest(parts)[..16]);
    uuid::Builder::from_random_bytes(bytes).into_uuid().to_string()
}

/// The first `hex_len` hex digits of the parts' digest: short deterministic ids.
pub(crate) fn short_hash(parts: &[&str], hex_len: usize) -> String {
    super::sha256_hex(&parts_digest(parts))[..hex_len].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_are_separated_so_that_shifted_boundaries_differ() {
        assert_ne!(parts_digest(&["ab", "c"]), parts_digest(&["a", "bc"]));
        assert_eq!(parts_digest(&["a", "b"]), parts_digest(&["a", "b"]));
    }

    #[test]
    fn derived_ids_are_stable_uuids() {
        let id = derived_uuid(&["block", "7"]);
        assert!(is_uuid(&id), "{id}");
        assert_eq!(id, derived_uuid(&["block", "7"]));
        assert_ne!(id, derived_uuid(&["block", "8"]));
        assert_eq!(uuid::Uuid::parse_str(&id).unwrap().get_version_num(), 4);
        assert_eq!(short_hash(&["x"], 8).len(), 8);
    }

    #[test]
    fn uuids_must_be_the_hyphenated_form() {
        assert!(is_uuid("59187973-81fd-4be2-8aa9-a21c45c78135"));
        assert!(!is_uuid("5918797381fd4be28aa9a21c45c78135"), "simple form is not accepted");
        assert!(!is_uuid("{59187973-81fd-4be2-8aa9-a21c45c78135}"));
    }

    #[test]
    fn embed_ids_and_links() {
        let embed = Embed::from_bytes("image/png", None, vec![1, 2, 3]);
        let id = embed_id(&embed);
        assert_eq!(id, format!("sha256-{}", &embed.sha256[..24]));
        assert_eq!(embed_link("a.png", &id), format!("![a.png](embed://{id})"));
    }
}
