package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// The crash test re-runs this test binary as a child that edits the
// database and dies without closing it; these variables tell the child
// what to do.
const (
	crashDBEnv  = "CCMESH_STORE_CRASH_DB"
	crashHowEnv = "CCMESH_STORE_CRASH_HOW" // "kill" or "exit"
)

func TestMain(m *testing.M) {
	if path := os.Getenv(crashDBEnv); path != "" {
		crashChild(path, os.Getenv(crashHowEnv)) // does not return
	}
	os.Exit(m.Run())
}

// crashChild commits an endpoint edit and a breaker state, then dies
// without Close: SIGKILL (no deferred code, no exit handlers) or os.Exit(1).
func crashChild(path, how string) {
	ctx := context.Background()
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "crash child:", err)
		os.Exit(3)
	}
	db, err := Open(ctx, path)
	if err != nil {
		fail(err)
	}
	e, err := db.CreateEndpoint(ctx, endpointPatch("survivor"))
	if err != nil {
		fail(err)
	}
	if _, err := db.UpdateEndpoint(ctx, e.ID, EndpointPatch{APIKey: ptr("sk-rotated")}); err != nil {
		fail(err)
	}
	if err := db.SaveBreakerState(ctx, BreakerState{EndpointID: e.ID, State: "open", Reason: "manual"}); err != nil {
		fail(err)
	}
	if how == "exit" {
		os.Exit(1)
	}
	p, err := os.FindProcess(os.Getpid())
	if err != nil {
		fail(err)
	}
	_ = p.Kill() // SIGKILL on Unix
	select {}    // never reached once the signal lands
}

func TestCommittedEditsSurviveCrash(t *testing.T) {
	for _, how := range []string{"kill", "exit"} {
		t.Run(how, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "ccmesh.db")
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), crashDBEnv+"="+path, crashHowEnv+"="+how)
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) {
				t.Fatalf("child ended with %v, want it to die; output:\n%s", err, out)
			}
			// -1: killed by a signal; 1: os.Exit(1). 3 is the child's own failure.
			if want := map[string]int{"kill": -1, "exit": 1}[how]; exit.ExitCode() != want {
				t.Fatalf("child exit code %d, want %d; output:\n%s", exit.ExitCode(), want, out)
			}

			db := openAt(t, path)
			list, err := db.ListEndpoints(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if len(list) != 1 || list[0].Name != "survivor" || list[0].APIKey != "sk-rotated" {
				t.Fatalf("endpoints after the crash = %+v, want survivor with the rotated key", list)
			}
			states, err := db.LoadBreakerStates(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if len(states) != 1 || states[0].State != "open" || states[0].Reason != "manual" {
				t.Errorf("breaker states after the crash = %+v, want survivor open (manual)", states)
			}
		})
	}
}
