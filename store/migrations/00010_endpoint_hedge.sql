-- +goose Up
-- docs/BEHAVIOUR.md#hedging: an endpoint may race its first attempts after
-- its own delay; -1 keeps the setting's.
ALTER TABLE endpoints ADD COLUMN hedge_after_ms INTEGER NOT NULL DEFAULT -1;

-- +goose Down
ALTER TABLE endpoints DROP COLUMN hedge_after_ms;
