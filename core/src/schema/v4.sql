-- sna-history schema, version 4: a block's position is its rowid, and UUID block ids take 16 bytes.
--
-- `pk` = session << 32 | seq. The table's own b-tree is then ordered by (session, seq): reading a
-- session in order is a range of it, appending to a session writes at the end of its range, and
-- the (session, seq) index of versions 1-3 is gone (one b-tree less to write per block). Session
-- rowids stay below 2^31 and a session below 2^32 blocks (the store refuses more). `seq` is kept
-- as a virtual column computed from `pk` (no bytes stored).
--
-- `id` holds a block id in its lowercase hyphenated UUID form (what the store generates and
-- imports derive, 36 characters) as its 16 bytes (a BLOB), and any other id as TEXT: a BLOB never
-- equals a TEXT, so both kinds stay unique per session and every id reads back as it was given.

CREATE TABLE blocks_v4 (
    pk             INTEGER PRIMARY KEY,
    session        INTEGER NOT NULL REFERENCES sessions(rowid) ON DELETE CASCADE,
    seq            INTEGER GENERATED ALWAYS AS (pk & 4294967295) VIRTUAL,
    id             BLOB NOT NULL,
    actor          TEXT NOT NULL,
    kind           TEXT NOT NULL,
    content        TEXT NOT NULL,
    tool           TEXT,
    reasoning      TEXT,
    embeds         TEXT,
    provider       TEXT,
    model_provider TEXT,
    model          TEXT,
    message_id     TEXT,
    turn_id        TEXT,
    created_at     INTEGER NOT NULL,
    native         TEXT
);

INSERT INTO blocks_v4 (pk, session, id, actor, kind, content, tool, reasoning, embeds, provider, model_provider, model,
                       message_id, turn_id, created_at, native)
SELECT (session << 32) | seq, session,
       CASE WHEN typeof(id) = 'text' AND length(id) = 36
                 AND substr(id, 9, 1) = '-' AND substr(id, 14, 1) = '-' AND substr(id, 19, 1) = '-' AND substr(id, 24, 1) = '-'
                 AND length(replace(id, '-', '')) = 32 AND replace(id, '-', '') NOT GLOB '*[^0-9a-f]*'
            THEN unhex(replace(id, '-', ''))
            ELSE id END,
       actor, kind, content, tool, reasoning, embeds, provider, model_provider, model, message_id, turn_id, created_at, native
FROM blocks ORDER BY session, seq;

DROP TABLE blocks;
ALTER TABLE blocks_v4 RENAME TO blocks;
CREATE UNIQUE INDEX blocks_session_id ON blocks (session, id);
