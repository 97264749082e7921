package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func latestVersion(t *testing.T, db *DB) int64 {
	t.Helper()
	p, err := db.newMigrator()
	if err != nil {
		t.Fatal(err)
	}
	src := p.ListSources()
	return src[len(src)-1].Version
}

func TestOpenFromEmpty(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data", "ccmesh")
	path := filepath.Join(dir, "ccmesh.db")
	db := openAt(t, path)
	mustCreate(t, db, endpointPatch("alpha")) // a write, so the WAL exists

	if got := db.Path(); got != path {
		t.Errorf("Path() = %q, want %q", got, path)
	}
	modes := []struct {
		name string
		path string
		want os.FileMode
	}{
		{"data dir", dir, 0o700},
		{"database", path, 0o600},
		{"wal", path + "-wal", 0o600},
		{"shm", path + "-shm", 0o600},
	}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			if got := fileMode(t, m.path); got != m.want {
				t.Errorf("mode of %s = %v, want %v", m.path, got, m.want)
			}
		})
	}

	if got, want := schemaVersion(t, db.sql), latestVersion(t, db); got != want {
		t.Errorf("schema version = %d, want %d", got, want)
	}
	for _, table := range []string{"endpoints", "settings", "meta", "breaker_state", "breaker_events", "request_logs"} {
		if !hasTable(t, db.sql, table) {
			t.Errorf("table %s missing", table)
		}
	}
	pragmas := []struct{ pragma, want string }{
		{"journal_mode", "wal"},
		{"foreign_keys", "1"},
		{"synchronous", "1"}, // NORMAL
		{"busy_timeout", "5000"},
	}
	for _, p := range pragmas {
		var got string
		if err := db.sql.QueryRowContext(t.Context(), "PRAGMA "+p.pragma).Scan(&got); err != nil {
			t.Fatalf("PRAGMA %s: %v", p.pragma, err)
		}
		if got != p.want {
			t.Errorf("PRAGMA %s = %q, want %q", p.pragma, got, p.want)
		}
	}
	if b := backups(t, path); len(b) != 0 {
		t.Errorf("a new database was backed up: %v", b)
	}
}

func TestOpenAgainIsIdempotent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ccmesh.db")
	db, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	want := mustCreate(t, db, endpointPatch("alpha"))
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// A hand-made copy with a wide mode is tightened on open.
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}

	db = openAt(t, path)
	got, err := db.GetEndpoint(t.Context(), want.ID)
	if err != nil {
		t.Fatalf("GetEndpoint after reopen: %v", err)
	}
	if got.Name != want.Name || got.APIKey != want.APIKey {
		t.Errorf("after reopen got %+v, want %+v", got, want)
	}
	if v, want := schemaVersion(t, db.sql), latestVersion(t, db); v != want {
		t.Errorf("schema version = %d, want %d", v, want)
	}
	if b := backups(t, path); len(b) != 0 {
		t.Errorf("reopening an up-to-date database made backups: %v", b)
	}
	if m := fileMode(t, path); m != 0o600 {
		t.Errorf("mode after reopen = %v, want 0600", m)
	}
}

