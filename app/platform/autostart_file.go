//go:build linux || darwin

package platform

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// fileAutostart is an entry that is a file (Linux, macOS).
type fileAutostart struct {
	path    string
	content func(args []string) ([]byte, error)
	on      func(content []byte) bool // whether a file found there is on
}

func (f fileAutostart) Where() string { return f.path }

func (f fileAutostart) Enabled() (bool, error) {
	b, err := os.ReadFile(f.path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return f.on(b), nil
}

func (f fileAutostart) Enable(args []string) error {
	b, err := f.content(args)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(f.path), 0o755); err != nil {
		return err
	}
	// Through a temporary file, so a session starting meanwhile never
	// reads half an entry.
	tmp, err := os.CreateTemp(filepath.Dir(f.path), ".ccmesh-autostart-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after the rename there is nothing to remove
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), f.path)
}

func (f fileAutostart) Disable() error {
	if err := os.Remove(f.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
