//go:build desktop && !linux

package desktop

import "errors"

// Native notifications are implemented for Linux only so far.
func notify(title, body string) error {
	return errors.New("notifications are not implemented on this system")
}
