//go:build !desktop

package app

import (
	"context"
	"errors"
)

// DesktopAvailable: a build without the desktop tag has no window or tray.
const DesktopAvailable = false

// RunDesktop is not available in this build.
func RunDesktop(ctx context.Context, opts Options) error {
	return errors.New("this ccmesh was built without the desktop tag: run it with --headless, or build it with `make desktop`")
}
