package desktop

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ccmesh/ccmesh/store"
)

// The tray keeps the three latest changes, newest first, whatever order
// concurrent requests report them in; restores at start-up are not changes.
func TestTrayRecentChanges(t *testing.T) {
	var r Recent
	t0 := time.Date(2026, 12, 1, 15, 0, 0, 0, time.Local)
	for _, m := range []int{2, 1, 4, 3} {
		r.Add(store.BreakerEvent{At: t0.Add(time.Duration(m) * time.Minute), Endpoint: fmt.Sprint(m), Cause: "request"})
	}
	r.Add(store.BreakerEvent{At: t0.Add(time.Hour), Endpoint: "restored", Cause: "restore"})
	var got []string
	for _, ev := range r.Get() {
		got = append(got, ev.Endpoint)
	}
	if strings.Join(got, ",") != "4,3,2" {
		t.Errorf("kept %v, want 4,3,2", got)
	}
}
