-- The PostgreSQL schema, version 3: SQLite's schema v6 (the full-text index) in PostgreSQL's
-- terms: a tsvector per block written lexeme by lexeme (store/fts.rs), a GIN index over it.
CREATE TABLE block_search (
    pk          BIGINT PRIMARY KEY REFERENCES blocks(pk) ON DELETE CASCADE,
    doc         TSVECTOR NOT NULL,
    bookkeeping BOOLEAN NOT NULL
);
CREATE INDEX block_search_doc ON block_search USING GIN (doc);

INSERT INTO store_meta (key, value) VALUES ('search_index_from', '0');
