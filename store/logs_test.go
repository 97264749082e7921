package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"
)

// addLogs writes rows directly (no LogWriter) and returns their ids.
func addLogs(t *testing.T, db *DB, rows ...RequestLog) []int64 {
	t.Helper()
	routing := make([][]byte, len(rows))
	history := make([][]byte, len(rows))
	for i, r := range rows {
		if r.Routing != nil {
			routing[i], _ = json.Marshal(r.Routing)
		}
		if r.History != nil {
			history[i], _ = json.Marshal(r.History)
		}
	}
	if err := db.insertLogs(t.Context(), rows, routing, history); err != nil {
		t.Fatalf("insertLogs: %v", err)
	}
	ids := make([]int64, len(rows))
	for i := range rows {
		ids[i] = rows[i].ID
	}
	return ids
}

func logIDs(items []RequestLog) []int64 {
	ids := []int64{}
	for _, r := range items {
		ids = append(ids, r.ID)
	}
	return ids
}

func TestListLogsFilters(t *testing.T) {
	db := openTestDB(t)
	ids := addLogs(t, db,
		RequestLog{Endpoint: "alpha", Status: 200, ModelAsked: "claude-sonnet-4", ModelForwarded: "claude-sonnet-4"},
		RequestLog{Endpoint: "beta", Status: 429, ModelAsked: "claude-haiku", ModelForwarded: "glm-4.5-air"},
		RequestLog{Endpoint: "alpha", Status: 500, ModelAsked: "claude-haiku", ModelForwarded: "claude-haiku"},
		RequestLog{Endpoint: "", Status: 400, ModelAsked: ""},
	)
	tests := []struct {
		name   string
		filter LogFilter
		want   []int64
	}{
		{"none", LogFilter{}, []int64{ids[3], ids[2], ids[1], ids[0]}},
		{"endpoint", LogFilter{Endpoint: "alpha"}, []int64{ids[2], ids[0]}},
		{"status", LogFilter{Status: 429}, []int64{ids[1]}},
		{"model asked", LogFilter{Model: "claude-haiku"}, []int64{ids[2], ids[1]}},
		{"model forwarded", LogFilter{Model: "glm-4.5-air"}, []int64{ids[1]}},
		{"endpoint and model", LogFilter{Endpoint: "alpha", Model: "claude-haiku"}, []int64{ids[2]}},
		{"before", LogFilter{Before: ids[2]}, []int64{ids[1], ids[0]}},
		{"no match", LogFilter{Endpoint: "gamma"}, []int64{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			items, next, err := db.ListLogs(t.Context(), tc.filter)
			if err != nil {
				t.Fatal(err)
			}
			if got := logIDs(items); !slices.Equal(got, tc.want) || next != 0 {
				t.Errorf("ListLogs(%+v) = %v next %d, want %v next 0", tc.filter, got, next, tc.want)
			}
		})
	}
}

func TestListLogsPaging(t *testing.T) {
	tests := []struct {
		name  string
		rows  int
		limit int
		pages [][]int64 // ids, by position 1..rows
	}{
		{"partial last page", 7, 3, [][]int64{{7, 6, 5}, {4, 3, 2}, {1}}},
		{"exact pages", 6, 3, [][]int64{{6, 5, 4}, {3, 2, 1}}},
		{"default limit", 3, 0, [][]int64{{3, 2, 1}}},
		{"empty", 0, 5, [][]int64{{}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db := openTestDB(t)
			rows := make([]RequestLog, tc.rows)
			for i := range rows {
				rows[i].ID = int64(i + 1)
			}
			if tc.rows > 0 {
				addLogs(t, db, rows...)
			}
			before := int64(0)
			for i, want := range tc.pages {
				items, next, err := db.ListLogs(t.Context(), LogFilter{Limit: tc.limit, Before: before})
				if err != nil {
					t.Fatal(err)
				}
				if got := logIDs(items); !slices.Equal(got, want) {
					t.Errorf("page %d = %v, want %v", i, got, want)
				}
				wantNext := int64(0)
				if i < len(tc.pages)-1 {
					wantNext = want[len(want)-1]
				}
				if next != wantNext {
					t.Errorf("page %d next_before = %d, want %d", i, next, wantNext)
				}
				before = next
			}
		})
	}
}

func TestListLogsLimitCap(t *testing.T) {
	db := openTestDB(t)
	addLogs(t, db, make([]RequestLog, maxLogLimit+2)...)
	items, next, err := db.ListLogs(t.Context(), LogFilter{Limit: 10_000})
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != maxLogLimit || next == 0 {
		t.Errorf("got %d items next %d, want %d items and a next page", len(items), next, maxLogLimit)
	}
}

func TestGetLog(t *testing.T) {
	db := openTestDB(t)
	at := time.Date(2026, 11, 30, 8, 1, 2, 345_000_000, time.UTC)
	full := RequestLog{
		At: at, Protocol: "anthropic", Path: "/v1/messages", ModelAsked: "@alpha/claude-x",
		ModelForwarded: "claude-x", Explicit: true, EndpointID: 3, Endpoint: "alpha", Status: 200,
		Attempts: 2, DurationMs: 1500, TTFBMs: 300, Stream: true, StreamEnd: "complete",
		TokensIn: 10, TokensOut: 20, SentUpstream: true, ClientGone: false, Error: "",
		Routing: map[string]any{"candidates": []string{"alpha"}},
		History: []map[string]any{{"endpoint": "beta", "status": 529}},
	}
	ids := addLogs(t, db, full, RequestLog{At: at, Status: 400, Error: "bad json"})

	got, err := db.GetLog(t.Context(), ids[0])
	if err != nil {
		t.Fatalf("GetLog: %v", err)
	}
	want := full
	want.ID = ids[0]
	want.Routing = json.RawMessage(`{"candidates":["alpha"]}`)
	want.History = json.RawMessage(`[{"endpoint":"beta","status":529}]`)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("GetLog\n got %+v\nwant %+v", got, want)
	}

	bare, err := db.GetLog(t.Context(), ids[1])
	if err != nil {
		t.Fatal(err)
	}
	if bare.Routing != nil || bare.History != nil {
		t.Errorf("routing %#v history %#v, want nil interfaces", bare.Routing, bare.History)
	}
	b, _ := json.Marshal(bare)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	if _, ok := m["routing"]; ok {
		t.Errorf("JSON of a row without routing has a routing field: %s", b)
	}

	if _, err := db.GetLog(t.Context(), 999); !errors.Is(err, ErrNotFound) {
		t.Errorf("GetLog(999) = %v, want ErrNotFound", err)
	}
}

