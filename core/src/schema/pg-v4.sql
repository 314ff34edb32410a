-- The PostgreSQL schema, version 4: SQLite's schema v7 (token usage) in PostgreSQL's terms.
CREATE TABLE usage (
    block          BIGINT PRIMARY KEY REFERENCES blocks(pk) ON DELETE CASCADE,
    session        BIGINT NOT NULL,
    at             BIGINT NOT NULL,
    runtime        TEXT NOT NULL,
    model_provider TEXT,
    model          TEXT,
    turn           TEXT,
    dedup          TEXT,
    sidechain      BIGINT NOT NULL,
    input          BIGINT NOT NULL,
    output         BIGINT NOT NULL,
    cache_read     BIGINT NOT NULL,
    cache_write    BIGINT NOT NULL,
    reasoning      BIGINT NOT NULL,
    cost_nano      BIGINT,
    running        TEXT
);
CREATE INDEX usage_at ON usage (at);
CREATE INDEX usage_session ON usage (session);
-- The copies of one response, found by their key.
CREATE INDEX usage_dedup ON usage (dedup) WHERE dedup IS NOT NULL;

INSERT INTO store_meta (key, value) VALUES ('usage_from', '0');
