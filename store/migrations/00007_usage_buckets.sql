-- +goose Up
-- docs/BEHAVIOUR.md#statistics: what each attempt added, summed per bucket
-- as the request log is written, so statistics never read the log itself.
-- Minute buckets serve the last two days; hour buckets the rest (days are
-- summed from hours in the local time zone). The app decides what a row
-- adds; to the store these are plain sums.
CREATE TABLE usage_minutes (
    start       INTEGER NOT NULL, -- unix ms of the bucket's start (UTC)
    endpoint_id INTEGER NOT NULL,
    endpoint    TEXT    NOT NULL,
    model       TEXT    NOT NULL,
    requests    INTEGER NOT NULL DEFAULT 0,
    errors      INTEGER NOT NULL DEFAULT 0,
    input       INTEGER NOT NULL DEFAULT 0,
    output      INTEGER NOT NULL DEFAULT 0,
    cache_read  INTEGER NOT NULL DEFAULT 0,
    cache_write INTEGER NOT NULL DEFAULT 0,
    reasoning   INTEGER NOT NULL DEFAULT 0,
    cost_usd    REAL    NOT NULL DEFAULT 0,
    unpriced    INTEGER NOT NULL DEFAULT 0, -- attempts with usage but no price
    PRIMARY KEY (start, endpoint_id, model)
) WITHOUT ROWID;
CREATE TABLE usage_hours (
    start       INTEGER NOT NULL,
    endpoint_id INTEGER NOT NULL,
    endpoint    TEXT    NOT NULL,
    model       TEXT    NOT NULL,
    requests    INTEGER NOT NULL DEFAULT 0,
    errors      INTEGER NOT NULL DEFAULT 0,
    input       INTEGER NOT NULL DEFAULT 0,
    output      INTEGER NOT NULL DEFAULT 0,
    cache_read  INTEGER NOT NULL DEFAULT 0,
    cache_write INTEGER NOT NULL DEFAULT 0,
    reasoning   INTEGER NOT NULL DEFAULT 0,
    cost_usd    REAL    NOT NULL DEFAULT 0,
    unpriced    INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (start, endpoint_id, model)
) WITHOUT ROWID;

-- +goose Down
DROP TABLE usage_minutes;
DROP TABLE usage_hours;
