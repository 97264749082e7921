// Package store keeps ccmesh's state in one SQLite file (modernc.org/sqlite,
// no cgo): endpoints, settings, breaker states and their audit trail, and the
// request log. Schema changes are goose migrations embedded in the binary.
package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pressly/goose/v3"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// defaultBusyTimeout is how long a statement waits for another process's
// lock before failing with "database is locked".
const defaultBusyTimeout = 5 * time.Second

// DB is the store. It is safe for concurrent use.
type DB struct {
	sql  *sql.DB
	path string
	// writeSem serialises this process's write transactions. SQLite allows
	// one writer at a time anyway; queueing here instead of in SQLite's busy
	// handler (which sleeps and polls) keeps an endpoint edit from waiting
	// behind a log batch for a polling interval, and lets the wait be
	// cancelled by ctx.
	writeSem chan struct{}
	// The log batch's statements, prepared once: preparing one per batch
	// cost ~50 µs of a core the batch cannot give back.
	logInsert     *sql.Stmt            // one row
	logInsertMany *sql.Stmt            // logInsertRows rows
	upsert        map[string]*sql.Stmt // usage bucket upsert, by table
}

// openOptions are knobs for tests; Open uses the defaults.
type openOptions struct {
	busyTimeout time.Duration
}

// Open opens (creating if needed) the database at path and brings its schema
// up to date. A database that has pending migrations is first copied to
// <path>.bak-<version>-<unixtime>.
func Open(ctx context.Context, path string) (*DB, error) {
	return open(ctx, path, openOptions{busyTimeout: defaultBusyTimeout})
}

func open(ctx context.Context, path string, opts openOptions) (*DB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	created, err := prepareFile(abs)
	if err != nil {
		return nil, err
	}
	sqlDB, err := sql.Open("sqlite", dsn(abs, opts))
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", abs, err)
	}
	db := &DB{sql: sqlDB, path: abs, writeSem: make(chan struct{}, 1)}
	if err := db.init(ctx, created); err != nil {
		_ = sqlDB.Close()
		return nil, err
	}
	if err := db.prepare(ctx); err != nil {
		_ = sqlDB.Close()
		return nil, db.openError(err)
	}
	return db, nil
}

// prepareFile creates the data directory (0700) and an empty database file
// (0600) so that the file never exists with wider permissions; SQLite gives
// its -wal and -shm files the database file's mode. It reports whether the
// file was created now.
func prepareFile(path string) (created bool, err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return false, fmt.Errorf("create data directory for %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	switch {
	case err == nil:
		if err := f.Close(); err != nil {
			return false, fmt.Errorf("create database %s: %w", path, err)
		}
		return true, nil
	case errors.Is(err, fs.ErrExist):
		// A file its owner may not write stays as it is
		// (docs/BEHAVIOUR.md#bad-input-and-faults): SQLite would open it
		// read-only, and every change would fail later.
		fi, err := os.Stat(path)
		if err != nil {
			return false, fmt.Errorf("open database %s: %w", path, err)
		}
		if fi.Mode().Perm()&0o200 == 0 {
			return false, readOnlyError(path, fmt.Errorf("its mode is %v", fi.Mode().Perm()))
		}
		return false, nil
	default:
		return false, fmt.Errorf("create database %s: %w", path, err)
	}
}