// TestOpenBacksUpBeforePendingMigration makes a database at schema version
// 1, as an older ccmesh would have left it, and opens it with this one.
func TestOpenBacksUpBeforePendingMigration(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ccmesh.db")
	if _, err := prepareFile(path); err != nil {
		t.Fatal(err)
	}
	old := rawOpen(t, dsn(path, openOptions{busyTimeout: time.Second}))
	older := &DB{sql: old, path: path, writeSem: make(chan struct{}, 1)}
	p, err := older.newMigrator()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(t.Context(), 1); err != nil {
		t.Fatalf("migrate to version 1: %v", err)
	}
	createOld(t, old, "kept")
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	before := time.Now().Unix()
	db := openAt(t, path)
	after := time.Now().Unix()

	if !hasTable(t, db.sql, "request_logs") {
		t.Error("migration 2 did not run: no request_logs table")
	}
	files := backups(t, path)
	if len(files) != 1 {
		t.Fatalf("backups = %v, want exactly one", files)
	}
	var version, unix int64
	if _, err := fmt.Sscanf(strings.TrimPrefix(files[0], path), ".bak-%d-%d", &version, &unix); err != nil {
		t.Fatalf("backup name %s: %v", files[0], err)
	}
	if version != 1 || unix < before || unix > after {
		t.Errorf("backup named version %d at %d, want version 1 at [%d, %d]", version, unix, before, after)
	}
	if m := fileMode(t, files[0]); m != 0o600 {
		t.Errorf("backup mode = %v, want 0600 (it holds API keys)", m)
	}
	bak := rawOpen(t, files[0])
	if v := schemaVersion(t, bak); v != 1 {
		t.Errorf("backup schema version = %d, want 1", v)
	}
	if hasTable(t, bak, "request_logs") {
		t.Error("backup has request_logs: it was taken after the migration")
	}
	var name string
	if err := bak.QueryRowContext(t.Context(), `SELECT name FROM endpoints`).Scan(&name); err != nil || name != "kept" {
		t.Errorf("backup endpoint = %q, %v; want \"kept\"", name, err)
	}
}

// TestBackupIncludesWAL checks that the copy is taken through SQLite: a
// committed write still in the WAL (not checkpointed) is in the backup.
func TestBackupIncludesWAL(t *testing.T) {
	db := openTestDB(t)
	mustCreate(t, db, endpointPatch("in-wal"))
	at := time.Unix(1_700_000_000, 0)

	dst, err := db.backup(t.Context(), 7, at)
	if err != nil {
		t.Fatalf("backup: %v", err)
	}
	if want := db.Path() + ".bak-7-1700000000"; dst != want {
		t.Errorf("backup path = %q, want %q", dst, want)
	}
	var n int
	if err := rawOpen(t, dst).QueryRowContext(t.Context(),
		`SELECT count(*) FROM endpoints WHERE name = 'in-wal'`).Scan(&n); err != nil || n != 1 {
		t.Errorf("endpoints in backup = %d, %v; want 1", n, err)
	}
	// Never overwrite an earlier backup.
	if _, err := db.backup(t.Context(), 7, at); err == nil {
		t.Error("second backup with the same name succeeded, want an error")
	}
}

func TestOpenRejectsCorruptFile(t *testing.T) {
	tests := []struct {
		name    string
		content []byte
	}{
		{"text file", bytes.Repeat([]byte("this is not a database\n"), 300)},
		{"damaged header", append([]byte("SQLite format 3\x00"), bytes.Repeat([]byte{0xff}, 8192)...)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "ccmesh.db")
			if err := os.WriteFile(path, tc.content, 0o640); err != nil {
				t.Fatal(err)
			}
			db, err := Open(t.Context(), path)
			if err == nil {
				_ = db.Close()
				t.Fatal("Open succeeded on a corrupt file, want an error")
			}
			for _, want := range []string{"not a readable SQLite database", "kept unchanged at " + path} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			got, rerr := os.ReadFile(path)
			if rerr != nil || !bytes.Equal(got, tc.content) {
				t.Errorf("file changed by the failed Open (read err %v)", rerr)
			}
			if m := fileMode(t, path); m != 0o640 {
				t.Errorf("mode changed to %v, want 0640 kept", m)
			}
		})
	}
}

func TestOpenLockedDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ccmesh.db")
	other := rawOpen(t, path)
	conn, err := other.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Another process mid-write in rollback-journal mode: switching to WAL
	// needs the lock it holds.
	for _, q := range []string{`CREATE TABLE t (x)`, `BEGIN EXCLUSIVE`, `INSERT INTO t VALUES (1)`} {
		if _, err := conn.ExecContext(t.Context(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	defer conn.ExecContext(t.Context(), `ROLLBACK`) //nolint:errcheck

	db, err := open(t.Context(), path, openOptions{busyTimeout: 50 * time.Millisecond})
	if err == nil {
		_ = db.Close()
		t.Fatal("Open succeeded on a locked database, want an error")
	}
	if !strings.Contains(err.Error(), "locked by another process") {
		t.Errorf("error = %q, want it to say the database is locked by another process", err)
	}
}

func TestOpenPathNeedingEscapes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "odd ?#% dir", "ccmesh.db")
	db := openAt(t, path)
	mustCreate(t, db, endpointPatch("alpha"))
	if _, err := os.Stat(path); err != nil {
		t.Errorf("database not at %s: %v", path, err)
	}
}

func TestOpenCanceledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "ccmesh.db"))
	if err == nil {
		_ = db.Close()
		t.Fatal("Open with a canceled context succeeded")
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error = %v, want it to wrap context.Canceled", err)
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ccmesh.db")
	db, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	// What a future ccmesh with a third migration would leave behind.
	if _, err := db.sql.ExecContext(t.Context(),
		`INSERT INTO goose_db_version (version_id, is_applied) VALUES (99, 1)`); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = Open(t.Context(), path)
	if err == nil {
		_ = db.Close()
		t.Fatal("Open of a newer schema succeeded, want an error")
	}
	if !strings.Contains(err.Error(), "written by a newer ccmesh (schema version 99") {
		t.Errorf("error = %q, want it to name the newer schema", err)
	}
}

// A database file its owner may not write is refused at start, with words
// that say so, and keeps its mode (docs/BEHAVIOUR.md#bad-input-and-faults).
func TestOpenReadOnlyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ccmesh.db")
	db, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	mustCreate(t, db, endpointPatch("kept"))
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o400); err != nil {
		t.Fatal(err)
	}
	content, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	db, err = Open(t.Context(), path)
	if err == nil {
		_ = db.Close()
		t.Fatal("Open of a read-only file succeeded, want an error")
	}
	for _, want := range []string{"ccmesh.db is read-only: ", "chmod u+w " + path} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if m := fileMode(t, path); m != 0o400 {
		t.Errorf("mode after the refused Open = %v, want 0400 kept", m)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, content) {
		t.Error("the refused Open changed the file")
	}
}

// Open checks the configuration's tables; the request log's are checked by
// CheckHistory once ccmesh serves, so a damaged log page neither slows nor
// stops start-up, and is still found.
func TestDamagedLogPageFoundAfterOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ccmesh.db")
	db, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	mustCreate(t, db, endpointPatch("kept"))
	batch := make([]RequestLog, 2000)
	for i := range batch {
		batch[i] = RequestLog{At: time.Now(), Path: "/v1/messages", Endpoint: "kept", Status: 200, Error: strings.Repeat("x", 200)}
	}
	if err := db.insertLogs(t.Context(), batch, make([][]byte, len(batch)), make([][]byte, len(batch))); err != nil {
		t.Fatal(err)
	}
	var root, pageSize int64
	if err := db.sql.QueryRowContext(t.Context(), `SELECT rootpage FROM sqlite_master WHERE name = 'request_logs'`).Scan(&root); err != nil {
		t.Fatal(err)
	}
	if err := db.sql.QueryRowContext(t.Context(), `PRAGMA page_size`).Scan(&pageSize); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// Scribble over the middle of the log table's root page (an interior
	// page of its b-tree, with 2000 rows).
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(bytes.Repeat([]byte{0xA5}, int(pageSize)-200), (root-1)*pageSize+100); err != nil {
		t.Fatal(err)
	}
	f.Close()

	db = openAt(t, path)
	if got, err := db.ListEndpoints(t.Context()); err != nil || len(got) != 1 || got[0].Name != "kept" {
		t.Errorf("endpoints after a damaged log page: %+v, %v", got, err)
	}
	err = db.CheckHistory(t.Context())
	if err == nil || !errors.Is(err, errCorrupt) || !strings.Contains(err.Error(), "request_logs") ||
		!strings.Contains(err.Error(), "configuration is intact") {
		t.Errorf("CheckHistory = %v, want the damaged request_logs named", err)
	}
}
