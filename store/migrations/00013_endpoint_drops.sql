-- +goose Up
-- docs/BEHAVIOUR.md#refused-fields: the parts of a request an endpoint
-- refuses, learned or entered by hand, as a JSON list of
-- {"drop","at","error","source"}.
ALTER TABLE endpoints ADD COLUMN drops TEXT NOT NULL DEFAULT '[]';
-- docs/BEHAVIOUR.md#the-answers-model: what an answer naming another model
-- than the one forwarded does: '' or 'record' records it, 'fail' fails it.
ALTER TABLE endpoints ADD COLUMN on_model_mismatch TEXT NOT NULL DEFAULT '';
-- The model the answer named when it is another than the one forwarded.
ALTER TABLE request_logs ADD COLUMN model_answered TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE request_logs DROP COLUMN model_answered;
ALTER TABLE endpoints DROP COLUMN on_model_mismatch;
ALTER TABLE endpoints DROP COLUMN drops;
