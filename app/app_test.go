package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A read-only ccmesh.db stops start-up with words that say so, and keeps
// its mode (docs/BEHAVIOUR.md#bad-input-and-faults).
func TestStartRefusesReadOnlyDatabase(t *testing.T) {
	h := newHarness(t)
	h.mustCreate(`{"name":"a","base_url":"https://a.example","protocol":"anthropic"}`)
	h.stop()
	path := filepath.Join(h.dir, DBFile)
	if err := os.Chmod(path, 0o400); err != nil {
		t.Fatal(err)
	}
	a, err := New(context.Background(), Options{DataDir: h.dir, Listen: "127.0.0.1:3457", AdminToken: testToken})
	if err == nil {
		a.Close(context.Background())
		t.Fatal("New on a read-only database succeeded, want an error")
	}
	if !strings.Contains(err.Error(), "ccmesh.db is read-only: ") {
		t.Errorf("error %q does not say ccmesh.db is read-only", err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if m := fi.Mode().Perm(); m != 0o400 {
		t.Errorf("mode after the refused start = %v, want 0400 kept", m)
	}
}
