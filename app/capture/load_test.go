package capture

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/ccmesh/ccmesh/app/apierr"
	"github.com/ccmesh/ccmesh/store"
)

type fakeStore struct {
	logs     map[int64]store.RequestLog
	captures map[int64]store.Capture
}

func (s fakeStore) GetCapture(_ context.Context, id int64) (store.Capture, error) {
	c, ok := s.captures[id]
	if !ok {
		return store.Capture{}, store.ErrNotFound
	}
	return c, nil
}

func (s fakeStore) GetLog(_ context.Context, id int64) (store.RequestLog, error) {
	r, ok := s.logs[id]
	if !ok {
		return store.RequestLog{}, store.ErrNotFound
	}
	return r, nil
}

// Load refuses what cannot be shown or sent with the status and code the
// API answers, and masks the admin token in a stored query.
func TestLoad(t *testing.T) {
	db := fakeStore{
		logs: map[int64]store.RequestLog{1: {ID: 1}, 2: {ID: 2}, 3: {ID: 3}},
		captures: map[int64]store.Capture{
			2: {Query: "beta=true&note=admintoken", RequestBody: []byte(`{}`)},
			3: {RequestBody: []byte(`{"a`), RequestTruncated: true},
		},
	}
	code := func(err error) (int, string) {
		var e *apierr.Error
		if errors.As(err, &e) {
			return e.Status, e.Code
		}
		return 0, ""
	}
	for _, c := range []struct {
		id         int64
		forSending bool
		status     int
		code       string
	}{
		{1, false, http.StatusNotFound, "no_capture"},
		{1, true, http.StatusConflict, "no_capture"},
		{3, true, http.StatusConflict, "capture_truncated"},
	} {
		_, err := Load(t.Context(), db, c.id, "admintoken", c.forSending)
		if s, cd := code(err); s != c.status || cd != c.code {
			t.Errorf("log %d, for sending %v: %v; want %d %s", c.id, c.forSending, err, c.status, c.code)
		}
	}
	if _, err := Load(t.Context(), db, 9, "admintoken", false); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a log that does not exist: %v, want store.ErrNotFound", err)
	}
	if c, err := Load(t.Context(), db, 3, "admintoken", false); err != nil || !c.RequestTruncated {
		t.Errorf("a cut capture to show: %+v, %v", c, err)
	}
	c, err := Load(t.Context(), db, 2, "admintoken", true)
	if err != nil || strings.Contains(c.Query, "admintoken") || !strings.Contains(c.Query, "beta=true") {
		t.Errorf("query %q, %v: want the admin token masked and the rest kept", c.Query, err)
	}
	_, err = CurlCommand(t.Context(), db, 3, "admintoken", "http://127.0.0.1:3457")
	if s, cd := code(err); s != http.StatusConflict || cd != "capture_truncated" {
		t.Errorf("curl of a cut capture: %v, want 409 capture_truncated", err)
	}
}

// The request a resend sends: the stored method (POST when none), path
// and query, the headers to send again, the endpoint asked for, where it
// was resent from, and the body with its stream flag set if asked.
func TestResendRequest(t *testing.T) {
	row := store.RequestLog{ID: 7, Path: "/v1/messages"}
	c := store.Capture{Query: "beta=true", RequestHeader: http.Header{"Content-Type": {"application/json"}, "Host": {"x"}},
		RequestBody: []byte(`{"model":"m","stream":false}`)}
	on := true
	req, err := resendRequest(t.Context(), &Wait{ch: make(chan int64, 1)}, 7, row, c, "relay", &on)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(req.Body)
	if req.Method != http.MethodPost || req.URL.String() != "http://127.0.0.1/v1/messages?beta=true" ||
		req.Header.Get("X-Ccmesh-Endpoint") != "relay" || req.Header.Get("X-Ccmesh-Resent-From") != "7" ||
		req.Header.Get("Host") != "" || req.Header.Get("Content-Type") != "application/json" ||
		string(body) != `{"model":"m","stream":true}` || req.RemoteAddr != "127.0.0.1:0" {
		t.Errorf("request %s %s %v %s %q", req.Method, req.URL, req.Header, req.RemoteAddr, body)
	}
	c.RequestBody = []byte(`[1]`)
	_, err = resendRequest(t.Context(), &Wait{ch: make(chan int64, 1)}, 7, row, c, "", &on)
	if e, ok := errors.AsType[*apierr.Error](err); !ok || e.Status != http.StatusConflict || e.Code != "not_json" || e.Field != "stream" {
		t.Errorf("stream flag in a body that is not an object: %v, want 409 not_json at stream", err)
	}
}
