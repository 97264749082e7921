-- +goose Up
-- docs/BEHAVIOUR.md#cost: an endpoint's price multiplier scales the cost of
-- what it answers (a relay that bills a share of the official price).
-- Existing endpoints cost the listed price.
ALTER TABLE endpoints ADD COLUMN price_multiplier REAL NOT NULL DEFAULT 1;

-- +goose Down
ALTER TABLE endpoints DROP COLUMN price_multiplier;