// dsn builds a modernc.org/sqlite URI. The path is escaped so that a data
// directory containing '?', '#' or '%' is not read as URI syntax.
//
// synchronous=NORMAL is safe with WAL: a commit is appended to the WAL and
// is in the OS's hands when COMMIT returns, so a crash or kill of ccmesh
// loses nothing committed and the file never corrupts; only a power loss or
// OS crash may roll back the last few commits (the WAL is fsynced at
// checkpoints). FULL would fsync the WAL on every log batch for no gain
// against the failure docs/BEHAVIOUR.md#bad-input-and-faults names (the process dying).
//
// wal_autocheckpoint(walAutoCheckpoint): a commit that takes the WAL past
// that many pages copies it into the database file at once, which on one
// core holds the requests up for tens of milliseconds; the log writer
// checkpoints when it has been idle instead (LogWriterOptions.CheckpointIdle),
// so that the commit's checkpoint is only the bound for a load that never
// pauses.
//
// _txlock=immediate makes BEGIN take the write lock at once, so two writers
// queue on busy_timeout instead of one failing with SQLITE_BUSY when it
// upgrades a read transaction (busy_timeout cannot help a deferred upgrade).
func dsn(path string, opts openOptions) string {
	p := filepath.ToSlash(path)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // Windows: file:/C:/...
	}
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", opts.busyTimeout.Milliseconds()))
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", fmt.Sprintf("wal_autocheckpoint(%d)", walAutoCheckpoint))
	q.Set("_txlock", "immediate")
	return "file:" + (&url.URL{Path: p}).EscapedPath() + "?" + q.Encode()
}

// walAutoCheckpoint is the WAL's size, in pages, at which a commit
// checkpoints it (SQLite's default is 1000): 16 MiB of 4 KiB pages, about
// 70 000 request log rows.
const walAutoCheckpoint = 4000

// Checkpoint copies what the WAL holds into the database file without
// waiting for readers or writers (SQLite's PASSIVE mode).
func (db *DB) Checkpoint(ctx context.Context) error {
	if _, err := db.sql.ExecContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

// readOnlyError says that the database at path cannot be written, and what to do.
func readOnlyError(path string, cause error) error {
	return fmt.Errorf("open database %s: %s is read-only: ccmesh saves every change there, so it stops "+
		"rather than fail each one; make the file and its directory writable for this user "+
		"(e.g. chmod u+w %s) and start again (%w)", path, filepath.Base(path), path, cause)
}

// init checks that the file is a healthy SQLite database, backs it up if
// migrations are pending, migrates it, checks that it can be written and
// tightens its mode.
func (db *DB) init(ctx context.Context, created bool) error {
	var objects int
	err := db.sql.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master`).Scan(&objects)
	if err != nil {
		return db.openError(err)
	}
	if err := db.quickCheck(ctx, false); err != nil {
		return db.openError(err)
	}
	if err := db.migrate(ctx, !created && objects > 0); err != nil {
		return err
	}
	// A write that changes nothing: a read-only file system or a file
	// SQLite opened read-only fails it now rather than every edit later.
	err = db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM meta WHERE 0`)
		return err
	})
	if err != nil {
		return db.openError(fmt.Errorf("write test: %w", err))
	}
	// An existing file may have been made by hand or an older build with a
	// wider mode; it holds API keys (docs/BEHAVIOUR.md#safety).
	if err := os.Chmod(db.path, 0o600); err != nil {
		return fmt.Errorf("set mode 0600 on %s: %w", db.path, err)
	}
	return nil
}

var errCorrupt = errors.New("database is corrupt")

// historyTables grow with use (the request log, its statistics and
// captures): checking their pages takes time in proportion to the file, so
// start-up checks every other table, the configuration, and CheckHistory
// the rest once ccmesh serves (docs/BEHAVIOUR.md#bad-input-and-faults).
var historyTables = map[string]bool{
	"request_logs": true, "usage_minutes": true, "usage_hours": true, "captures": true, "capture_bytes": true,
}

