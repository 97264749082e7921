-- +goose Up
-- docs/BEHAVIOUR.md#request-log: a row's usage and cost summed over all its
-- attempts, written with the row. Rows from before this version keep NULL
-- (shown as null): filling them in would read and rewrite every row's
-- history here, at start-up, which is to grow with the configuration only
-- (docs/BEHAVIOUR.md#bad-input-and-faults). cost_usd is NULL as well when
-- no attempt had a price: unknown, never 0.
ALTER TABLE request_logs ADD COLUMN usage_input       INTEGER;
ALTER TABLE request_logs ADD COLUMN usage_output      INTEGER;
ALTER TABLE request_logs ADD COLUMN usage_cache_read  INTEGER;
ALTER TABLE request_logs ADD COLUMN usage_cache_write INTEGER;
ALTER TABLE request_logs ADD COLUMN usage_reasoning   INTEGER;
ALTER TABLE request_logs ADD COLUMN usage_estimated   INTEGER;
ALTER TABLE request_logs ADD COLUMN cost_usd          REAL;

-- docs/BEHAVIOUR.md#statistics: requests are client requests, counted once
-- under the attempt that answered (succeeded: those that ended 2xx);
-- attempts are what requests counted before. Buckets written before keep
-- their figures: each attempt was a request then, and succeeded is what
-- did not fail. The bucket tables are small (one row per hour, endpoint
-- and model), so this costs milliseconds.
ALTER TABLE usage_minutes ADD COLUMN attempts  INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage_minutes ADD COLUMN succeeded INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage_hours   ADD COLUMN attempts  INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage_hours   ADD COLUMN succeeded INTEGER NOT NULL DEFAULT 0;
UPDATE usage_minutes SET attempts = requests, succeeded = requests - errors;
UPDATE usage_hours   SET attempts = requests, succeeded = requests - errors;

-- +goose Down
ALTER TABLE usage_hours   DROP COLUMN succeeded;
ALTER TABLE usage_hours   DROP COLUMN attempts;
ALTER TABLE usage_minutes DROP COLUMN succeeded;
ALTER TABLE usage_minutes DROP COLUMN attempts;
ALTER TABLE request_logs DROP COLUMN cost_usd;
ALTER TABLE request_logs DROP COLUMN usage_estimated;
ALTER TABLE request_logs DROP COLUMN usage_reasoning;
ALTER TABLE request_logs DROP COLUMN usage_cache_write;
ALTER TABLE request_logs DROP COLUMN usage_cache_read;
ALTER TABLE request_logs DROP COLUMN usage_output;
ALTER TABLE request_logs DROP COLUMN usage_input;
