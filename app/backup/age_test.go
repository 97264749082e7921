package backup

import (
	"context"
	"errors"
	"testing"
)

func init() {
	// Tests encrypt and decrypt under -race: age's default work factor
	// takes seconds there. The format is the same at any factor.
	ScryptWorkFactor = 10
}

// Files are opened one at a time: while another holds the scrypt slot,
// an open waits for it, and gives up when its request ends, having done
// no work.
func TestOpenFileWaitsForTheScryptSlot(t *testing.T) {
	const pass = "correct horse battery"
	sealed, err := Seal(t.Context(), []byte(`{"version":2,"endpoints":[]}`), pass)
	if err != nil {
		t.Fatal(err)
	}
	release, err := TakeScryptSlot(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, _, err = Open(ctx, sealed, pass, 4<<20)
	release()
	if !errors.Is(err, context.Canceled) {
		t.Errorf("open while the slot is held, its context ended: %v, want context.Canceled", err)
	}
	if _, err := Seal(ctx, []byte("{}"), pass); !errors.Is(err, context.Canceled) {
		t.Errorf("seal with its context ended: %v, want context.Canceled", err)
	}
	if _, _, err := Open(t.Context(), sealed, pass, 4<<20); err != nil {
		t.Errorf("open with the slot free: %v", err)
	}
}
