-- +goose Up
-- docs/BEHAVIOUR.md#backup-and-sync: one row, where to sync and what the
-- last sync saw. The password and passphrase are kept as endpoint keys are
-- (in this file, mode 0600) and never shown. Times are unix milliseconds.
CREATE TABLE sync (
    id              INTEGER PRIMARY KEY CHECK (id = 1),
    url             TEXT    NOT NULL DEFAULT '',
    user            TEXT    NOT NULL DEFAULT '',
    password        TEXT    NOT NULL DEFAULT '',
    passphrase      TEXT    NOT NULL DEFAULT '',
    -- The last sync: when, which way, the hash of the local configuration
    -- and of the remote file's bytes it left behind, and the remote file's
    -- ETag and modification time as the server gave them.
    last_sync       INTEGER NOT NULL DEFAULT 0,
    last_action     TEXT    NOT NULL DEFAULT '',
    local_hash      TEXT    NOT NULL DEFAULT '',
    remote_hash     TEXT    NOT NULL DEFAULT '',
    remote_etag     TEXT    NOT NULL DEFAULT '',
    remote_modified INTEGER NOT NULL DEFAULT 0,
    -- A push or pull in progress holds the row until then: one at a time.
    busy_until      INTEGER NOT NULL DEFAULT 0
);

-- +goose Down
DROP TABLE sync;
