-- +goose Up
-- docs/BEHAVIOUR.md#key-pools: an endpoint's keys, a JSON list of
-- {"id","label","key","weight","enabled"}; api_key stays, as the first key.
-- Key ids come from endpoint_key_ids, whose AUTOINCREMENT never hands one
-- out twice, so a key's breaker is never inherited by another key.
CREATE TABLE endpoint_key_ids (id INTEGER PRIMARY KEY AUTOINCREMENT);
ALTER TABLE endpoints ADD COLUMN keys TEXT NOT NULL DEFAULT '[]';
-- docs/BEHAVIOUR.md#rotation: the endpoint's weight for the weighted and
-- session strategies; 0 is used only when nothing else is left.
ALTER TABLE endpoints ADD COLUMN weight INTEGER NOT NULL DEFAULT 1;
-- A key kept before pools becomes keys[0], its id the endpoint's own
-- (unique, and taken from the counter so no later key gets it).
INSERT INTO endpoint_key_ids (id) SELECT id FROM endpoints WHERE api_key != '';
UPDATE endpoints SET keys = json_array(json_object('id', id, 'label', '', 'key', api_key,
    'weight', 1, 'enabled', json('true'))) WHERE api_key != '';

-- +goose Down
ALTER TABLE endpoints DROP COLUMN weight;
ALTER TABLE endpoints DROP COLUMN keys;
DROP TABLE endpoint_key_ids;
