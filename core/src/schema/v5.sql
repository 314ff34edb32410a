-- sna-history schema, version 5: where a session came from, and what `sna sync` has copied.

-- The machine a session was first written on, recorded when `sna sync` copies it into another
-- store; NULL for a session made in this store.
ALTER TABLE sessions ADD COLUMN origin TEXT;

-- Facts about the store itself. `store_id` (32 hex digits, random) names it to the stores it syncs with.
CREATE TABLE store_meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;
INSERT INTO store_meta (key, value) VALUES ('store_id', lower(hex(randomblob(16))));

-- A sync's watermark, kept in the store the blocks were copied into: session `session` here and
-- session of the same id in store `source` held the same first `block_count` blocks (the last of
-- them `last_id`) when the source's session was last updated at `source_updated_at`. Written in
-- the transaction that copies the blocks.
CREATE TABLE sync_marks (
    source            TEXT NOT NULL,
    session           INTEGER NOT NULL REFERENCES sessions(rowid) ON DELETE CASCADE,
    block_count       INTEGER NOT NULL,
    last_id           TEXT,
    source_updated_at INTEGER NOT NULL,
    synced_at         INTEGER NOT NULL,
    PRIMARY KEY (source, session)
) WITHOUT ROWID;
