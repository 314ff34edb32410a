-- sna-history schema, version 7: token usage. One row per block that reports what a model
-- response consumed (model/usage.rs reads it from the runtime's own data), written with the block.
-- `dedup`: rows with the same key are one response written more than once, counted once (the
-- largest copy, a side chain's copy last); `cost_nano`: the cost the runtime reported, in 10^-9 USD;
-- `running`: Codex's running total after the response.
CREATE TABLE usage (
    block          INTEGER PRIMARY KEY REFERENCES blocks(pk) ON DELETE CASCADE,
    session        INTEGER NOT NULL,
    at             INTEGER NOT NULL,
    runtime        TEXT NOT NULL,
    model_provider TEXT,
    model          TEXT,
    turn           TEXT,
    dedup          TEXT,
    sidechain      INTEGER NOT NULL,
    input          INTEGER NOT NULL,
    output         INTEGER NOT NULL,
    cache_read     INTEGER NOT NULL,
    cache_write    INTEGER NOT NULL,
    reasoning      INTEGER NOT NULL,
    cost_nano      INTEGER,
    running        TEXT
);
CREATE INDEX usage_at ON usage (at);
CREATE INDEX usage_session ON usage (session);
-- The copies of one response, found by their key.
CREATE INDEX usage_dedup ON usage (dedup) WHERE dedup IS NOT NULL;

-- The blocks stored before this version are read for usage when the store is next opened, from
-- this pk on, a batch per transaction; the row is gone once every block is read.
INSERT INTO store_meta (key, value) VALUES ('usage_from', '0');
