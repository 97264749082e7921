package clients

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
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

// writePlan writes a previewed change to a client's configuration file:
// a backup of the old text first (when there was one), under a name no
// other file has, then the new text through a temporary file of its own
// in the same directory and a rename, so a crash never leaves half a
// file. It returns the backup's path ("" when there was no file).
func writePlan(path, current, proposed string) (backup string, err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("create %s: %w", dir, err)
	}
	if current != "" {
		if backup, err = writeBackup(path, current, time.Now()); err != nil {
			return "", err
		}
	}
	// CreateTemp opens a new file with O_EXCL under a random name: a link
	// planted at a name ccmesh would use cannot redirect the write.
	f, err := os.CreateTemp(dir, filepath.Base(path)+".ccmesh-tmp-*")
	if err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			os.Remove(tmp)
		}
	}()
	if err := writeAndClose(f, proposed); err != nil {
		return "", fmt.Errorf("write %s: %w", tmp, err)
	}
	// Rename replaces the name itself: were a link put at path since it
	// was read, the link is replaced, never followed.
	if err := os.Rename(tmp, path); err != nil {
		return "", fmt.Errorf("replace %s: %w", path, err)
	}
	return backup, nil
}

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
