// Package capture is what the app does with a captured request
// (docs/BEHAVIOUR.md#capture-and-resend) that needs none of it: the
// proxy's capture handed to the log writer with its secrets masked
// (Source), the capture loaded and checked for showing or sending (Load),
// the headers and body shown, the headers and body sent again, the resend
// itself through the proxy and its wait for the new row (Resend, Wait),
// and the curl command. It reads the store through the port Store; a
// capture it cannot show or send is an apierr.Error, which the app
// answers as it is.
// The app's capture.go serves the routes.
package capture

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/ccmesh/ccmesh/app/clients"
	"github.com/ccmesh/ccmesh/store"
)

// FlatHeader writes h for the UI: lower-case names, values joined.
func FlatHeader(h http.Header) map[string]string {
	out := make(map[string]string, len(h))
	for k, vv := range h {
		out[strings.ToLower(k)] = strings.Join(vv, ", ")
	}
	return out
}

// Text is a captured body as text: bytes that are not UTF-8 (not expected
// of these APIs) become U+FFFD.
func Text(b []byte) string { return strings.ToValidUTF8(string(b), "\uFFFD") }

// Recorder keeps a resent request's status and headers; its body is in
// the new row's capture, if the setting keeps one. Status is 0 until the
// proxy answers.
type Recorder struct {
	Head   http.Header
	Status int
}

// NewRecorder is a Recorder with no headers yet.
func NewRecorder() *Recorder { return &Recorder{Head: http.Header{}} }

func (d *Recorder) Header() http.Header { return d.Head }

func (d *Recorder) WriteHeader(code int) {
	if d.Status == 0 && code >= 200 {
		d.Status = code
	}
}

func (d *Recorder) Write(p []byte) (int, error) {
	d.WriteHeader(http.StatusOK)
	return len(p), nil
}

// ReplayHeader is a captured request's headers as they can be sent again:
// without those of the original connection (hop-by-hop, Host,
// Content-Length), a browser's (Origin, Referer, Sec-Fetch-*: the page it
// came from, which a resend or a curl command does not have), and ccmesh's
// own x-ccmesh-* but the endpoint the client named.
func ReplayHeader(h http.Header) http.Header {
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

// SetStream returns body, a JSON object, with its top-level "stream" set
// to stream: the value replaced where the member is (every one, should it
// repeat), or the member added first; every other byte stays as it was.
func SetStream(body []byte, stream bool) ([]byte, error) {
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

// Curl writes c, the capture of row, as a curl command against ccmesh at
// proxyURL: every value single-quoted (clients.ShellQuote) but the key, which the shell takes from
// $CCMESH_KEY; the capture's own credentials were never stored.
func Curl(proxyURL string, row store.RequestLog, c store.Capture) string {
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
		method = clients.ShellQuote(method) // a method is a token, and tokens may hold $ | & ' `
	}
	parts[0] += " -X " + method + " " + clients.ShellQuote(target)
	parts = append(parts, `-H "x-api-key: $CCMESH_KEY"`)
	h := ReplayHeader(c.RequestHeader)
	h.Del("Accept-Encoding") // curl would print a compressed body as it came
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		for _, v := range h[k] {
			parts = append(parts, "-H "+clients.ShellQuote(strings.ToLower(k)+": "+v))
		}
	}
	if len(c.RequestBody) > 0 {
		parts = append(parts, "--data-binary "+clients.ShellQuote(string(c.RequestBody)))
	}
	return strings.Join(parts, " \\\n  ")
}
