-- +goose Up
-- Every index is one more b-tree each logged request writes to, on the same
-- cores that serve requests (docs/BENCHMARKS.md: the log writer showed in
-- the proxy's p99). Status and model filters scan newest-first by id
-- instead: at the retention limit of 50 000 rows that is a few
-- milliseconds for an admin page, paid only when someone filters.
DROP INDEX request_logs_status;
DROP INDEX request_logs_model_asked;
DROP INDEX request_logs_model_forwarded;

-- +goose Down
CREATE INDEX request_logs_status          ON request_logs (status, id);
CREATE INDEX request_logs_model_asked     ON request_logs (model_asked, id);
CREATE INDEX request_logs_model_forwarded ON request_logs (model_forwarded, id);
