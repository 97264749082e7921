package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Backup and sync (docs/BEHAVIOUR.md#backup-and-sync): where to sync, what
// the last sync saw, one push or pull at a time, and the import that makes
// the stored configuration a file's.

// SyncConfig is where and how to sync. Password and Passphrase are secrets
// like endpoint keys: stored here, never returned by the admin API.
type SyncConfig struct {
	URL        string
	User       string
	Password   string
	Passphrase string
}

// SyncState is what the last sync left behind; the zero value when there
// was none.
type SyncState struct {
	At     time.Time
	Action string // push | pull
	// LocalHash is the hash of the local configuration as the sync left it,
	// RemoteHash that of the remote file's bytes.
	LocalHash  string
	RemoteHash string
	// RemoteETag and RemoteModified are the remote file's as the server
	// reported them ("" and zero when it did not).
	RemoteETag     string
	RemoteModified time.Time
}

// GetSync returns the sync configuration and the last sync's state; both
// are zero when sync was never set up.
func (db *DB) GetSync(ctx context.Context) (SyncConfig, SyncState, error) {
	var c SyncConfig
	var s SyncState
	var at, modified int64
	err := db.sql.QueryRowContext(ctx, `SELECT url, user, password, passphrase, last_sync, last_action,
		local_hash, remote_hash, remote_etag, remote_modified FROM sync WHERE id = 1`).
		Scan(&c.URL, &c.User, &c.Password, &c.Passphrase, &at, &s.Action, &s.LocalHash, &s.RemoteHash, &s.RemoteETag, &modified)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return SyncConfig{}, SyncState{}, nil
	case err != nil:
		return SyncConfig{}, SyncState{}, fmt.Errorf("get sync settings: %w", err)
	}
	s.At, s.RemoteModified = fromMillis(at), fromMillis(modified)
	return c, s, nil
}

// PutSyncConfig replaces the sync configuration. With reset, the last
// sync's state is forgotten too: it described another remote.
func (db *DB) PutSyncConfig(ctx context.Context, c SyncConfig, reset bool) error {
	err := db.write(ctx, func(tx *sql.Tx) error {
		if err := ensureSyncRow(ctx, tx); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE sync SET url = ?, user = ?, password = ?, passphrase = ? WHERE id = 1`,
			c.URL, c.User, c.Password, c.Passphrase); err != nil {
			return err
		}
		if reset {
			return putSyncState(ctx, tx, SyncState{})
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("put sync settings: %w", err)
	}
	return nil
}

// PutSyncState records what a sync left behind.
func (db *DB) PutSyncState(ctx context.Context, s SyncState) error {
	err := db.write(ctx, func(tx *sql.Tx) error {
		if err := ensureSyncRow(ctx, tx); err != nil {
			return err
		}
		return putSyncState(ctx, tx, s)
	})
	if err != nil {
		return fmt.Errorf("record the sync: %w", err)
	}
	return nil
}

func putSyncState(ctx context.Context, tx *sql.Tx, s SyncState) error {
	_, err := tx.ExecContext(ctx, `UPDATE sync SET last_sync = ?, last_action = ?, local_hash = ?, remote_hash = ?,
		remote_etag = ?, remote_modified = ? WHERE id = 1`,
		toMillis(s.At), s.Action, s.LocalHash, s.RemoteHash, s.RemoteETag, toMillis(s.RemoteModified))
	return err
}

func ensureSyncRow(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO sync (id) VALUES (1) ON CONFLICT (id) DO NOTHING`)
	return err
}

// LockSync takes the right to push or pull until now+hold, unless another
// holds it now; ok reports whether it was taken. The hold ends with
// UnlockSync or, should the process die, by itself at its time.
func (db *DB) LockSync(ctx context.Context, now time.Time, hold time.Duration) (ok bool, err error) {
	err = db.write(ctx, func(tx *sql.Tx) error {
		if err := ensureSyncRow(ctx, tx); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `UPDATE sync SET busy_until = ? WHERE id = 1 AND busy_until <= ?`,
			toMillis(now.Add(hold)), toMillis(now))
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		ok = n == 1
		return err
	})
	if err != nil {
		return false, fmt.Errorf("start a sync: %w", err)
	}
	return ok, nil
}

