//! Property: whatever valid blocks go in come back out unchanged, in order, with dense seq, and their
//! serialized form parses back to the same block.

use proptest::prelude::*;
use sna_history::{Actor, Block, Kind, Native, NewSession, Reasoning, Scope, Store, Timestamp, ToolRef};

fn text() -> impl Strategy<Value = String> {
    prop_oneof![any::<String>(), "[a-z ]{0,20}", Just(String::new()), Just("{\"command\":\"ls\"}".to_string())]
}

fn block() -> impl Strategy<Value = Block> {
    (
        0..6usize,
        text(),
        proptest::option::of("[a-z0-9-]{1,12}"),
        proptest::option::of(("[a-z-]{1,10}", "[a-z]{1,8}", "[a-z0-9.-]{1,12}")),
        0i64..4_000_000_000_000,
        proptest::option::of(any::<i32>()),
        any::<bool>(),
    )
        .prop_map(|(shape, content, call_id, attribution, millis, native, flag)| {
            let call_id = call_id.unwrap_or_else(|| "call".into());
            let mut b = match shape {
                0 => Block::text(Actor::User, content),
                1 => Block::text(Actor::Assistant, content),
                2 => Block { tool: Some(ToolRef::call(call_id, "Bash")), ..Block::new(Actor::Assistant, Kind::ToolUse, content) },
                3 => Block { tool: Some(ToolRef::result(call_id, flag)), ..Block::new(Actor::User, Kind::ToolResult, content) },
                4 => Block {
                    reasoning: flag.then(|| Reasoning { format: Reasoning::OPENAI_ENCRYPTED.into(), data: content.clone(), scope: Scope::default() }),
                    ..Block::new(Actor::Assistant, Kind::Thinking, content)
                },
                _ => Block::new(Actor::System, if flag { Kind::Status } else { Kind::Error }, content),
            };
            if let Some((p, mp, m)) = attribution {
                b = b.attributed(p, mp, m);
            }
            b.created_at = Timestamp::from_millis(millis).unwrap();
            b.native = native.map(|n| Native { runtime: "codex".into(), data: serde_json::json!({"n": n, "s": "x"}) });
            b
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn blocks_round_trip_through_the_store(blocks in proptest::collection::vec(block(), 0..30)) {
        let store = Store::open_in_memory().unwrap();
        let session = store.create_session(NewSession::new()).unwrap();
        let stored = session.extend(blocks.clone()).unwrap();
        let read = session.blocks().unwrap();
        prop_assert_eq!(&stored, &read);
        for (i, (given, back)) in blocks.iter().zip(&read).enumerate() {
            prop_assert_eq!(back.seq, i as u64);
            let mut expected = given.clone();
            expected.seq = back.seq;
            expected.id = back.id.clone();
            prop_assert_eq!(&expected, back);
            prop_assert_eq!(&Block::from_json(&back.to_value().to_string()).unwrap(), back);
        }
        prop_assert_eq!(store.sessions().unwrap()[0].block_count, blocks.len() as u64);
    }
}
