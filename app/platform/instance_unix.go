//go:build unix

package platform

import (
	"errors"
	"os"
	"syscall"
)

var errLocked = errors.New("locked")

func lockFileNB(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return errLocked
	}
	return err
}