// quickCheck runs SQLite's quick_check on the history tables (history) or
// on every other table.
func (db *DB) quickCheck(ctx context.Context, history bool) error {
	rows, err := db.sql.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table'`)
	if err != nil {
		return err
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return err
		}
		if historyTables[name] == history {
			tables = append(tables, name)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, t := range tables {
		var check string
		// A table's check covers its indexes too.
		if err := db.sql.QueryRowContext(ctx, `PRAGMA quick_check("`+strings.ReplaceAll(t, `"`, `""`)+`")`).Scan(&check); err != nil {
			return err
		}
		if check != "ok" {
			return fmt.Errorf("integrity check of %s: %s: %w", t, check, errCorrupt)
		}
	}
	return nil
}

// CheckHistory checks the pages of the request log, statistics and
// capture tables, which Open leaves out to start fast. A damaged page
// there is reported, not repaired: the configuration is unaffected and
// the file is left as it is for the user to act on.
func (db *DB) CheckHistory(ctx context.Context) error {
	if err := db.quickCheck(ctx, true); err != nil {
		return fmt.Errorf("database %s: the request log, statistics or captures are damaged (%w); the "+
			"configuration is intact and ccmesh keeps running, but log pages may fail to read or write: stop "+
			"ccmesh and restore a backup (%s.bak-*), or export the configuration and start with a new file", db.path, err, db.path)
	}
	return nil
}

// openError turns SQLite's codes for a bad file or a lock into words a user
// can act on; the file itself is never touched.
func (db *DB) openError(err error) error {
	var se *sqlite.Error
	code := 0
	if errors.As(err, &se) {
		code = se.Code() & 0xff // primary code; extended codes share it
	}
	switch {
	case code == sqlite3.SQLITE_NOTADB || code == sqlite3.SQLITE_CORRUPT || errors.Is(err, errCorrupt):
		return fmt.Errorf("open database %s: the file is not a readable SQLite database (%w); "+
			"it was kept unchanged at %s: move it aside to start with an empty database, "+
			"or restore a backup (%s.bak-*)", db.path, err, db.path, db.path)
	case code == sqlite3.SQLITE_BUSY || code == sqlite3.SQLITE_LOCKED:
		return fmt.Errorf("open database %s: the database is locked by another process "+
			"(is another ccmesh running with this data directory?): %w", db.path, err)
	case code == sqlite3.SQLITE_FULL:
		return fmt.Errorf("open database %s: the disk is full; free some space and start again: %w", db.path, err)
	case code == sqlite3.SQLITE_READONLY:
		return readOnlyError(db.path, err)
	case code == sqlite3.SQLITE_CANTOPEN || code == sqlite3.SQLITE_PERM:
		return fmt.Errorf("open database %s: the file or its directory cannot be written; "+
			"check their owner and permissions: %w", db.path, err)
	default:
		return fmt.Errorf("open database %s: %w", db.path, err)
	}
}

// newMigrator makes a goose provider over the embedded migrations, with no
// goose global state (no global registry, no default logger).
func (db *DB) newMigrator() (*goose.Provider, error) {
	fsys, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		return nil, fmt.Errorf("load migrations: %w", err)
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, db.sql, fsys,
		goose.WithDisableGlobalRegistry(true),
		goose.WithLogger(goose.NopLogger()),
	)
	if err != nil {
		return nil, fmt.Errorf("load migrations: %w", err)
	}
	return p, nil
}

// migrate applies pending migrations; when backup is set (the database
// existed and had tables) it first copies the database.
func (db *DB) migrate(ctx context.Context, backup bool) error {
	p, err := db.newMigrator()
	if err != nil {
		return err
	}
	version, err := p.GetDBVersion(ctx)
	if err != nil {
		return db.openError(fmt.Errorf("read schema version: %w", err))
	}
	sources := p.ListSources()
	if known := sources[len(sources)-1].Version; version > known {
		// Migrating down is not ours to do, and running on a schema we do
		// not know could corrupt what a newer build wrote.
		return fmt.Errorf("open database %s: it was written by a newer ccmesh (schema version %d, "+
			"this build knows up to %d); run the newer ccmesh or restore a backup (%s.bak-*)",
			db.path, version, known, db.path)
	}
	pending, err := p.HasPending(ctx)
	if err != nil {
		return db.openError(fmt.Errorf("check migrations: %w", err))
	}
	if !pending {
		return nil
	}
	saved := ""
	if backup {
		if saved, err = db.backup(ctx, version, time.Now()); err != nil {
			return err
		}
	}
	if _, err := p.Up(ctx); err != nil {
		if saved != "" {
			err = fmt.Errorf("%w (the database as it was is saved at %s)", err, saved)
		}
		return db.openError(fmt.Errorf("migrate: %w", err))
	}
	return nil
}

