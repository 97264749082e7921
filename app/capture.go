package app

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/ccmesh/ccmesh/app/capture"
	"github.com/ccmesh/ccmesh/proxy"
	"github.com/ccmesh/ccmesh/store"
)

// Capture and resend (docs/BEHAVIOUR.md#capture-and-resend): the proxy
// keeps what a client sent and got when the capture setting says so; the
// log writer stores it, secrets removed; these handlers show it, resend it
// through the proxy, and write it as a curl command.

// captureSource hands a proxy capture to the log writer, which calls
// Capture on its own goroutine: the secrets are removed there, off the
// request path.
// adminToken is masked too: the proxy does not know it, and a page's
// Referer (/ui/?token=…) or a client's query may carry it.
type captureSource struct {
	c          *proxy.Capture
	adminToken string
}

func (s captureSource) Size() int { return s.c.Size() }

func (s captureSource) Capture() *store.Capture {
	c := s.c
	c.Redact(s.adminToken)
	return &store.Capture{
		Method:            c.Method,
		Query:             c.Query,
		RequestHeader:     c.RequestHeader,
		RequestBody:       c.RequestBody,
		RequestTruncated:  c.RequestTruncated,
		Status:            c.Status,
		ResponseHeader:    c.ResponseHeader,
		ResponseBody:      c.ResponseBody,
		ResponseTruncated: c.ResponseTruncated,
	}
}

// CaptureReply is GET /api/logs/{id}/capture.
type CaptureReply struct {
	Request  CapturedRequest  `json:"request"`
	Response CapturedResponse `json:"response"`
}

// CapturedRequest is what the client sent: its headers (names in lower
// case, a repeated header's values joined by ", "), its body as text, and
// whether the body was cut at the cap.
type CapturedRequest struct {
	Headers   map[string]string `json:"headers"`
	Body      string            `json:"body"`
	Truncated bool              `json:"truncated"`
}

// CapturedResponse is what the client got: a stream's body is the raw SSE
// as it was sent.
type CapturedResponse struct {
	Status    int               `json:"status"`
	Headers   map[string]string `json:"headers"`
	Body      string            `json:"body"`
	Truncated bool              `json:"truncated"`
}

// ResendInput is POST /api/logs/{id}/resend's body; both fields are
// optional.
type ResendInput struct {
	// Endpoint names the endpoint to send to (x-ccmesh-endpoint); "" routes
	// the request as any other.
	Endpoint string `json:"endpoint,omitempty"`
	// Stream, when given, sets the body's "stream".
	Stream *bool `json:"stream,omitempty"`
}

// ResendReply says how the resent request went: its new log row (0 when
// the row was lost), the status and the endpoint that answered last.
type ResendReply struct {
	LogID    int64  `json:"log_id"`
	Status   int    `json:"status"`
	Endpoint string `json:"endpoint"`
}

// CurlReply is GET /api/logs/{id}/curl.
type CurlReply struct {
	Command string `json:"command"`
}

func (a *App) getCapture(w http.ResponseWriter, r *http.Request) error {
	_, c, err := a.loadCapture(r, false)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, CaptureReply{
		Request: CapturedRequest{Headers: capture.FlatHeader(c.RequestHeader), Body: capture.Text(c.RequestBody),
			Truncated: c.RequestTruncated},
		Response: CapturedResponse{Status: c.Status, Headers: capture.FlatHeader(c.ResponseHeader),
			Body: capture.Text(c.ResponseBody), Truncated: c.ResponseTruncated},
	})
	return nil
}

// loadCapture reads the capture of the path's log row. With forSending, a
// row without one is a 409 (there is nothing to send), and so is a capture
// whose request body was cut at the cap.
func (a *App) loadCapture(r *http.Request, forSending bool) (int64, store.Capture, error) {
	id, err := logID(r)
	if err != nil {
		return 0, store.Capture{}, err
	}
	c, err := a.db.GetCapture(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		if _, lerr := a.db.GetLog(r.Context(), id); lerr != nil {
			return 0, store.Capture{}, lerr
		}
		status := http.StatusNotFound
		if forSending {
			status = http.StatusConflict
		}
		return 0, store.Capture{}, &apiError{Status: status, Code: "no_capture", Message: fmt.Sprintf(
			"request log %d has no capture, so there is nothing to send again: set capture to errors or all "+
				"in Settings and requests are captured from then on (a capture may also have been dropped "+
				"for the total cap)", id)}
	}
	if err != nil {
		return 0, store.Capture{}, err
	}
	// A capture stored before queries were redacted may still hold a
	// credential there: it is never shown, copied or sent again.
	c.Query = proxy.RedactQuery(c.Query, a.token)
	if forSending && c.RequestTruncated {
		return 0, store.Capture{}, &apiError{Status: http.StatusConflict, Code: "capture_truncated", Message: fmt.Sprintf(
			"the request body of log %d was cut at the capture cap (or refused unread), so it cannot be sent again", id)}
	}
	return id, c, nil
}

