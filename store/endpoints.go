package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// MaxSortOrder is the highest sort_order and fast_sort_order the admin API
// takes (docs/BEHAVIOUR.md#bad-input-and-faults). An endpoint appended
// after one there gets it too, and ties go by id, which only grows.
const MaxSortOrder = 1_000_000

// queryer is what reads need from *sql.DB and *sql.Tx alike.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// queryAll runs query and scans every row it returns; an error names op.
// No rows is [] rather than nil: the lists go out as JSON.
func queryAll[T any](ctx context.Context, q queryer, op string, scan func(*sql.Rows) (T, error), query string, args ...any) ([]T, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return out, nil
}

// ListEndpoints returns every endpoint in list order (sort_order, then id).
func (db *DB) ListEndpoints(ctx context.Context) ([]Endpoint, error) {
	return queryAll(ctx, db.sql, "list endpoints", func(r *sql.Rows) (Endpoint, error) { return scanEndpoint(r) },
		`SELECT `+endpointColumns+` FROM endpoints ORDER BY sort_order, id`)
}

// GetEndpoint returns one endpoint, or an error wrapping ErrNotFound.
func (db *DB) GetEndpoint(ctx context.Context, id int64) (Endpoint, error) {
	e, err := getEndpoint(ctx, db.sql, id)
	if err != nil {
		return Endpoint{}, fmt.Errorf("get endpoint %d: %w", id, err)
	}
	return e, nil
}

func getEndpoint(ctx context.Context, q queryer, id int64) (Endpoint, error) {
	row := q.QueryRowContext(ctx, `SELECT `+endpointColumns+` FROM endpoints WHERE id = ?`, id)
	e, err := scanEndpoint(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Endpoint{}, ErrNotFound
	}
	return e, err
}

// CreateEndpoint validates p, fills in what p leaves out (see EndpointPatch),
// and stores the endpoint. A rejected input is a *ValidationError.
func (db *DB) CreateEndpoint(ctx context.Context, p EndpointPatch) (Endpoint, error) {
	var out Endpoint
	err := db.write(ctx, func(tx *sql.Tx) (err error) {
		out, err = createEndpoint(ctx, tx, p)
		return err
	})
	if err != nil {
		return Endpoint{}, endpointError("create endpoint "+deref(p.Name), err)
	}
	return out, nil
}

// UpdateEndpoint changes the fields p sets and keeps the rest. An unknown id
// wraps ErrNotFound; a rejected input is a *ValidationError.
func (db *DB) UpdateEndpoint(ctx context.Context, id int64, p EndpointPatch) (Endpoint, error) {
	var out Endpoint
	err := db.write(ctx, func(tx *sql.Tx) (err error) {
		out, err = updateEndpoint(ctx, tx, id, p)
		return err
	})
	if err != nil {
		return Endpoint{}, endpointError(fmt.Sprintf("update endpoint %d", id), err)
	}
	return out, nil
}

// CheckEndpoint is the endpoint CreateEndpoint would store for p,
// normalised and validated alike (a *ValidationError), before it has an id,
// a place in the list or times, and without looking at the endpoints
// stored: whether its name is free is the create's to find out.
func CheckEndpoint(p EndpointPatch) (Endpoint, error) {
	e, verr := newEndpoint(p)
	if verr != nil {
		return Endpoint{}, verr
	}
	return e, nil
}

func newEndpoint(p EndpointPatch) (Endpoint, *ValidationError) {
	e := Endpoint{Enabled: true, PriceMultiplier: 1, HedgeAfterMs: -1, Weight: 1}
	applyPatch(&e, p)
	if verr := mergeKeys(&e, nil, p); verr != nil {
		return Endpoint{}, verr
	}
	if verr := validateEndpoint(&e); verr != nil {
		return Endpoint{}, verr
	}
	return e, nil
}

