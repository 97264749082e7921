package store

import (
	"database/sql"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// docs/BEHAVIOUR.md#bad-input-and-faults: an id, once given, is never
// given again, not even the highest one after it is deleted.
func TestEndpointIDsNeverReused(t *testing.T) {
	db := openTestDB(t)
	var ids []int64
	for _, name := range []string{"a", "b", "c"} {
		ids = append(ids, mustCreate(t, db, endpointPatch(name)).ID)
	}
	if !slices.Equal(ids, []int64{1, 2, 3}) {
		t.Fatalf("ids = %v, want 1 2 3", ids)
	}
	if err := db.DeleteEndpoint(t.Context(), 3); err != nil {
		t.Fatal(err)
	}
	if d := mustCreate(t, db, endpointPatch("d")); d.ID != 4 {
		t.Errorf("after deleting the last, the next id = %d, want 4", d.ID)
	}
	for _, id := range []int64{1, 2, 4} {
		if err := db.DeleteEndpoint(t.Context(), id); err != nil {
			t.Fatal(err)
		}
	}
	if e := mustCreate(t, db, endpointPatch("e")); e.ID != 5 {
		t.Errorf("after deleting every endpoint, the next id = %d, want 5", e.ID)
	}
}

// sourceBefore is the version of the migration before version v.
func sourceBefore(t *testing.T, db *DB, v int64) int64 {
	t.Helper()
	p, err := db.newMigrator()
	if err != nil {
		t.Fatal(err)
	}
	prev := int64(-1)
	for _, s := range p.ListSources() {
		if s.Version == v {
			return prev
		}
		prev = s.Version
	}
	t.Fatalf("no migration %d", v)
	return 0
}

// autoincrementMigration is the version of 0000N_endpoint_ids_autoincrement.sql.
const autoincrementMigration = 5

// referencing lists the tables with a foreign key to endpoints and the
// column that holds the endpoint id.
func referencing(t *testing.T, db *sql.DB) map[string]string {
	t.Helper()
	rows, err := db.QueryContext(t.Context(), `SELECT m.name, f."from" FROM sqlite_master m,
		pragma_foreign_key_list(m.name) f WHERE m.type = 'table' AND f."table" = 'endpoints'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var table, col string
		if err := rows.Scan(&table, &col); err != nil {
			t.Fatal(err)
		}
		out[table] = col
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// insertReferencing adds a row naming endpoint id to table, whose other
// required columns get 0.
func insertReferencing(t *testing.T, db *sql.DB, table, col string, id int64) {
	t.Helper()
	rows, err := db.QueryContext(t.Context(), `SELECT name FROM pragma_table_info(?)
		WHERE "notnull" AND dflt_value IS NULL AND name != ?`, table, col)
	if err != nil {
		t.Fatal(err)
	}
	cols, vals := []string{col}, []any{id}
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			t.Fatal(err)
		}
		cols, vals = append(cols, `"`+c+`"`), append(vals, 0)
	}
	rows.Close()
	q := fmt.Sprintf(`INSERT INTO %s (%s) VALUES (?%s)`, table, strings.Join(cols, ", "),
		strings.Repeat(", ?", len(cols)-1))
	if _, err := db.ExecContext(t.Context(), q, vals...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func idsIn(t *testing.T, db *sql.DB, table, col string) []int64 {
	t.Helper()
	rows, err := db.QueryContext(t.Context(), fmt.Sprintf(`SELECT %s FROM %s ORDER BY 1`, col, table))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

// A database made before ids were kept is rebuilt without losing a row, an
// id or a reference, and from then on hands out ids above every id it ever
// named.
func TestMigrateEndpointIDsAutoincrement(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ccmesh.db")
	if _, err := prepareFile(path); err != nil {
		t.Fatal(err)
	}
	old := rawOpen(t, dsn(path, openOptions{busyTimeout: time.Second}))
	older := &DB{sql: old, path: path, writeSem: make(chan struct{}, 1)}
	prev := sourceBefore(t, older, autoincrementMigration)
	p, err := older.newMigrator()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(t.Context(), prev); err != nil {
		t.Fatalf("migrate to version %d: %v", prev, err)
	}
	for _, name := range []string{"a", "b", "c"} {
		createOld(t, old, name)
	}
	if err := older.DeleteEndpoint(t.Context(), 3); err != nil {
		t.Fatal(err)
	}
	refs := referencing(t, old)
	if _, ok := refs["breaker_state"]; !ok {
		t.Fatalf("tables referencing endpoints = %v, want breaker_state among them", refs)
	}
	for table, col := range refs {
		for _, id := range []int64{1, 2} {
			insertReferencing(t, old, table, col, id)
		}
	}
	// Ids of endpoints deleted long ago, still named by the trail and the log.
	if _, err := older.AddBreakerEvent(t.Context(), BreakerEvent{EndpointID: 5, Endpoint: "gone", Cause: "request"}); err != nil {
		t.Fatal(err)
	}
	if _, err := old.ExecContext(t.Context(), `INSERT INTO request_logs (at, endpoint_id, endpoint) VALUES (1, 6, 'gone too')`); err != nil {
		t.Fatal(err)
	}
	before := oldEndpoints(t, old)
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	db := openAt(t, path)
	if b := backups(t, path); len(b) != 1 || !strings.Contains(b[0], fmt.Sprintf(".bak-%d-", prev)) {
		t.Errorf("backups = %v, want one of version %d", b, prev)
	}
	var schema string
	if err := db.sql.QueryRowContext(t.Context(), `SELECT sql FROM sqlite_master WHERE name = 'endpoints'`).Scan(&schema); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(schema, "AUTOINCREMENT") {
		t.Errorf("endpoints after the migration:\n%s\nwant AUTOINCREMENT", schema)
	}
	if after := oldEndpoints(t, db.sql); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("endpoints changed by the migration\nbefore %+v\nafter  %+v", before, after)
	}
	got := referencing(t, db.sql)
	maps.DeleteFunc(got, func(table, _ string) bool { _, had := refs[table]; return !had }) // added by later migrations
	if fmt.Sprint(got) != fmt.Sprint(refs) {
		t.Errorf("references to endpoints after the migration = %v, want %v", got, refs)
	}
	for table, col := range refs {
		if ids := idsIn(t, db.sql, table, col); !slices.Equal(ids, []int64{1, 2}) {
			t.Errorf("%s.%s after the migration = %v, want 1 2", table, col, ids)
		}
	}
	var violations int
	if err := db.sql.QueryRowContext(t.Context(), `SELECT count(*) FROM pragma_foreign_key_check`).Scan(&violations); err != nil || violations != 0 {
		t.Errorf("foreign key violations = %d (%v), want 0", violations, err)
	}
	// Enforced again on the connections: a delete cascades.
	if err := db.DeleteEndpoint(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	for table, col := range refs {
		if ids := idsIn(t, db.sql, table, col); !slices.Equal(ids, []int64{2}) {
			t.Errorf("%s.%s after deleting endpoint 1 = %v, want 2 (cascade)", table, col, ids)
		}
	}
	if e := mustCreate(t, db, endpointPatch("new")); e.ID != 7 {
		t.Errorf("first id after the migration = %d, want 7 (above the 6 the request log names)", e.ID)
	}
}
