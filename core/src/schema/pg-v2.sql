-- The PostgreSQL schema, version 2: SQLite's schema v5 (the origin of a session, the store's id,
-- the watermarks of `sna sync`) in PostgreSQL's types.
ALTER TABLE sessions ADD COLUMN origin TEXT;

CREATE TABLE store_meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
-- 32 hex digits (gen_random_uuid() would need PostgreSQL 13).
INSERT INTO store_meta (key, value) VALUES ('store_id', md5(random()::text || clock_timestamp()::text || pg_backend_pid()::text));

CREATE TABLE sync_marks (
    source            TEXT NOT NULL,
    session           BIGINT NOT NULL REFERENCES sessions(rowid) ON DELETE CASCADE,
    block_count       BIGINT NOT NULL,
    last_id           TEXT,
    source_updated_at BIGINT NOT NULL,
    synced_at         BIGINT NOT NULL,
    PRIMARY KEY (source, session)
);
