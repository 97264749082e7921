-- +goose Up
-- docs/BEHAVIOUR.md#balance: an endpoint's balance connector, a JSON object
-- the app reads ({} is none); the last reading of each endpoint, a JSON
-- document the app writes, going with its endpoint; and whether a balance
-- reading holds a breaker open, so that a reading with credit closes it
-- after a restart too.
ALTER TABLE endpoints ADD COLUMN balance TEXT NOT NULL DEFAULT '{}';

CREATE TABLE balance_readings (
    endpoint_id INTEGER PRIMARY KEY REFERENCES endpoints(id) ON DELETE CASCADE,
    at          INTEGER NOT NULL,
    reading     TEXT    NOT NULL
);

ALTER TABLE breaker_state ADD COLUMN balance INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE breaker_state DROP COLUMN balance;
DROP TABLE balance_readings;
ALTER TABLE endpoints DROP COLUMN balance;
