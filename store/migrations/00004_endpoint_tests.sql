-- +goose Up
-- docs/BEHAVIOUR.md#health: the last Test result of each endpoint, shown by
-- health across restarts. Goes with its endpoint.
CREATE TABLE endpoint_tests (
    endpoint_id INTEGER PRIMARY KEY REFERENCES endpoints(id) ON DELETE CASCADE,
    at          INTEGER NOT NULL,
    ok          INTEGER NOT NULL,
    status      INTEGER NOT NULL DEFAULT 0,
    latency_ms  INTEGER NOT NULL DEFAULT 0,
    message     TEXT    NOT NULL DEFAULT ''
);

-- +goose Down
DROP TABLE endpoint_tests;
