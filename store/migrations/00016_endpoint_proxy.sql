-- +goose Up
-- docs/BEHAVIOUR.md#upstream-proxy: the proxy an endpoint's requests go
-- through; '' is direct.
ALTER TABLE endpoints ADD COLUMN proxy_url TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE endpoints DROP COLUMN proxy_url;
