-- +goose Up
-- docs/BEHAVIOUR.md#request-log: one row per client request, written in batches by LogWriter.
-- endpoint_id/endpoint are the final endpoint (0/'' when none was chosen);
-- no foreign key, so logs outlive a deleted endpoint.
CREATE TABLE request_logs (
    id              INTEGER PRIMARY KEY,
    at              INTEGER NOT NULL,
    protocol        TEXT    NOT NULL DEFAULT '',
    path            TEXT    NOT NULL DEFAULT '',
    model_asked     TEXT    NOT NULL DEFAULT '',
    model_forwarded TEXT    NOT NULL DEFAULT '',
    explicit        INTEGER NOT NULL DEFAULT 0,
    endpoint_id     INTEGER NOT NULL DEFAULT 0,
    endpoint        TEXT    NOT NULL DEFAULT '',
    status          INTEGER NOT NULL DEFAULT 0,
    attempts        INTEGER NOT NULL DEFAULT 0,
    duration_ms     INTEGER NOT NULL DEFAULT 0,
    ttfb_ms         INTEGER NOT NULL DEFAULT 0,
    stream          INTEGER NOT NULL DEFAULT 0,
    stream_end      TEXT    NOT NULL DEFAULT '',
    tokens_in       INTEGER NOT NULL DEFAULT 0,
    tokens_out      INTEGER NOT NULL DEFAULT 0,
    sent_upstream   INTEGER NOT NULL DEFAULT 0,
    client_gone     INTEGER NOT NULL DEFAULT 0,
    error           TEXT    NOT NULL DEFAULT '',
    routing         TEXT,
    history         TEXT
);
-- The list filters page by id (newest first), so each filter index ends in id.
CREATE INDEX request_logs_endpoint        ON request_logs (endpoint, id);
CREATE INDEX request_logs_status          ON request_logs (status, id);
CREATE INDEX request_logs_model_asked     ON request_logs (model_asked, id);
CREATE INDEX request_logs_model_forwarded ON request_logs (model_forwarded, id);
-- Stats (per minute since a time) and age-based retention.
CREATE INDEX request_logs_at              ON request_logs (at);

-- +goose Down
DROP TABLE request_logs;
