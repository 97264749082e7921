//go:build !unix

package platform

import (
	"errors"
	"os"
)

var errLocked = errors.New("locked")

// Without flock the listening port is what keeps a second instance out:
// its bind fails with a clear error.
func lockFileNB(f *os.File) error { return nil }
