package persist

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/ccmesh/ccmesh/app/config"
	"github.com/ccmesh/ccmesh/breaker"
	"github.com/ccmesh/ccmesh/proxy"
	"github.com/ccmesh/ccmesh/store"
)

type fakeBreakerStore struct {
	err    error
	states [][]store.BreakerState
	events [][]store.BreakerEvent
}

func (s *fakeBreakerStore) SaveBreakerTransitions(_ context.Context, states []store.BreakerState, events []store.BreakerEvent) error {
	if s.err != nil {
		return s.err
	}
	s.states = append(s.states, states)
	s.events = append(s.events, events)
	return nil
}

type fakeSource map[int64]string

func (s fakeSource) Endpoint(id int64) (string, bool) { name, ok := s[id]; return name, ok }

func (s fakeSource) Snapshot(int64) breaker.Snapshot {
	return breaker.Snapshot{State: breaker.Open, Reason: breaker.Manual}
}

// A flush writes one state row per breaker and one audit entry per
// transition; a failed flush keeps the batch for the next one; the queue
// holds at most MaxPendingTransitions.
func TestBreakersFlush(t *testing.T) {
	db := &fakeBreakerStore{err: errors.New("disk full")}
	p := NewBreakers(db, zerolog.Nop(), fakeSource{1: "a"})
	for i := 0; i < MaxPendingTransitions+5; i++ {
		p.Queue(breaker.Transition{ID: 1, From: breaker.Closed, To: breaker.Open, Cause: breaker.CauseForceOpen, At: time.Now()})
	}
	p.Queue(breaker.Transition{ID: 2, Cause: breaker.CauseForceOpen}) // not kept: the queue is full
	if err := p.Flush(t.Context()); err == nil {
		t.Fatal("flush into a failing store: no error")
	}
	db.err = nil
	if err := p.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if len(db.states) != 1 || len(db.states[0]) != 1 || db.states[0][0].State != "open" || db.states[0][0].Reason != "manual" {
		t.Errorf("state rows = %+v, want endpoint a's one row, open and manual", db.states)
	}
	if len(db.events) != 1 || len(db.events[0]) != MaxPendingTransitions || db.events[0][0].Endpoint != "a" || db.events[0][0].Cause != "force_open" {
		t.Errorf("got %d batches, want one of %d force_open entries of a", len(db.events), MaxPendingTransitions)
	}
	if err := p.Flush(t.Context()); err != nil || len(db.events) != 1 {
		t.Errorf("flush of an empty queue: %v, %d batches", err, len(db.events))
	}
}

// A state row restores the snapshot it was written from; words it does
// not know are an error.
func TestStateRowRoundTrip(t *testing.T) {
	s := breaker.Snapshot{State: breaker.HalfOpen, Reason: breaker.QuotaExhausted, ConsecutiveFailures: 3, Reopens: 2,
		OpenedAt: time.Unix(1000, 0), Until: time.Unix(2000, 0)}
	got, err := SnapshotFrom(StateRow(7, s))
	if err != nil || got != s {
		t.Errorf("round trip: %+v, %v; want %+v", got, err, s)
	}
	if _, err := SnapshotFrom(store.BreakerState{State: "ajar", Reason: "none"}); err == nil {
		t.Error("an unknown state: no error")
	}
	if _, err := SnapshotFrom(store.BreakerState{State: "open", Reason: "tired"}); err == nil {
		t.Error("an unknown reason: no error")
	}
}

type fakeDropHost struct{ mutations int }

func (h *fakeDropHost) Mutate(ctx context.Context, write func(context.Context) error) error {
	h.mutations++
	return write(ctx)
}

type fakeDropStore map[int64][]store.EndpointDrop

func (s fakeDropStore) AddEndpointDrops(_ context.Context, id int64, ds []store.EndpointDrop) (bool, error) {
	if id == 404 {
		return false, store.ErrNotFound
	}
	s[id] = append(s[id], ds...)
	return true, nil
}

// What the proxy learns is saved once per part and endpoint, its error cut
// at config.MaxDropError, in one write for the batch; an endpoint deleted
// meanwhile is skipped.
func TestDropsFlush(t *testing.T) {
	host, db := &fakeDropHost{}, fakeDropStore{}
	p := NewDrops(host, db, zerolog.Nop())
	at := time.Date(2026, 12, 1, 10, 0, 0, 123456789, time.FixedZone("x", 3600))
	p.Queue(1, proxy.Learned{Drop: "stream_options", At: at, Error: strings.Repeat("e", config.MaxDropError+10)})
	p.Queue(1, proxy.Learned{Drop: "stream_options", At: at, Error: "again"})
	p.Queue(1, proxy.Learned{Drop: "store", At: at, Error: "refused"})
	p.Queue(404, proxy.Learned{Drop: "store", At: at})
	p.Flush(t.Context())
	ds := db[1]
	if host.mutations != 1 || len(ds) != 2 || ds[0].Drop != "stream_options" || ds[1].Drop != "store" {
		t.Fatalf("%d writes, drops %+v; want one write of stream_options and store", host.mutations, ds)
	}
	if d := ds[0]; len(d.Error) != config.MaxDropError || d.Source != config.DropLearned || !d.At.Equal(at.Truncate(time.Millisecond)) || d.At.Location() != time.UTC {
		t.Errorf("drop %+v: want its error cut at %d, learned, at %v in UTC", d, config.MaxDropError, at.Truncate(time.Millisecond))
	}
	p.Flush(t.Context())
	if host.mutations != 1 {
		t.Errorf("a flush with nothing pending wrote (%d writes)", host.mutations)
	}
}