func logID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, errBadRequest("bad_id", "id", "%q is not a request log id (a positive integer)", r.PathValue("id"))
	}
	return id, nil
}

// resendWait is the tag of a resent request: the sink hands its row's
// Done to it, so the handler learns the new row's id.
type resendWait struct{ ch chan int64 }

func (w *resendWait) logged(id int64) {
	select {
	case w.ch <- id:
	default:
	}
}

// resendRowWait bounds how long a resend waits for its row to be written
// (the writer commits within its 200 ms flush interval).
const resendRowWait = 5 * time.Second

func (a *App) resend(w http.ResponseWriter, r *http.Request) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	var in ResendInput
	if len(bytes.TrimSpace(body)) > 0 {
		if err := decodeBody(body, &in); err != nil {
			return err
		}
	}
	if in.Endpoint != "" {
		i := slices.IndexFunc(a.state.Load().Endpoints, func(e store.Endpoint) bool { return e.Name == in.Endpoint })
		if i < 0 {
			return &apiError{Status: http.StatusUnprocessableEntity, Code: "unknown_endpoint", Field: "endpoint",
				Message: fmt.Sprintf("no endpoint is named %q", in.Endpoint)}
		}
	}
	id, c, err := a.loadCapture(r, true)
	if err != nil {
		return err
	}
	row, err := a.db.GetLog(r.Context(), id)
	if err != nil {
		return err
	}
	reqBody := c.RequestBody
	if in.Stream != nil {
		if reqBody, err = capture.SetStream(reqBody, *in.Stream); err != nil {
			return &apiError{Status: http.StatusConflict, Code: "not_json", Field: "stream",
				Message: fmt.Sprintf("the captured body of log %d is not a JSON object, so its stream flag cannot be set: %v", id, err)}
		}
	}
	wait := &resendWait{ch: make(chan int64, 1)}
	target := "http://127.0.0.1" + row.Path
	if c.Query != "" {
		target += "?" + c.Query
	}
	method := c.Method
	if method == "" {
		method = http.MethodPost
	}
	// As a client would send it, minus what was never stored (its
	// credentials): the proxy lets this Internal request through its
	// client-token check, the admin token having been checked already.
	req, err := http.NewRequestWithContext(proxy.Internal(r.Context(), wait), method, target, bytes.NewReader(reqBody))
	if err != nil {
		return err
	}
	req.Header = capture.ReplayHeader(c.RequestHeader)
	if in.Endpoint != "" {
		req.Header.Set("X-Ccmesh-Endpoint", in.Endpoint)
	}
	req.Header.Set(proxy.ResentFromHeader, strconv.FormatInt(id, 10))
	req.RemoteAddr = "127.0.0.1:0"
	out := capture.NewRecorder()
	a.serveInternal(out, req)

	reply := ResendReply{Status: out.Status, Endpoint: out.Head.Get("X-Ccmesh-Endpoint")}
	if reply.Status == 0 {
		reply.Status = proxy.StatusClientGone
	}
	select {
	case reply.LogID = <-wait.ch:
	case <-time.After(resendRowWait):
	case <-r.Context().Done():
	}
	writeJSON(w, http.StatusOK, reply)
	return nil
}

// serveInternal runs the proxy for an in-process request. A body that
// broke after its status was sent makes the proxy abort the connection
// (http.ErrAbortHandler); here there is none, and the record is written
// all the same.
func (a *App) serveInternal(w http.ResponseWriter, req *http.Request) {
	defer func() {
		if p := recover(); p != nil && p != http.ErrAbortHandler {
			panic(p)
		}
	}()
	a.proxy.ServeHTTP(w, req)
}

func (a *App) curlCommand(w http.ResponseWriter, r *http.Request) error {
	id, c, err := a.loadCapture(r, false)
	if err != nil {
		return err
	}
	if c.RequestTruncated {
		return &apiError{Status: http.StatusConflict, Code: "capture_truncated", Message: fmt.Sprintf(
			"the request body of log %d was cut at the capture cap (or refused unread): a command with it would send a broken body", id)}
	}
	row, err := a.db.GetLog(r.Context(), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, CurlReply{Command: capture.Curl(a.ProxyURL(), row, c)})
	return nil
}
