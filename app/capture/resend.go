package capture

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/ccmesh/ccmesh/app/apierr"
	"github.com/ccmesh/ccmesh/proxy"
	"github.com/ccmesh/ccmesh/store"
)

// Wait is the tag of a resent request: the app's log sink hands its row's
// Done to Logged, so that Resend learns the new row's id.
type Wait struct{ ch chan int64 }

// Logged takes note of the resent request's row id; it never blocks.
func (w *Wait) Logged(id int64) {
	select {
	case w.ch <- id:
	default:
	}
}

// RowWait bounds how long a resend waits for its row to be written
// (the writer commits within its 200 ms flush interval).
const RowWait = 5 * time.Second

// Resent says how a resent request went: its new log row (0 when the row
// was lost), the status and the endpoint that answered last.
type Resent struct {
	LogID    int64
	Status   int
	Endpoint string
}

// Resend sends log row id's capture again through the proxy h, as a
// client would send it, minus what was never stored (its credentials):
// to the endpoint named endpoint ("" routes it as any other request),
// with the body's "stream" set to *stream unless stream is nil. A row
// without a capture, or whose body was cut, is a 409 apierr.Error (Load), and so
// is a stream flag to set in a body that is not a JSON object. It waits
// for the new row at most RowWait, or until ctx ends.
func Resend(ctx context.Context, db Store, h http.Handler, id int64, adminToken, endpoint string, stream *bool) (Resent, error) {
	c, err := Load(ctx, db, id, adminToken, true)
	if err != nil {
		return Resent{}, err
	}
	row, err := db.GetLog(ctx, id)
	if err != nil {
		return Resent{}, err
	}
	wait := &Wait{ch: make(chan int64, 1)}
	req, err := resendRequest(ctx, wait, id, row, c, endpoint, stream)
	if err != nil {
		return Resent{}, err
	}
	out := NewRecorder()
	serveInternal(h, out, req)

	res := Resent{Status: out.Status, Endpoint: out.Head.Get("X-Ccmesh-Endpoint")}
	if res.Status == 0 {
		res.Status = proxy.StatusClientGone
	}
	select {
	case res.LogID = <-wait.ch:
	case <-time.After(RowWait):
	case <-ctx.Done():
	}
	return res, nil
}

// resendRequest is capture c of row id as an in-process request tagged
// with wait: the proxy lets this Internal request through its
// client-token check, the admin token having been checked already.
func resendRequest(ctx context.Context, wait *Wait, id int64, row store.RequestLog, c store.Capture, endpoint string, stream *bool) (*http.Request, error) {
	body := c.RequestBody
	if stream != nil {
		var err error
		if body, err = SetStream(body, *stream); err != nil {
			return nil, &apierr.Error{Status: http.StatusConflict, Code: "not_json", Field: "stream",
				Message: fmt.Sprintf("the captured body of log %d is not a JSON object, so its stream flag cannot be set: %v", id, err)}
		}
	}
	target := "http://127.0.0.1" + row.Path
	if c.Query != "" {
		target += "?" + c.Query
	}
	method := c.Method
	if method == "" {
		method = http.MethodPost
	}
	req, err := http.NewRequestWithContext(proxy.Internal(ctx, wait), method, target, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header = ReplayHeader(c.RequestHeader)
	if endpoint != "" {
		req.Header.Set("X-Ccmesh-Endpoint", endpoint)
	}
	req.Header.Set(proxy.ResentFromHeader, strconv.FormatInt(id, 10))
	req.RemoteAddr = "127.0.0.1:0"
	return req, nil
}

// serveInternal runs the proxy h for an in-process request. A body that
// broke after its status was sent makes the proxy abort the connection
// (http.ErrAbortHandler); here there is none, and the record is written
// all the same.
func serveInternal(h http.Handler, w http.ResponseWriter, req *http.Request) {
	defer func() {
		if p := recover(); p != nil && p != http.ErrAbortHandler {
			panic(p)
		}
	}()
	h.ServeHTTP(w, req)
}