// backup writes a consistent copy of the database to
// <path>.bak-<version>-<unixtime> with VACUUM INTO, which reads through
// SQLite and so includes what is still in the WAL (a file copy would not).
func (db *DB) backup(ctx context.Context, version int64, now time.Time) (string, error) {
	dst := fmt.Sprintf("%s.bak-%d-%d", db.path, version, now.Unix())
	// VACUUM INTO accepts an empty file; creating it first gives the copy,
	// which holds API keys, mode 0600 instead of SQLite's default 0644.
	f, err := os.OpenFile(dst, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("back up database before migrating: %w", err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("back up database before migrating: %w", err)
	}
	if _, err := db.sql.ExecContext(ctx, `VACUUM INTO ?`, dst); err != nil {
		_ = os.Remove(dst)
		return "", db.openError(fmt.Errorf("back up database to %s before migrating: %w", dst, err))
	}
	// VACUUM INTO does not sync its output; the backup must be on disk
	// before the migration it guards starts writing.
	if err := syncFile(dst); err != nil {
		return "", fmt.Errorf("back up database to %s: %w", dst, err)
	}
	return dst, nil
}

func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// Close closes the database. Call it after the log writer is closed.
// prepare prepares the statements every log batch runs.
func (db *DB) prepare(ctx context.Context) error {
	var err error
	if db.logInsert, err = db.sql.PrepareContext(ctx, insertLogSQL(1)); err != nil {
		return fmt.Errorf("prepare the request log's insert: %w", err)
	}
	if db.logInsertMany, err = db.sql.PrepareContext(ctx, insertLogSQL(logInsertRows)); err != nil {
		return fmt.Errorf("prepare the request log's insert: %w", err)
	}
	db.upsert = map[string]*sql.Stmt{}
	for _, table := range []string{minuteTable, hourTable} {
		if db.upsert[table], err = db.sql.PrepareContext(ctx, fmt.Sprintf(usageUpsert, table)); err != nil {
			return fmt.Errorf("prepare the %s upsert: %w", table, err)
		}
	}
	for _, table := range []string{keyMinuteTable, keyHourTable} {
		if db.upsert[table], err = db.sql.PrepareContext(ctx, fmt.Sprintf(keyUsageUpsert, table)); err != nil {
			return fmt.Errorf("prepare the %s upsert: %w", table, err)
		}
	}
	for _, table := range []string{ruleMinuteTable, ruleHourTable} {
		if db.upsert[table], err = db.sql.PrepareContext(ctx, fmt.Sprintf(ruleUsageUpsert, table)); err != nil {
			return fmt.Errorf("prepare the %s upsert: %w", table, err)
		}
	}
	return nil
}

func (db *DB) Close() error {
	_ = db.logInsert.Close()
	_ = db.logInsertMany.Close()
	for _, s := range db.upsert {
		_ = s.Close()
	}
	if err := db.sql.Close(); err != nil {
		return fmt.Errorf("close database %s: %w", db.path, err)
	}
	return nil
}

// Path is the absolute path of the database file.
func (db *DB) Path() string { return db.path }

// write runs fn in one write transaction: all of it commits or none does.
func (db *DB) write(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return db.writeUnder(ctx, ctx, fn)
}

// writeUncancelled is write for a transaction whose statements must not
// watch ctx: with a context that can end, database/sql starts a goroutine
// for the transaction and the driver one for BEGIN and COMMIT each (and a
// progress handler for every statement), which the log writer paid for
// every batch (bench/NOTES.md). ctx still bounds the wait for the write
// lock; fn checks it between its steps, and an error from fn rolls back.
func (db *DB) writeUncancelled(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return db.writeUnder(ctx, context.WithoutCancel(ctx), fn)
}

func (db *DB) writeUnder(wait, txCtx context.Context, fn func(tx *sql.Tx) error) error {
	select {
	case db.writeSem <- struct{}{}:
	case <-wait.Done():
		return wait.Err()
	}
	defer func() { <-db.writeSem }()
	tx, err := db.sql.BeginTx(txCtx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }() // no-op after Commit; covers a panic in fn
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}
