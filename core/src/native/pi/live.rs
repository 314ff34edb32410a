//! The live driver (`pi --mode rpc`: JSONL commands on stdin, responses and events on stdout) is
//! not written yet: the adapter keeps the trait's `UNSUPPORTED` default for `live` and
//! `event_blocks`. FORMAT.md says what the driver will rely on.