func TestStats(t *testing.T) {
	db := openTestDB(t)
	m0 := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	m1 := m0.Add(time.Minute)
	addLogs(t, db,
		RequestLog{At: m0.Add(-time.Millisecond), EndpointID: 1, Endpoint: "alpha", Status: 500}, // before since
		RequestLog{At: m0, EndpointID: 1, Endpoint: "alpha", Status: 200},
		RequestLog{At: m0.Add(59 * time.Second), EndpointID: 1, Endpoint: "alpha", Status: 200, Stream: true, StreamEnd: "complete"},
		RequestLog{At: m0.Add(30 * time.Second), EndpointID: 1, Endpoint: "alpha", Status: 200, Stream: true, StreamEnd: "idle_timeout"},
		RequestLog{At: m0.Add(10 * time.Second), EndpointID: 2, Endpoint: "beta", Status: 429},
		RequestLog{At: m1, EndpointID: 1, Endpoint: "alpha", Status: 400},
		RequestLog{At: m1.Add(time.Second), EndpointID: 1, Endpoint: "alpha", Status: 200, StreamEnd: "client_gone"},
		RequestLog{At: m1.Add(2 * time.Second), EndpointID: 0, Endpoint: "", Status: 502},
	)
	got, err := db.Stats(t.Context(), m0)
	if err != nil {
		t.Fatal(err)
	}
	want := []StatPoint{
		{Minute: m0, EndpointID: 1, Endpoint: "alpha", Requests: 3, Errors: 1},
		{Minute: m0, EndpointID: 2, Endpoint: "beta", Requests: 1, Errors: 1},
		{Minute: m1, EndpointID: 0, Endpoint: "", Requests: 1, Errors: 1},
		{Minute: m1, EndpointID: 1, Endpoint: "alpha", Requests: 2, Errors: 2},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Stats\n got %+v\nwant %+v", got, want)
	}
}

func TestPrune(t *testing.T) {
	now := time.Now()
	tests := []struct {
		name        string
		maxRows     int
		maxAge      time.Duration
		wantDeleted int64
		wantLeft    []int64
	}{
		{"off", 0, 0, 0, []int64{5, 4, 3, 2, 1}},
		{"rows", 2, 0, 3, []int64{5, 4}},
		{"rows above count", 10, 0, 0, []int64{5, 4, 3, 2, 1}},
		{"age", 0, 36 * time.Hour, 2, []int64{5, 4, 3}},
		{"both", 1, 36 * time.Hour, 4, []int64{5}},
	}
	// Chunks of 2 rows make most cases take several DELETEs.
	defer func(n int) { pruneChunk = n }(pruneChunk)
	for _, chunk := range []int{pruneChunk, 2} {
		pruneChunk = chunk
		for _, tc := range tests {
			t.Run(fmt.Sprintf("%s/chunk %d", tc.name, chunk), func(t *testing.T) {
				db := openTestDB(t)
				addLogs(t, db,
					RequestLog{ID: 1, At: now.Add(-72 * time.Hour)},
					RequestLog{ID: 2, At: now.Add(-48 * time.Hour)},
					RequestLog{ID: 3, At: now.Add(-24 * time.Hour)},
					RequestLog{ID: 4, At: now.Add(-time.Hour)},
					RequestLog{ID: 5, At: now},
				)
				n, err := db.Prune(t.Context(), tc.maxRows, tc.maxAge)
				if err != nil {
					t.Fatal(err)
				}
				items, _, err := db.ListLogs(t.Context(), LogFilter{})
				if err != nil {
					t.Fatal(err)
				}
				if got := logIDs(items); n != tc.wantDeleted || !slices.Equal(got, tc.wantLeft) {
					t.Errorf("Prune(%d, %v) deleted %d leaving %v, want %d leaving %v",
						tc.maxRows, tc.maxAge, n, got, tc.wantDeleted, tc.wantLeft)
				}
			})
		}
	}
}

// The admin API's JSON must show empty lists as [], not null.
func TestEmptyListsAreNotNil(t *testing.T) {
	db := openTestDB(t)
	ctx := t.Context()
	endpoints, err1 := db.ListEndpoints(ctx)
	logs, _, err2 := db.ListLogs(ctx, LogFilter{})
	events, err3 := db.ListBreakerEvents(ctx, 0, 0)
	states, err4 := db.LoadBreakerStates(ctx)
	stats, err5 := db.Stats(ctx, time.Time{})
	if err := errors.Join(err1, err2, err3, err4, err5); err != nil {
		t.Fatal(err)
	}
	lists := map[string]any{"endpoints": endpoints, "logs": logs, "events": events, "states": states, "stats": stats}
	for name, list := range lists {
		if b, _ := json.Marshal(list); string(b) != "[]" {
			t.Errorf("empty %s marshal to %s, want []", name, b)
		}
	}
}
