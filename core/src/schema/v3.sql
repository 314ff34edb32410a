-- sna-history schema, version 3: how each imported file looked to the file system when it was read
-- (length, modification time, inode and device), so that an unchanged file is recognized without
-- reading it. NULL until the file is read again by a version that records it.

ALTER TABLE sources ADD COLUMN file_len INTEGER;
ALTER TABLE sources ADD COLUMN mtime_ns INTEGER;
ALTER TABLE sources ADD COLUMN inode    INTEGER;
ALTER TABLE sources ADD COLUMN device   INTEGER;
-- When that look was taken (ms since the epoch): a file modified within the file system's timestamp
-- granularity of it may have changed again without its time changing, so it is read to be sure.
ALTER TABLE sources ADD COLUMN stat_at  INTEGER;
