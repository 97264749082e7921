-- +goose Up
-- docs/BEHAVIOUR.md#capture-and-resend: a request log row may keep what the
-- client sent and got, secrets removed. Bodies are zstd-compressed, headers
-- JSON objects of lists. A capture goes with its row (retention deletes the
-- row, the cascade its capture); `size` is the bytes it stores, summed in
-- capture_bytes by the triggers so the total cap never scans the table.
ALTER TABLE request_logs ADD COLUMN resent_from INTEGER;

CREATE TABLE captures (
    log_id             INTEGER PRIMARY KEY REFERENCES request_logs(id) ON DELETE CASCADE,
    method             TEXT    NOT NULL DEFAULT '',
    query              TEXT    NOT NULL DEFAULT '',
    request_headers    TEXT    NOT NULL DEFAULT '{}',
    request_body       BLOB,
    request_truncated  INTEGER NOT NULL DEFAULT 0,
    status             INTEGER NOT NULL DEFAULT 0,
    response_headers   TEXT    NOT NULL DEFAULT '{}',
    response_body      BLOB,
    response_truncated INTEGER NOT NULL DEFAULT 0,
    size               INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE capture_bytes (
    id    INTEGER PRIMARY KEY CHECK (id = 1),
    total INTEGER NOT NULL
);
INSERT INTO capture_bytes (id, total) VALUES (1, 0);

-- +goose StatementBegin
CREATE TRIGGER captures_added AFTER INSERT ON captures BEGIN
    UPDATE capture_bytes SET total = total + NEW.size WHERE id = 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER captures_removed AFTER DELETE ON captures BEGIN
    UPDATE capture_bytes SET total = total - OLD.size WHERE id = 1;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER captures_removed;
DROP TRIGGER captures_added;
DROP TABLE capture_bytes;
DROP TABLE captures;
ALTER TABLE request_logs DROP COLUMN resent_from;
