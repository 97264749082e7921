package platform

import (
	"errors"
	"testing"
)

func TestInstanceLock(t *testing.T) {
	dir := t.TempDir()
	first, _, err := AcquireInstance(dir)
	if err != nil {
		t.Fatalf("first: %v", err)
	}
	if err := first.SetAddress("127.0.0.1:4567"); err != nil {
		t.Fatal(err)
	}
	_, running, err := AcquireInstance(dir)
	if !errors.Is(err, ErrAlreadyRunning) || running != "127.0.0.1:4567" {
		t.Fatalf("second: got %q, %v; want the first's address and ErrAlreadyRunning", running, err)
	}
	if err := first.Release(); err != nil {
		t.Fatal(err)
	}
	again, _, err := AcquireInstance(dir)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	again.Release()
}
