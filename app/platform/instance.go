package platform

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrAlreadyRunning means another ccmesh holds the data dir.
var ErrAlreadyRunning = errors.New("another ccmesh is running with this data dir")

const lockFile = "ccmesh.lock"

// Instance is the data dir's single-instance lock. It is taken before the
// database is opened or a port bound, so a second launch changes nothing.
type Instance struct {
	f *os.File
}

// AcquireInstance locks dir. When another process holds it, the error is
// ErrAlreadyRunning and running is the address that process listens on.
func AcquireInstance(dir string) (inst *Instance, running string, err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, "", fmt.Errorf("create data dir %s: %w", dir, err)
	}
	path := filepath.Join(dir, lockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, "", fmt.Errorf("open %s: %w", path, err)
	}
	if err := lockFileNB(f); err != nil {
		b, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, errLocked) {
			return nil, strings.TrimSpace(string(b)), ErrAlreadyRunning
		}
		return nil, "", fmt.Errorf("lock %s: %w", path, err)
	}
	return &Instance{f: f}, "", nil
}

// SetAddress records where this instance listens, for a second launch.
func (i *Instance) SetAddress(addr string) error {
	if err := i.f.Truncate(0); err != nil {
		return err
	}
	_, err := i.f.WriteAt([]byte(addr+"\n"), 0)
	return err
}

// Release unlocks; the process ending does the same.
func (i *Instance) Release() error {
	return i.f.Close()
}
