package clients

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Reading and writing a client's configuration file for Connect
// (docs/BEHAVIOUR.md#admin-api). The file is in the user's home, where
// other programs write too: ccmesh reads only a regular file of a sane size, and writes so that nothing at a name it picks can
// redirect the write — no fixed temporary name, no backup that replaces
// another, no link followed.

// MaxFile caps the configuration file ccmesh reads: these files are
// a few KiB, and one far larger is not one ccmesh should load whole.
const MaxFile = 4 << 20

// readClientFile returns the file at path, or nil when there is none. A
// symbolic link, a directory or anything else that is not a regular file,
// or a file over MaxFile is a Conflict that says what to do.
func readClientFile(path string) ([]byte, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if err := clientFileKind(path, fi); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	// The file opened must be the one looked at: a link put in its place
	// since is not followed.
	if now, err := f.Stat(); err != nil || !os.SameFile(fi, now) {
		return nil, conflict("client_config_changed", "%s was replaced while ccmesh read it; try again", path)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxFile+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(b) > MaxFile {
		return nil, tooLargeClientFile(path)
	}
	return b, nil
}

// clientFileKind refuses what is at path unless it is a regular file of
// at most MaxFile bytes.
func clientFileKind(path string, fi fs.FileInfo) error {
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return conflict("client_config_symlink", "%s is a symbolic link; ccmesh neither writes through a link nor replaces it: "+
			"make the change shown in the file it points to by hand", path)
	case fi.IsDir():
		return conflict("client_config_not_a_file", "%s is a directory, not a configuration file; move it away, then try again", path)
	case !fi.Mode().IsRegular():
		return conflict("client_config_not_a_file", "%s is not a regular file; move it away, then try again", path)
	case fi.Size() > MaxFile:
		return tooLargeClientFile(path)
	}
	return nil
}

func tooLargeClientFile(path string) error {
	return conflict("client_config_too_large", "%s is larger than %d MiB, which no client's settings are; ccmesh will not read it: "+
		"move it away or make the change by hand", path, MaxFile>>20)
}

// writePlans writes previewed changes to client configuration files.
// Each is staged first — a backup of the old text (when there was one),
// under a name no other file has, and the new text in a temporary file of
// its own in the same directory — and only when every file is staged are
// they renamed into place, so a file that cannot be written (its directory
// not writable, say) stops the change before any file changed. It returns
// each file's backup path ("" when there was no file). A rename that fails
// after another succeeded is a PartialWrite naming what was written.
func writePlans(files []FilePlan) ([]string, error) {
	staged := make([]stagedFile, 0, len(files))
	abort := func(from int) {
		for _, s := range staged[from:] {
			s.abort()
		}
	}
	for _, f := range files {
		s, err := stageFile(f.Path, f.Current, f.Proposed)
		if err != nil {
			abort(0)
			return nil, err
		}
		staged = append(staged, s)
	}
	backups := make([]string, len(staged))
	for i, s := range staged {
		// Rename replaces the name itself: were a link put at the path
		// since it was read, the link is replaced, never followed.
		if err := os.Rename(s.tmp, s.path); err != nil {
			abort(i)
			err = fmt.Errorf("replace %s: %w", s.path, err)
			if i == 0 {
				return nil, err
			}
			pw := &PartialWrite{NotWritten: s.path, Err: err}
			for _, w := range staged[:i] {
				pw.Written, pw.Backups = append(pw.Written, w.path), append(pw.Backups, w.backup)
			}
			return nil, pw
		}
		backups[i] = s.backup
	}
	return backups, nil
}

// stagedFile is a file's change ready to be renamed into place: the
// temporary file holding the new text, and the old text's backup.
type stagedFile struct{ path, tmp, backup string }

// abort removes what staging wrote: the file itself was not changed, so
// neither the new text nor the backup of the old one is wanted.
func (s stagedFile) abort() {
	os.Remove(s.tmp)
	if s.backup != "" {
		os.Remove(s.backup)
	}
}

// stageFile writes the backup of current and the proposed text to a new
// temporary file next to path.
func stageFile(path, current, proposed string) (s stagedFile, err error) {
	s.path = path
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return s, fmt.Errorf("create %s: %w", dir, err)
	}
	if current != "" {
		if s.backup, err = writeBackup(path, current, time.Now()); err != nil {
			return s, err
		}
	}
	defer func() {
		if err != nil && s.backup != "" {
			os.Remove(s.backup)
		}
	}()
	// CreateTemp opens a new file with O_EXCL under a random name: a link
	// planted at a name ccmesh would use cannot redirect the write.
	f, err := os.CreateTemp(dir, filepath.Base(path)+".ccmesh-tmp-*")
	if err != nil {
		return s, fmt.Errorf("write %s: %w", path, err)
	}
	s.tmp = f.Name()
	if err := writeAndClose(f, proposed); err != nil {
		os.Remove(s.tmp)
		return s, fmt.Errorf("write %s: %w", s.tmp, err)
	}
	return s, nil
}

// PartialWrite is a change to several files of which only the first
// were written: a rename failed after others had succeeded. It names
// both, and each written file's backup, so the user knows what changed.
type PartialWrite struct {
	Written, Backups []string // Backups[i] is "" when Written[i] was new
	NotWritten       string
	Err              error
}

func (e *PartialWrite) Error() string {
	var b strings.Builder
	for i, path := range e.Written {
		fmt.Fprintf(&b, "%s was written", path)
		if e.Backups[i] != "" {
			fmt.Fprintf(&b, " (its old text is in %s)", e.Backups[i])
		}
		b.WriteString("; ")
	}
	fmt.Fprintf(&b, "%s was not: %v", e.NotWritten, e.Err)
	return b.String()
}

func (e *PartialWrite) Unwrap() error { return e.Err }

// writeBackup writes text to path.ccmesh-backup-<time>, or -2, -3 … after
// it when that name is taken: a backup never replaces another, and never
// writes through a link (O_EXCL fails on one).
func writeBackup(path, text string, now time.Time) (string, error) {
	base := fmt.Sprintf("%s.ccmesh-backup-%s", path, now.Format("20060102-150405"))
	for n := 1; n <= 1000; n++ {
		name := base
		if n > 1 {
			name = fmt.Sprintf("%s-%d", base, n)
		}
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("back up %s: %w", path, err)
		}
		if err := writeAndClose(f, text); err != nil {
			os.Remove(name)
			return "", fmt.Errorf("back up %s: %w", path, err)
		}
		return name, nil
	}
	return "", fmt.Errorf("back up %s: 1000 backups named %s already exist", path, base)
}

// writeAndClose writes text to f, flushes it to disk and closes it.
func writeAndClose(f *os.File, text string) error {
	_, err := f.WriteString(text)
	if err == nil {
		err = f.Sync()
	}
	return errors.Join(err, f.Close())
}
