-- sna-history schema, version 6: the full-text index of the blocks' text (store/fts.rs has its
-- rules). One row per block, its rowid the block's `pk`; `text` holds the block's words normalized
-- and separated by single spaces (FTS5's `ascii` tokenizer splits on exactly those), `tag` is `bk`
-- for runtime bookkeeping and empty otherwise. Contentless: the words are not stored twice.
CREATE VIRTUAL TABLE block_search USING fts5(text, tag, content = '', contentless_delete = 1, tokenize = 'ascii');

-- A deleted block leaves the index with it (a deleted session deletes its blocks).
CREATE TRIGGER blocks_search_delete AFTER DELETE ON blocks BEGIN
    DELETE FROM block_search WHERE rowid = old.pk;
END;

-- The blocks stored before this version are indexed when the store is next opened, from this pk
-- on, a batch per transaction; the row is gone once every block is in the index.
INSERT INTO store_meta (key, value) VALUES ('search_index_from', '0');
