-- +goose NO TRANSACTION
-- docs/BEHAVIOUR.md#bad-input-and-faults: endpoint ids are never reused. A
-- rowid table hands the highest id out again after it is deleted, so a
-- stale UI tab, a breaker event or a log row could name the wrong endpoint;
-- AUTOINCREMENT never does. SQLite cannot add it to a table, so the table is
-- rebuilt: made anew, filled, the old one dropped and the new one renamed,
-- keeping every row and id.
--
-- foreign_keys must be off for the rebuild: with it on, dropping the old
-- table would cascade into every table that references endpoints
-- (breaker_state and any later one), deleting their rows. The pragma does
-- nothing inside a transaction, hence NO TRANSACTION and the explicit
-- BEGIN/COMMIT; goose runs all of it on one connection, and the last
-- statement turns the pragma back on for that connection. Tables that
-- reference endpoints are not touched: their rows keep their ids, and their
-- REFERENCES endpoints(id) names the rebuilt table once it is renamed.

-- +goose Up
PRAGMA foreign_keys = OFF;
BEGIN IMMEDIATE;

CREATE TABLE endpoints_new (
    id                INTEGER PRIMARY KEY AUTOINCREMENT,
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
INSERT INTO endpoints_new (id, name, base_url, api_key, protocol, auth, models, model_map,
    enabled, fast, fast_sort_order, sort_order, breaker_overrides, created_at, updated_at)
SELECT id, name, base_url, api_key, protocol, auth, models, model_map,
    enabled, fast, fast_sort_order, sort_order, breaker_overrides, created_at, updated_at
FROM endpoints;
DROP TABLE endpoints;
ALTER TABLE endpoints_new RENAME TO endpoints;

-- Ids deleted before this migration may still be named by the audit trail
-- and the request log: the sequence starts above those too.
INSERT INTO sqlite_sequence (name, seq)
SELECT 'endpoints', 0 WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'endpoints');
UPDATE sqlite_sequence SET seq = max(seq,
    coalesce((SELECT max(id) FROM endpoints), 0),
    coalesce((SELECT max(endpoint_id) FROM breaker_events), 0),
    coalesce((SELECT max(endpoint_id) FROM request_logs), 0))
WHERE name = 'endpoints';

-- Nothing may point nowhere: a row here fails the CHECK and the migration
-- (the database is then left as it was, and its backup beside it).
CREATE TEMP TABLE fk_violations (n INTEGER CHECK (n = 0));
INSERT INTO fk_violations SELECT count(*) FROM pragma_foreign_key_check;
DROP TABLE fk_violations;

COMMIT;
PRAGMA foreign_keys = ON;

-- +goose Down
PRAGMA foreign_keys = OFF;
BEGIN IMMEDIATE;

CREATE TABLE endpoints_old (
    id                INTEGER PRIMARY KEY,
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
INSERT INTO endpoints_old (id, name, base_url, api_key, protocol, auth, models, model_map,
    enabled, fast, fast_sort_order, sort_order, breaker_overrides, created_at, updated_at)
SELECT id, name, base_url, api_key, protocol, auth, models, model_map,
    enabled, fast, fast_sort_order, sort_order, breaker_overrides, created_at, updated_at
FROM endpoints;
DROP TABLE endpoints;
ALTER TABLE endpoints_old RENAME TO endpoints;
DELETE FROM sqlite_sequence WHERE name = 'endpoints';

COMMIT;
PRAGMA foreign_keys = ON;
