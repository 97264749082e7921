package store

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func ptr[T any](v T) *T { return &v }

// openTestDB opens a fresh database in t's temp dir and closes it at the
// end of the test.
func openTestDB(t *testing.T) *DB {
	t.Helper()
	return openAt(t, filepath.Join(t.TempDir(), "ccmesh.db"))
}

func openAt(t *testing.T, path string) *DB {
	t.Helper()
	db, err := Open(t.Context(), path)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return db
}

// endpointPatch is a valid create input named name.
func endpointPatch(name string) EndpointPatch {
	return EndpointPatch{
		Name:     ptr(name),
		BaseURL:  ptr("https://" + name + ".example/api"),
		Protocol: ptr("anthropic"),
		APIKey:   ptr("sk-" + name),
	}
}

func mustCreate(t *testing.T, db *DB, p EndpointPatch) Endpoint {
	t.Helper()
	e, err := db.CreateEndpoint(t.Context(), p)
	if err != nil {
		t.Fatalf("CreateEndpoint(%s): %v", deref(p.Name), err)
	}
	return e
}

func endpointNames(t *testing.T, db *DB) []string {
	t.Helper()
	list, err := db.ListEndpoints(t.Context())
	if err != nil {
		t.Fatalf("ListEndpoints: %v", err)
	}
	var names []string
	for _, e := range list {
		names = append(names, e.Name)
	}
	return names
}

// rawOpen opens path with plain database/sql, bypassing Open's checks, to
// inspect or prepare a file.
func rawOpen(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatalf("sql.Open(%s): %v", path, err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func schemaVersion(t *testing.T, db *sql.DB) int64 {
	t.Helper()
	var v int64
	if err := db.QueryRowContext(context.Background(),
		`SELECT max(version_id) FROM goose_db_version WHERE is_applied`).Scan(&v); err != nil {
		t.Fatalf("read schema version: %v", err)
	}
	return v
}

func hasTable(t *testing.T, db *sql.DB, name string) bool {
	t.Helper()
	var n int
	if err := db.QueryRowContext(context.Background(),
		`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, name).Scan(&n); err != nil {
		t.Fatalf("look up table %s: %v", name, err)
	}
	return n == 1
}

func fileMode(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatalf("stat %s: %v", path, err)
	}
	return fi.Mode().Perm()
}

func backups(t *testing.T, dbPath string) []string {
	t.Helper()
	m, err := filepath.Glob(dbPath + ".bak-*")
	if err != nil {
		t.Fatalf("glob backups: %v", err)
	}
	return m
}

// newPatchWith is endpointPatch("new") changed by edit: one bad field at a time.
func newPatchWith(edit func(p *EndpointPatch)) EndpointPatch {
	p := endpointPatch("new")
	edit(&p)
	return p
}

// v1EndpointColumns are the endpoint columns of schema version 1, which
// every later version keeps.
const v1EndpointColumns = `id, name, base_url, api_key, protocol, auth, models, model_map,
	enabled, fast, fast_sort_order, sort_order, breaker_overrides, created_at, updated_at`

// createOld adds an endpoint named name to a database at an older schema
// version, through the columns every version has: this package's writes
// know only the current schema.
func createOld(t *testing.T, db *sql.DB, name string) {
	t.Helper()
	if _, err := db.ExecContext(t.Context(), `INSERT INTO endpoints (name, base_url, api_key, protocol,
		created_at, updated_at) VALUES (?, ?, ?, 'anthropic', 1, 1)`,
		name, "https://"+name+".example/api", "sk-"+name); err != nil {
		t.Fatalf("insert endpoint %s: %v", name, err)
	}
}

// oldEndpoints lists the endpoints of db by the columns every schema
// version has, in id order, one line each.
func oldEndpoints(t *testing.T, db *sql.DB) []string {
	t.Helper()
	rows, err := db.QueryContext(t.Context(), `SELECT `+v1EndpointColumns+` FROM endpoints ORDER BY id`)
	if err != nil {
		t.Fatalf("list endpoints: %v", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		vals := make([]any, 15)
		ptrs := make([]any, len(vals))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatalf("scan endpoint: %v", err)
		}
		out = append(out, fmt.Sprint(vals...))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