func createEndpoint(ctx context.Context, tx *sql.Tx, p EndpointPatch) (Endpoint, error) {
	e, verr := newEndpoint(p)
	if verr != nil {
		return Endpoint{}, verr
	}
	if err := checkUniqueName(ctx, tx, e.Name, 0); err != nil {
		return Endpoint{}, err
	}
	if p.SortOrder == nil {
		if err := tx.QueryRowContext(ctx,
			`SELECT min(coalesce(max(sort_order) + 1, 0), ?) FROM endpoints`, MaxSortOrder).Scan(&e.SortOrder); err != nil {
			return Endpoint{}, err
		}
	}
	if e.Fast && p.FastSortOrder == nil {
		if err := nextFastOrder(ctx, tx, &e.FastSortOrder); err != nil {
			return Endpoint{}, err
		}
	}
	if err := assignKeyIDs(ctx, tx, &e); err != nil {
		return Endpoint{}, err
	}
	args, err := endpointArgs(&e)
	if err != nil {
		return Endpoint{}, err
	}
	now := toMillis(time.Now())
	res, err := tx.ExecContext(ctx, insertEndpoint, append(args, now, now)...)
	if err != nil {
		return Endpoint{}, uniqueNameError(err, e.Name)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return Endpoint{}, err
	}
	return getEndpoint(ctx, tx, id)
}

func updateEndpoint(ctx context.Context, tx *sql.Tx, id int64, p EndpointPatch) (Endpoint, error) {
	e, err := getEndpoint(ctx, tx, id)
	if err != nil {
		return Endpoint{}, err
	}
	wasFast := e.Fast
	before := e.Keys
	applyPatch(&e, p)
	if verr := mergeKeys(&e, before, p); verr != nil {
		return Endpoint{}, verr
	}
	if verr := validateEndpoint(&e); verr != nil {
		return Endpoint{}, verr
	}
	if err := assignKeyIDs(ctx, tx, &e); err != nil {
		return Endpoint{}, err
	}
	if err := checkUniqueName(ctx, tx, e.Name, id); err != nil {
		return Endpoint{}, err
	}
	switch {
	case e.Fast && !wasFast && p.FastSortOrder == nil:
		// Joining the fast queue: at its end, like a new fast endpoint.
		if err := nextFastOrder(ctx, tx, &e.FastSortOrder); err != nil {
			return Endpoint{}, err
		}
	case !e.Fast && p.FastSortOrder == nil:
		e.FastSortOrder = 0
	}
	args, err := endpointArgs(&e)
	if err != nil {
		return Endpoint{}, err
	}
	_, err = tx.ExecContext(ctx, updateEndpointSQL, append(args, toMillis(time.Now()), id)...)
	if err != nil {
		return Endpoint{}, uniqueNameError(err, e.Name)
	}
	return getEndpoint(ctx, tx, id)
}

// DeleteEndpoint removes an endpoint and (by foreign key) its breaker state.
// Its request logs and breaker events stay, naming it.
func (db *DB) DeleteEndpoint(ctx context.Context, id int64) error {
	err := db.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM endpoints WHERE id = ?`, id)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return ErrNotFound
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("delete endpoint %d: %w", id, err)
	}
	return nil
}

// SetFastQueue makes exactly ids, in this order, the fast queue. An unknown
// or repeated id is a *ValidationError and changes nothing.
func (db *DB) SetFastQueue(ctx context.Context, ids []int64) error {
	err := db.write(ctx, func(tx *sql.Tx) error {
		all, err := endpointIDs(ctx, tx)
		if err != nil {
			return err
		}
		seen := make(map[int64]bool, len(ids))
		for _, id := range ids {
			if !all[id] {
				return invalid("ids", CodeUnknownID, "there is no endpoint with id %d", id)
			}
			if seen[id] {
				return invalid("ids", CodeDuplicateID, "endpoint id %d appears more than once", id)
			}
			seen[id] = true
		}
		if _, err := tx.ExecContext(ctx,
			`UPDATE endpoints SET fast = 0, fast_sort_order = 0 WHERE fast != 0 OR fast_sort_order != 0`); err != nil {
			return err
		}
		for i, id := range ids {
			if _, err := tx.ExecContext(ctx,
				`UPDATE endpoints SET fast = 1, fast_sort_order = ? WHERE id = ?`, i, id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return endpointError("set fast queue", err)
	}
	return nil
}

// SetOrder sets the full list order; ids must name every endpoint once.
func (db *DB) SetOrder(ctx context.Context, ids []int64) error {
	err := db.write(ctx, func(tx *sql.Tx) error {
		all, err := endpointIDs(ctx, tx)
		if err != nil {
			return err
		}
		given := make(map[int64]bool, len(ids))
		for _, id := range ids {
			given[id] = true
		}
		if len(ids) != len(all) || len(given) != len(all) || !maps.Equal(given, all) {
			return invalid("ids", CodeNotPermutation,
				"the order must list every endpoint exactly once (%d endpoints, got %d ids)", len(all), len(ids))
		}
		for i, id := range ids {
			if _, err := tx.ExecContext(ctx,
				`UPDATE endpoints SET sort_order = ? WHERE id = ?`, i, id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return endpointError("set endpoint order", err)
	}
	return nil
}

func endpointIDs(ctx context.Context, tx *sql.Tx) (map[int64]bool, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id FROM endpoints`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	ids := make(map[int64]bool)
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids[id] = true
	}
	return ids, rows.Err()
}

