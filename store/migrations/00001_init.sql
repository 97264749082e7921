-- +goose Up
-- Times are unix milliseconds (UTC); 0 means "not set". JSON columns hold
-- the Go values of types.go marshalled with encoding/json.

CREATE TABLE endpoints (
    id                INTEGER PRIMARY KEY,
    -- BINARY collation: names are unique case-sensitively, as docs/BEHAVIOUR.md#endpoints says.
    name              TEXT    NOT NULL UNIQUE,
    base_url          TEXT    NOT NULL,
    api_key           TEXT    NOT NULL DEFAULT '',
    protocol          TEXT    NOT NULL,
    auth              TEXT    NOT NULL DEFAULT 'auto',
    models            TEXT    NOT NULL DEFAULT '[]',
    model_map         TEXT    NOT NULL DEFAULT '{}',
    enabled           INTEGER NOT NULL DEFAULT 1,
    fast              INTEGER NOT NULL DEFAULT 0,
    fast_sort_order   INTEGER NOT NULL DEFAULT 0,
    sort_order        INTEGER NOT NULL DEFAULT 0,
    breaker_overrides TEXT    NOT NULL DEFAULT '{}',
    created_at        INTEGER NOT NULL,
    updated_at        INTEGER NOT NULL
);

-- One row: the whole settings document, merged with DefaultSettings on read
-- so that a setting added later gets its default without a migration.
CREATE TABLE settings (
    id  INTEGER PRIMARY KEY CHECK (id = 1),
    doc TEXT    NOT NULL
);

CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;

-- docs/BEHAVIOUR.md#breaker-persistence. Goes with its endpoint.
CREATE TABLE breaker_state (
    endpoint_id          INTEGER PRIMARY KEY REFERENCES endpoints(id) ON DELETE CASCADE,
    state                TEXT    NOT NULL,
    reason               TEXT    NOT NULL DEFAULT '',
    opened_at            INTEGER NOT NULL DEFAULT 0,
    until                INTEGER NOT NULL DEFAULT 0,
    consecutive_failures INTEGER NOT NULL DEFAULT 0,
    half_open_successes  INTEGER NOT NULL DEFAULT 0,
    reopens              INTEGER NOT NULL DEFAULT 0,
    updated_at           INTEGER NOT NULL
);

-- docs/BEHAVIOUR.md#manual-control audit trail. No foreign key: the trail outlives a deleted
-- endpoint, which is why the name is kept beside the id.
CREATE TABLE breaker_events (
    id          INTEGER PRIMARY KEY,
    at          INTEGER NOT NULL,
    endpoint_id INTEGER NOT NULL,
    endpoint    TEXT    NOT NULL DEFAULT '',
    cause       TEXT    NOT NULL,
    from_state  TEXT    NOT NULL DEFAULT '',
    to_state    TEXT    NOT NULL DEFAULT '',
    reason      TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX breaker_events_endpoint ON breaker_events (endpoint_id, id);

-- +goose Down
DROP TABLE breaker_events;
DROP TABLE breaker_state;
DROP TABLE meta;
DROP TABLE settings;
DROP TABLE endpoints;
