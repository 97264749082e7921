//go:build !desktop

package desktop

import (
	"context"
	"errors"
)

// Available: a build without the desktop tag has no window or tray.
const Available = false

// ErrUnavailable: this build has no window or tray.
var ErrUnavailable = errors.New("this ccmesh was built without the desktop tag: run it with --headless, or build it with `make desktop`")

// Run is not available in this build.
func Run(ctx context.Context, cfg Config, h Host) error { return ErrUnavailable }
