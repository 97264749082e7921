-- +goose Up
-- docs/BEHAVIOUR.md#hedging: the statistics count the hedges each endpoint
-- raced, as the request log is written.
ALTER TABLE usage_minutes ADD COLUMN hedges INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage_hours ADD COLUMN hedges INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE usage_minutes DROP COLUMN hedges;
ALTER TABLE usage_hours DROP COLUMN hedges;
