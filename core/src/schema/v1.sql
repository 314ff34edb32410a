-- sna-history schema, version 1.
-- Applied by migrations in core/src/store.rs; `PRAGMA user_version` records the version.

CREATE TABLE sessions (
    rowid       INTEGER PRIMARY KEY,
    id          TEXT NOT NULL UNIQUE,
    title       TEXT,
    cwd         TEXT,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    block_count INTEGER NOT NULL DEFAULT 0
);

-- One row per canonical block. JSON columns hold the serde form of the field.
CREATE TABLE blocks (
    pk             INTEGER PRIMARY KEY,
    session        INTEGER NOT NULL REFERENCES sessions(rowid) ON DELETE CASCADE,
    seq            INTEGER NOT NULL,
    id             TEXT NOT NULL,
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
    native         TEXT,
    UNIQUE (session, seq),
    UNIQUE (session, id)
);

-- Embed bytes, stored once per distinct content.
CREATE TABLE blobs (
    sha256 TEXT PRIMARY KEY,
    size   INTEGER NOT NULL,
    data   BLOB NOT NULL
) WITHOUT ROWID;

-- Which embed ids a session uses, and the bytes each names.
CREATE TABLE session_embeds (
    session  INTEGER NOT NULL REFERENCES sessions(rowid) ON DELETE CASCADE,
    embed_id TEXT NOT NULL,
    sha256   TEXT NOT NULL,
    PRIMARY KEY (session, embed_id)
) WITHOUT ROWID;
CREATE INDEX session_embeds_sha256 ON session_embeds(sha256);

-- Distinct (provider, model_provider, model) seen in a session; '' stands for none.
CREATE TABLE session_attribution (
    session        INTEGER NOT NULL REFERENCES sessions(rowid) ON DELETE CASCADE,
    provider       TEXT NOT NULL DEFAULT '',
    model_provider TEXT NOT NULL DEFAULT '',
    model          TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (session, provider, model_provider, model)
) WITHOUT ROWID;

-- A live native thread that holds the session up to and including `through_seq`.
CREATE TABLE bindings (
    session     INTEGER NOT NULL REFERENCES sessions(rowid) ON DELETE CASCADE,
    runtime     TEXT NOT NULL,
    native_id   TEXT NOT NULL,
    through_seq INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    PRIMARY KEY (session, runtime)
) WITHOUT ROWID;
