package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
)

// GetSettings returns the stored settings document, or nil when none was
// ever stored. The document is the app's; the store keeps it as given.
func (db *DB) GetSettings(ctx context.Context) (json.RawMessage, error) {
	var doc string
	err := db.sql.QueryRowContext(ctx, `SELECT doc FROM settings WHERE id = 1`).Scan(&doc)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("get settings: %w", err)
	}
	return rawObject(json.RawMessage(doc)), nil
}

// PutSettings replaces the whole settings document, a JSON object; the app
// merges and validates before calling it.
func (db *DB) PutSettings(ctx context.Context, doc json.RawMessage) error {
	err := db.write(ctx, func(tx *sql.Tx) error { return putSettings(ctx, tx, doc) })
	if err != nil {
		return fmt.Errorf("put settings: %w", err)
	}
	return nil
}

func putSettings(ctx context.Context, tx *sql.Tx, doc json.RawMessage) error {
	doc = rawObject(doc)
	if !json.Valid(doc) {
		return errors.New("settings document is not valid JSON")
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO settings (id, doc) VALUES (1, ?)
		ON CONFLICT (id) DO UPDATE SET doc = excluded.doc`, string(doc))
	return err
}

// GetMeta reads a small app value (window geometry and the like); ok is
// false when the key was never set.
func (db *DB) GetMeta(ctx context.Context, key string) (value string, ok bool, err error) {
	err = db.sql.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, key).Scan(&value)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", false, nil
	case err != nil:
		return "", false, fmt.Errorf("get meta %q: %w", key, err)
	}
	return value, true, nil
}

// SetMeta stores a small app value, replacing any previous one.
func (db *DB) SetMeta(ctx context.Context, key, value string) error {
	err := db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES (?, ?)
			ON CONFLICT (key) DO UPDATE SET value = excluded.value`, key, value)
		return err
	})
	if err != nil {
		return fmt.Errorf("set meta %q: %w", key, err)
	}
	return nil
}
