package store

import (
	"reflect"
	"testing"
	"time"
)

// attempt is one entry of a row's history as the proxy writes it.
func attempt(id int64, name string, status int, outcome string) map[string]any {
	return map[string]any{"endpoint_id": id, "endpoint": name, "status": status, "outcome": outcome}
}

// Stats count every attempt under its own endpoint
// (docs/BEHAVIOUR.md#request-log): an endpoint that failed before another
// answered shows that error, the one that answered the request.
func TestStatsPerAttempt(t *testing.T) {
	db := openTestDB(t)
	m0 := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	m1 := m0.Add(time.Minute)
	addLogs(t, db,
		// Failed on alpha, answered by beta.
		RequestLog{At: m0, EndpointID: 2, Endpoint: "beta", Status: 200, Attempts: 2,
			History: []any{attempt(1, "alpha", 503, "failure"), attempt(2, "beta", 200, "success")}},
		// alpha twice, then beta, and none answered.
		RequestLog{At: m0.Add(time.Second), EndpointID: 2, Endpoint: "beta", Status: 502, Attempts: 3,
			History: []any{attempt(1, "alpha", 500, "failure"), attempt(1, "alpha", 500, "failure"), attempt(2, "beta", 502, "failure")}},
		// Failed on alpha, then beta's stream broke after it began.
		RequestLog{At: m1, EndpointID: 2, Endpoint: "beta", Status: 200, Stream: true, StreamEnd: "upstream_error", Attempts: 2,
			History: []any{attempt(1, "alpha", 0, "failure"), attempt(2, "beta", 200, "success")}},
		// No attempt: counted as the row.
		RequestLog{At: m1, Status: 404, History: []any{}},
		RequestLog{At: m1, Status: 200, Path: "/v1/models"},
	)
	got, err := db.Stats(t.Context(), m0)
	if err != nil {
		t.Fatal(err)
	}
	want := []StatPoint{
		{Minute: m0, EndpointID: 1, Endpoint: "alpha", Requests: 3, Errors: 3},
		{Minute: m0, EndpointID: 2, Endpoint: "beta", Requests: 2, Errors: 1},
		{Minute: m1, EndpointID: 0, Endpoint: "", Requests: 2, Errors: 1},
		{Minute: m1, EndpointID: 1, Endpoint: "alpha", Requests: 1, Errors: 1},
		{Minute: m1, EndpointID: 2, Endpoint: "beta", Requests: 1, Errors: 1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Stats\n got %+v\nwant %+v", got, want)
	}
}
