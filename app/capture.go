package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

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
		Request: CapturedRequest{Headers: flatHeader(c.RequestHeader), Body: text(c.RequestBody),
			Truncated: c.RequestTruncated},
		Response: CapturedResponse{Status: c.Status, Headers: flatHeader(c.ResponseHeader),
			Body: text(c.ResponseBody), Truncated: c.ResponseTruncated},
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

// flatHeader writes h for the UI: lower-case names, values joined.
func flatHeader(h http.Header) map[string]string {
	out := make(map[string]string, len(h))
	for k, vv := range h {
		out[strings.ToLower(k)] = strings.Join(vv, ", ")
	}
	return out
}

// text is a captured body as text: bytes that are not UTF-8 (not expected
// of these APIs) become U+FFFD.
func text(b []byte) string { return strings.ToValidUTF8(string(b), "\uFFFD") }

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
		if reqBody, err = setStream(reqBody, *in.Stream); err != nil {
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
	req.Header = replayHeader(c.RequestHeader)
	if in.Endpoint != "" {
		req.Header.Set("X-Ccmesh-Endpoint", in.Endpoint)
	}
	req.Header.Set(proxy.ResentFromHeader, strconv.FormatInt(id, 10))
	req.RemoteAddr = "127.0.0.1:0"
	out := &discardWriter{header: http.Header{}}
	a.serveInternal(out, req)

	reply := ResendReply{Status: out.status, Endpoint: out.header.Get("X-Ccmesh-Endpoint")}
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

// discardWriter keeps a resent request's status and headers; its body is
// in the new row's capture, if the setting keeps one.
type discardWriter struct {
	header http.Header
	status int
}

func (d *discardWriter) Header() http.Header { return d.header }

func (d *discardWriter) WriteHeader(code int) {
	if d.status == 0 && code >= 200 {
		d.status = code
	}
}

func (d *discardWriter) Write(p []byte) (int, error) {
	d.WriteHeader(http.StatusOK)
	return len(p), nil
}

// replayHeader is a captured request's headers as they can be sent again:
// without those of the original connection (hop-by-hop, Host,
// Content-Length), a browser's (Origin, Referer, Sec-Fetch-*: the page it
// came from, which a resend or a curl command does not have), and ccmesh's
// own x-ccmesh-* but the endpoint the client named.
func replayHeader(h http.Header) http.Header {
	out := h.Clone()
	if out == nil {
		out = http.Header{}
	}
	for _, k := range []string{"Host", "Content-Length", "Connection", "Proxy-Connection", "Keep-Alive",
		"Te", "Trailer", "Transfer-Encoding", "Upgrade", "Expect", "Origin", "Referer"} {
		out.Del(k)
	}
	for k := range out {
		if strings.HasPrefix(k, "X-Ccmesh-") && k != "X-Ccmesh-Endpoint" || strings.HasPrefix(k, "Sec-Fetch-") {
			delete(out, k)
		}
	}
	return out
}

// setStream returns body, a JSON object, with its top-level "stream" set
// to stream: the value replaced where the member is (every one, should it
// repeat), or the member added first; every other byte stays as it was.
func setStream(body []byte, stream bool) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	val := strconv.FormatBool(stream)
	type span struct{ start, end int64 }
	var found []span
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if key == "stream" {
			end := dec.InputOffset()
			found = append(found, span{end - int64(len(v)), end})
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if len(found) == 0 {
		open := bytes.IndexByte(body, '{') + 1
		member := `"stream":` + val
		if rest := bytes.TrimSpace(body[open:]); len(rest) > 0 && rest[0] != '}' {
			member += ","
		}
		return slices.Concat(body[:open], []byte(member), body[open:]), nil
	}
	var out []byte
	prev := int64(0)
	for _, s := range found {
		out = append(append(out, body[prev:s.start]...), val...)
		prev = s.end
	}
	return append(out, body[prev:]...), nil
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
	writeJSON(w, http.StatusOK, CurlReply{Command: curlLine(a.ProxyURL(), row, c)})
	return nil
}

// curlLine writes c as a curl command against ccmesh at proxyURL: every
// value single-quoted (shellQuote) but the key, which the shell takes from
// $CCMESH_KEY; the capture's own credentials were never stored.
func curlLine(proxyURL string, row store.RequestLog, c store.Capture) string {
	target := proxyURL + row.Path
	if c.Query != "" {
		target += "?" + c.Query
	}
	parts := []string{"curl -sS"}
	if row.Stream {
		parts[0] += " -N"
	}
	method := c.Method
	if method == "" {
		method = http.MethodPost
	}
	if strings.Trim(method, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != "" {
		method = shellQuote(method) // a method is a token, and tokens may hold $ | & ' `
	}
	parts[0] += " -X " + method + " " + shellQuote(target)
	parts = append(parts, `-H "x-api-key: $CCMESH_KEY"`)
	h := replayHeader(c.RequestHeader)
	h.Del("Accept-Encoding") // curl would print a compressed body as it came
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		for _, v := range h[k] {
			parts = append(parts, "-H "+shellQuote(strings.ToLower(k)+": "+v))
		}
	}
	if len(c.RequestBody) > 0 {
		parts = append(parts, "--data-binary "+shellQuote(string(c.RequestBody)))
	}
	return strings.Join(parts, " \\\n  ")
}