func nextFastOrder(ctx context.Context, tx *sql.Tx, dst *int) error {
	return tx.QueryRowContext(ctx,
		`SELECT min(coalesce(max(fast_sort_order) + 1, 0), ?) FROM endpoints WHERE fast != 0`, MaxSortOrder).Scan(dst)
}

func checkUniqueName(ctx context.Context, tx *sql.Tx, name string, exceptID int64) error {
	var other int64
	err := tx.QueryRowContext(ctx,
		`SELECT id FROM endpoints WHERE name = ? AND id != ?`, name, exceptID).Scan(&other)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return err
	}
	return duplicateName(name)
}

func duplicateName(name string) *ValidationError {
	return invalid("name", CodeDuplicateName,
		"an endpoint named %q already exists; names are unique (case-sensitive)", name)
}

// uniqueNameError maps the UNIQUE constraint, which backs up checkUniqueName
// against a writer in another process, to the same validation error.
func uniqueNameError(err error, name string) error {
	var se *sqlite.Error
	if errors.As(err, &se) && se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE {
		return duplicateName(name)
	}
	return err
}

// endpointError returns validation errors as they are (callers and the
// admin API check their type) and wraps everything else with op.
func endpointError(op string, err error) error {
	var verr *ValidationError
	if errors.As(err, &verr) {
		return verr
	}
	return fmt.Errorf("%s: %w", op, err)
}

// rawObject is doc, or {} for an empty one: a document the store keeps
// without reading it is never empty in the database or the API.
func rawObject(doc json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(doc)) == 0 {
		return json.RawMessage("{}")
	}
	return doc
}

// deref is *p, or the zero value for nil.
func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// Times are stored as unix milliseconds; 0 stands for the zero time.
func toMillis(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func fromMillis(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}

// AddEndpointDrops adds to endpoint id's drops those of ds it does not
// have yet, leaving every other field as it is; it reports whether any was
// added. An unknown id wraps ErrNotFound.
func (db *DB) AddEndpointDrops(ctx context.Context, id int64, ds []EndpointDrop) (bool, error) {
	var added bool
	err := db.write(ctx, func(tx *sql.Tx) error {
		e, err := getEndpoint(ctx, tx, id)
		if err != nil {
			return err
		}
		for _, d := range ds {
			if !slices.ContainsFunc(e.Drops, func(have EndpointDrop) bool { return have.Drop == d.Drop }) {
				e.Drops = append(e.Drops, d)
				added = true
			}
		}
		if !added {
			return nil
		}
		b, err := json.Marshal(e.Drops)
		if err != nil {
			return fmt.Errorf("encode drops: %w", err)
		}
		_, err = tx.ExecContext(ctx, `UPDATE endpoints SET drops = ? WHERE id = ?`, string(b), id)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("add drops to endpoint %d: %w", id, err)
	}
	return added, nil
}