// UnlockSync ends the hold LockSync took.
func (db *DB) UnlockSync(ctx context.Context) error {
	err := db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE sync SET busy_until = 0 WHERE id = 1`)
		return err
	})
	if err != nil {
		return fmt.Errorf("end a sync: %w", err)
	}
	return nil
}

// Replace makes the stored configuration the given one, in one
// transaction: an endpoint whose name is given is updated with the fields
// its patch sets (so a patch without a key keeps the stored key), one
// whose name is not given is deleted, and the rest are created; settings,
// unless nil, replaces the stored document. It returns the ids it deleted.
// Errors are as Import's, and then nothing is changed.
func (db *DB) Replace(ctx context.Context, endpoints []EndpointPatch, settings json.RawMessage) ([]int64, error) {
	keep, err := fileNames(endpoints)
	if err != nil {
		return nil, err
	}
	var removed []int64
	err = db.write(ctx, func(tx *sql.Tx) error {
		type named struct {
			id   int64
			name string
		}
		stored, err := queryAll(ctx, tx, "list endpoints", func(r *sql.Rows) (n named, err error) {
			return n, r.Scan(&n.id, &n.name)
		}, `SELECT id, name FROM endpoints ORDER BY id`)
		if err != nil {
			return err
		}
		for _, e := range stored {
			if _, ok := keep[e.name]; ok {
				continue
			}
			// Its breaker state goes with it (foreign key), as DeleteEndpoint's.
			if _, err := tx.ExecContext(ctx, `DELETE FROM endpoints WHERE id = ?`, e.id); err != nil {
				return err
			}
			removed = append(removed, e.id)
		}
		for i, p := range endpoints {
			if err := importEndpoint(ctx, tx, p); err != nil {
				var verr *ValidationError
				if errors.As(err, &verr) {
					return atPosition(i, p, verr)
				}
				return err
			}
		}
		if settings != nil {
			return putSettings(ctx, tx, settings)
		}
		return nil
	})
	if err != nil {
		return nil, endpointError("replace the configuration", err)
	}
	return removed, nil
}

// CheckReplace refuses what Replace would refuse of endpoints, without the
// database: stored is the endpoints stored now (which Replace matches by
// name). It returns Replace's error for the first endpoint Replace would
// stop at — a name given twice, or an endpoint that would not be valid
// once created or updated — so that a preview says what the import would.
func CheckReplace(stored []Endpoint, endpoints []EndpointPatch) error {
	if _, err := fileNames(endpoints); err != nil {
		return err
	}
	byName := make(map[string]Endpoint, len(stored))
	for _, e := range stored {
		byName[e.Name] = e
	}
	for i, p := range endpoints {
		var verr *ValidationError
		if e, ok := byName[deref(p.Name)]; ok && p.Name != nil {
			before := e.Keys
			applyPatch(&e, p) // e is a copy: validation normalises it
			if verr = mergeKeys(&e, before, p); verr == nil {
				verr = validateEndpoint(&e)
			}
		} else {
			_, verr = newEndpoint(p)
		}
		if verr != nil {
			return atPosition(i, p, verr)
		}
	}
	return nil
}

// fileNames maps the names a file gives to their places, refusing one
// given twice.
func fileNames(endpoints []EndpointPatch) (map[string]int, error) {
	keep := make(map[string]int, len(endpoints))
	for i, p := range endpoints {
		if p.Name == nil {
			continue
		}
		if j, ok := keep[*p.Name]; ok {
			return nil, &ValidationError{Field: fmt.Sprintf("endpoints[%d].name", i), Code: CodeDuplicateName,
				Message: fmt.Sprintf("endpoint %d (%s): the name %q appears twice in this file (endpoints %d and %d); "+
					"each endpoint may appear once", i+1, *p.Name, *p.Name, j+1, i+1)}
		}
		keep[*p.Name] = i
	}
	return keep, nil
}

// atPosition names the endpoint of a file that verr is about.
func atPosition(i int, p EndpointPatch, verr *ValidationError) *ValidationError {
	return &ValidationError{Field: fmt.Sprintf("endpoints[%d].%s", i, verr.Field), Code: verr.Code,
		Message: fmt.Sprintf("endpoint %d (%s): %s", i+1, deref(p.Name), verr.Message)}
}
