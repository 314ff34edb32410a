-- sna-history schema, version 8: the full-text index in a form every SQLite from 3.37 on can read
-- and write. Version 6 made it contentless with `contentless_delete = 1`, an option SQLite knows
-- only since 3.43: older SQLite (Debian 12, Ubuntu 22.04, the Python `sqlite3` module built on them,
-- and the tools built on those) could not read the schema of that table, and a deleted block or
-- session failed in the trigger below. The index now keeps its words itself (the normalized words
-- of each block, as version 6 describes them), so that a row can be deleted by any SQLite.
DROP TRIGGER blocks_search_delete;
DROP TABLE block_search;
CREATE VIRTUAL TABLE block_search USING fts5(text, tag, tokenize = 'ascii');

-- A deleted block leaves the index with it (a deleted session deletes its blocks).
CREATE TRIGGER blocks_search_delete AFTER DELETE ON blocks BEGIN
    DELETE FROM block_search WHERE rowid = old.pk;
END;

-- Every block is indexed again when the store is next opened, a batch per transaction.
INSERT OR REPLACE INTO store_meta (key, value) VALUES ('search_index_from', '0');
