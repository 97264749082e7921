-- +goose Up
-- docs/BEHAVIOUR.md#refused-fields: the parts of a request an endpoint
-- refuses, learned or entered by hand, as a JSON list of
-- {"drop","at","error","source"}.
ALTER TABLE endpoints ADD COLUMN drops TEXT NOT NULL DEFAULT '[]';

-- +goose Down
ALTER TABLE endpoints DROP COLUMN drops;
