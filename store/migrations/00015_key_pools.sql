-- +goose Up
-- docs/BEHAVIOUR.md#key-pools: an endpoint's keys, a JSON list of
-- {"id","label","key","weight","enabled"}; api_key stays, as the first key.
-- Key ids come from endpoint_key_ids, whose AUTOINCREMENT never hands one
-- out twice, so a key's breaker is never inherited by another key.
CREATE TABLE endpoint_key_ids (id INTEGER PRIMARY KEY AUTOINCREMENT);
ALTER TABLE endpoints ADD COLUMN keys TEXT NOT NULL DEFAULT '[]';
-- docs/BEHAVIOUR.md#rotation: the endpoint's weight for the weighted and
-- session strategies; 0 is used only when nothing else is left.
ALTER TABLE endpoints ADD COLUMN weight INTEGER NOT NULL DEFAULT 1;
-- A key kept before pools becomes keys[0], its id the endpoint's own
-- (unique, and taken from the counter so no later key gets it).
INSERT INTO endpoint_key_ids (id) SELECT id FROM endpoints WHERE api_key != '';
UPDATE endpoints SET keys = json_array(json_object('id', id, 'label', '', 'key', api_key,
    'weight', 1, 'enabled', json('true'))) WHERE api_key != '';

-- docs/BEHAVIOUR.md#statistics: what each attempt sent with a pool key
-- added, per bucket and key, beside the per endpoint and model buckets.
CREATE TABLE usage_key_minutes (
    start       INTEGER NOT NULL,
    key_id      INTEGER NOT NULL,
    endpoint_id INTEGER NOT NULL,
    endpoint    TEXT    NOT NULL,
    key         TEXT    NOT NULL, -- its label and mask, never the key
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
    PRIMARY KEY (start, key_id)
) WITHOUT ROWID;
CREATE TABLE usage_key_hours (
    start       INTEGER NOT NULL,
    key_id      INTEGER NOT NULL,
    endpoint_id INTEGER NOT NULL,
    endpoint    TEXT    NOT NULL,
    key         TEXT    NOT NULL,
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
    PRIMARY KEY (start, key_id)
) WITHOUT ROWID;

-- +goose Down
DROP TABLE usage_key_hours;
DROP TABLE usage_key_minutes;
ALTER TABLE endpoints DROP COLUMN weight;
ALTER TABLE endpoints DROP COLUMN keys;
DROP TABLE endpoint_key_ids;
