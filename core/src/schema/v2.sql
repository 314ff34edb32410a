-- sna-history schema, version 2: the native files a session was imported from, so that importing
-- a file again adds only what it gained.

CREATE TABLE sources (
    path       TEXT PRIMARY KEY,
    session    INTEGER NOT NULL REFERENCES sessions(rowid) ON DELETE CASCADE,
    runtime    TEXT NOT NULL,
    -- Bytes and lines read, and the SHA-256 (hex) of those bytes.
    size       INTEGER NOT NULL,
    lines      INTEGER NOT NULL,
    sha256     TEXT NOT NULL,
    updated_at INTEGER NOT NULL
);
