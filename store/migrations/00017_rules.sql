-- +goose Up
-- docs/BEHAVIOUR.md#routing-rules: an endpoint's tags, a JSON list of
-- strings that a rule's then.endpoints names as tag:<tag>.
ALTER TABLE endpoints ADD COLUMN tags TEXT NOT NULL DEFAULT '[]';
-- The routing rule that decided a request's candidates; '' when none did
-- (no rule matched, or the request named its endpoint).
ALTER TABLE request_logs ADD COLUMN rule TEXT NOT NULL DEFAULT '';

-- docs/BEHAVIOUR.md#statistics, group=rule: every attempt's figures summed
-- per bucket and rule ('' for requests no rule decided), kept as long as
-- the endpoint buckets. Rows logged before this version are not counted.
CREATE TABLE usage_rule_minutes (
    start       INTEGER NOT NULL,
    rule        TEXT    NOT NULL,
    requests    INTEGER NOT NULL DEFAULT 0,
    succeeded   INTEGER NOT NULL DEFAULT 0,
    attempts    INTEGER NOT NULL DEFAULT 0,
    errors      INTEGER NOT NULL DEFAULT 0,
    input       INTEGER NOT NULL DEFAULT 0,
    output      INTEGER NOT NULL DEFAULT 0,
    cache_read  INTEGER NOT NULL DEFAULT 0,
    cache_write INTEGER NOT NULL DEFAULT 0,
    reasoning   INTEGER NOT NULL DEFAULT 0,
    cost_usd    REAL    NOT NULL DEFAULT 0,
    unpriced    INTEGER NOT NULL DEFAULT 0,
    hedges      INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (start, rule)
) WITHOUT ROWID;
CREATE TABLE usage_rule_hours (
    start       INTEGER NOT NULL,
    rule        TEXT    NOT NULL,
    requests    INTEGER NOT NULL DEFAULT 0,
    succeeded   INTEGER NOT NULL DEFAULT 0,
    attempts    INTEGER NOT NULL DEFAULT 0,
    errors      INTEGER NOT NULL DEFAULT 0,
    input       INTEGER NOT NULL DEFAULT 0,
    output      INTEGER NOT NULL DEFAULT 0,
    cache_read  INTEGER NOT NULL DEFAULT 0,
    cache_write INTEGER NOT NULL DEFAULT 0,
    reasoning   INTEGER NOT NULL DEFAULT 0,
    cost_usd    REAL    NOT NULL DEFAULT 0,
    unpriced    INTEGER NOT NULL DEFAULT 0,
    hedges      INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (start, rule)
) WITHOUT ROWID;

-- +goose Down
DROP TABLE usage_rule_hours;
DROP TABLE usage_rule_minutes;
ALTER TABLE request_logs DROP COLUMN rule;
ALTER TABLE endpoints DROP COLUMN tags;
