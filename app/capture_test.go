package app

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/ccmesh/ccmesh/proxy/proxytest"
)

// docs/BEHAVIOUR.md#capture-and-resend through the real App: settings,
// the proxy on loopback, the log writer, SQLite, and the admin API.

const (
	capKey   = "sk-ant-capture-endpoint-key-000111"
	capKeyB  = "sk-ant-capture-endpoint-key-bbb222"
	capToken = "client-token-for-captures-42"
)

// captureHarness is an App with endpoints a and b (both anthropic, with
// keys) on fake upstreams, and the capture setting at mode.
func captureHarness(t *testing.T, mode string, settings ...string) (*harness, *proxytest.Upstream, *proxytest.Upstream) {
	t.Helper()
	h := newHarness(t)
	a := proxytest.New(t, proxytest.AnthropicMessage("hello", 12, 34))
	b := proxytest.New(t, proxytest.AnthropicMessage("from b", 5, 6))
	h.mustCreate(fmt.Sprintf(`{"name":"a","base_url":%q,"api_key":%q,"protocol":"anthropic"}`, a.URL, capKey))
	h.mustCreate(fmt.Sprintf(`{"name":"b","base_url":%q,"api_key":%q,"protocol":"anthropic"}`, b.URL, capKeyB))
	doc := `{"capture":"` + mode + `"` + strings.Join(settings, "") + `}`
	if r := h.do("PUT", "/api/settings", doc); r.status != 200 {
		t.Fatalf("settings %s: %d %s", doc, r.status, r.body)
	}
	return h, a, b
}

// send makes one proxy request like a client, waits for its log row and
// returns the row's id and what the client got.
func (h *harness) send(path, body string, hdr ...string) (int64, string) {
	h.t.Helper()
	logged := h.watchLog()
	req, err := http.NewRequest("POST", h.srv.URL+path, strings.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Anthropic-Version", "2023-06-01")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	got, _ := io.ReadAll(res.Body)
	res.Body.Close()
	logged()
	return h.lastLogID(), string(got)
}

func (h *harness) lastLogID() int64 {
	h.t.Helper()
	var page tsLogPage
	h.do("GET", "/api/logs?limit=1", "").decode(h.t, &page)
	if len(page.Items) == 0 {
		h.t.Fatal("no log rows")
	}
	return page.Items[0].ID
}

func (h *harness) capture(id int64) (CaptureReply, resp) {
	h.t.Helper()
	r := h.do("GET", fmt.Sprintf("/api/logs/%d/capture", id), "")
	var c CaptureReply
	if r.status == 200 {
		r.decode(h.t, &c)
	}
	return c, r
}

const capBody = `{"model":"claude-sonnet-4-5","max_tokens":64,"messages":[{"role":"user","content":"hi"}]}`

func TestCaptureOffStoresNothing(t *testing.T) {
	h, _, _ := captureHarness(t, "off")
	id, _ := h.send("/v1/messages", capBody)
	if _, r := h.capture(id); r.status != 404 || r.errCode() != "no_capture" {
		t.Errorf("capture of %d: %d %s, want 404 no_capture", id, r.status, r.body)
	}
	if b, err := h.app.db.CaptureBytes(t.Context()); err != nil || b != 0 {
		t.Errorf("captures hold %d bytes (%v), want 0", b, err)
	}
	if r := h.do("GET", "/api/logs/999/capture", ""); r.status != 404 || r.errCode() != "not_found" {
		t.Errorf("unknown row: %d %s", r.status, r.body)
	}
}

func TestCaptureErrorsOnly(t *testing.T) {
	h, a, b := captureHarness(t, "errors")
	ok, _ := h.send("/v1/messages", capBody)
	if _, r := h.capture(ok); r.status != 404 {
		t.Errorf("a success was captured: %d %s", r.status, r.body)
	}
	fault := proxytest.AnthropicError(400, "invalid_request_error", "messages: bad")
	a.SetDefault(fault)
	b.SetDefault(fault)
	bad, got := h.send("/v1/messages", capBody)
	c, r := h.capture(bad)
	if r.status != 200 {
		t.Fatalf("the failed request's capture: %d %s", r.status, r.body)
	}
	if c.Response.Status != 400 || c.Response.Body != got || c.Request.Body != capBody || c.Request.Truncated || c.Response.Truncated {
		t.Errorf("capture %+v; client got %q", c, got)
	}
	if c.Request.Headers["anthropic-version"] != "2023-06-01" || c.Response.Headers["x-ccmesh-endpoint"] == "" {
		t.Errorf("headers %v / %v", c.Request.Headers, c.Response.Headers)
	}
}

func TestCaptureAllStream(t *testing.T) {
	h, a, _ := captureHarness(t, "all")
	a.SetDefault(proxytest.Response{Events: proxytest.AnthropicStream(12, 34, "hel", "lo")})
	body := strings.Replace(capBody, `"max_tokens"`, `"stream":true,"max_tokens"`, 1)
	id, got := h.send("/v1/messages?beta=true", body)
	c, r := h.capture(id)
	if r.status != 200 {
		t.Fatalf("capture: %d %s", r.status, r.body)
	}
	if !strings.Contains(got, "event: content_block_delta") || c.Response.Body != got {
		t.Errorf("captured %q, the client got %q", c.Response.Body, got)
	}
	if c.Response.Status != 200 || c.Response.Headers["content-type"] != "text/event-stream" || c.Request.Body != body {
		t.Errorf("capture %+v", c)
	}
}

// TestCaptureCaps: a 2 MiB body is cut at 1 MiB and marked; it can be
// neither resent nor copied as a command.
func TestCaptureCaps(t *testing.T) {
	h, _, _ := captureHarness(t, "all")
	big := `{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[{"role":"user","content":"` + strings.Repeat("x", 2<<20) + `"}]}`
	id, _ := h.send("/v1/messages", big)
	c, r := h.capture(id)
	if r.status != 200 || !c.Request.Truncated || len(c.Request.Body) != 1<<20 || c.Request.Body != big[:1<<20] || c.Response.Truncated {
		t.Fatalf("capture: %d, request %d bytes truncated %v", r.status, len(c.Request.Body), c.Request.Truncated)
	}
	if r := h.do("POST", fmt.Sprintf("/api/logs/%d/resend", id), ""); r.status != 409 || r.errCode() != "capture_truncated" {
		t.Errorf("resend: %d %s", r.status, r.body)
	}
	if r := h.do("GET", fmt.Sprintf("/api/logs/%d/curl", id), ""); r.status != 409 || r.errCode() != "capture_truncated" {
		t.Errorf("curl: %d %s", r.status, r.body)
	}
}

// TestCaptureRedacted: the endpoint's key, the client token, the
// client's Authorization and cookies reach no capture: not through the
// API, not in any column, not in any stored blob once decompressed, and
// the secrets that exist nowhere else not in the database files at all.
func TestCaptureRedacted(t *testing.T) {
	const (
		cookie   = "ccmesh_admin=cookie-secret-9f8e7d6c5b"
		proxyAu  = "Basic proxy-auth-secret-1a2b3c4d"
		setCook  = "sid=upstream-set-cookie-secret-77"
		ownWords = "a note about " + capKey + " and " + capToken
	)
	h, a, b := captureHarness(t, "all", `,"client_token":"`+capToken+`"`)
	// The upstream echoes the key in a success (the proxy masks only
	// errors) and sets a cookie the client never sees.
	echo := proxytest.AnthropicMessage("your key is "+capKey, 1, 2).WithHeader("Set-Cookie", setCook).WithHeader("X-Echo", capKey)
	a.SetDefault(echo)
	b.SetDefault(echo)
	body := strings.Replace(capBody, `"hi"`, fmt.Sprintf("%q", ownWords), 1)
	var ids []int64
	id, _ := h.send("/v1/messages", body, "Authorization", "Bearer "+capToken, "X-Api-Key", capToken,
		"Cookie", cookie, "Proxy-Authorization", proxyAu, "X-Note", capToken)
	ids = append(ids, id)
	// And an error the proxy masked, to a client that sent its token as x-api-key only.
	a.Push(proxytest.AnthropicError(401, "authentication_error", "invalid x-api-key "+capKey))
	b.Push(proxytest.AnthropicError(401, "authentication_error", "invalid x-api-key "+capKeyB))
	id, _ = h.send("/v1/messages", body, "X-Api-Key", capToken)
	ids = append(ids, id)

	secrets := []string{capKey, capKeyB, capToken, "cookie-secret-9f8e7d6c5b", "proxy-auth-secret-1a2b3c4d", "upstream-set-cookie-secret-77"}
	for _, id := range ids {
		_, r := h.capture(id)
		if r.status != 200 {
			t.Fatalf("capture %d: %d %s", id, r.status, r.body)
		}
		for _, s := range secrets {
			if bytes.Contains(r.body, []byte(s)) {
				t.Errorf("capture %d shows %q: %s", id, s, r.body)
			}
		}
		for _, hdr := range []string{"authorization", "x-api-key", "cookie", "proxy-authorization", "set-cookie"} {
			if bytes.Contains(bytes.ToLower(r.body), []byte(`"`+hdr+`":`)) {
				t.Errorf("capture %d keeps header %s", id, hdr)
			}
		}
	}

	// Every column of every capture, blobs decompressed.
	dec, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	db, err := sql.Open("sqlite", "file:"+h.app.db.Path()+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.QueryContext(t.Context(), `SELECT log_id, method, query, request_headers,
		request_body, response_headers, response_body FROM captures`)
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for rows.Next() {
		var (
			id                             int64
			method, query, reqHdr, respHdr string
			reqBody, respBody              []byte
		)
		if err := rows.Scan(&id, &method, &query, &reqHdr, &reqBody, &respHdr, &respBody); err != nil {
			t.Fatal(err)
		}
		seen++
		plain := method + query + reqHdr + respHdr
		for _, blob := range [][]byte{reqBody, respBody} {
			if len(blob) == 0 {
				continue
			}
			out, err := dec.DecodeAll(blob, nil)
			if err != nil {
				t.Fatalf("capture %d: a blob that is not zstd: %v", id, err)
			}
			plain += string(out)
		}
		for _, s := range secrets {
			if strings.Contains(plain, s) {
				t.Errorf("capture %d stores %q", id, s)
			}
		}
		if !strings.Contains(plain, "sk-…") {
			t.Errorf("capture %d: no mask where the key was: %s", id, plain)
		}
	}
	rows.Close()
	if seen != len(ids) {
		t.Fatalf("%d captures stored, want %d", seen, len(ids))
	}

	// The database files as bytes. Keys and the client token are stored
	// in the endpoints and settings rows by design (docs/BEHAVIOUR.md#safety),
	// so the raw check is of what only a request carried; and every zstd
	// frame in the files, decompressed, holds no secret at all.
	var raw []byte
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(h.app.db.Path() + suffix)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		raw = append(raw, b...)
	}
	for _, s := range secrets[3:] {
		if bytes.Contains(raw, []byte(s)) {
			t.Errorf("the database files hold %q", s)
		}
	}
	frames := 0
	magic := []byte{0x28, 0xb5, 0x2f, 0xfd}
	for i := bytes.Index(raw, magic); i >= 0; {
		if out, err := frameAt(raw[i:]); err == nil {
			frames++
			for _, s := range secrets {
				if bytes.Contains(out, []byte(s)) {
					t.Errorf("a stored zstd frame holds %q", s)
				}
			}
		}
		next := bytes.Index(raw[i+1:], magic)
		if next < 0 {
			break
		}
		i += 1 + next
	}
	if frames < 2*len(ids) {
		t.Errorf("found %d zstd frames in the files, want at least %d", frames, 2*len(ids))
	}
}

// frameAt decodes the zstd frame at the start of b, ignoring what follows
// it (the rest of the database page).
func frameAt(b []byte) ([]byte, error) {
	d, err := zstd.NewReader(bytes.NewReader(b), zstd.WithDecoderConcurrency(1))
	if err != nil {
		return nil, err
	}
	defer d.Close()
	var out bytes.Buffer
	_, err = io.Copy(&out, d)
	if out.Len() > 0 {
		return out.Bytes(), nil // the frame decoded; what follows did not
	}
	return nil, err
}

// TestResend: a captured request goes through the proxy again, by routing
// or to a named endpoint, as a client would send it but without its
// credentials; the new row says what it resent.
func TestResend(t *testing.T) {
	h, a, b := captureHarness(t, "all", `,"client_token":"`+capToken+`"`)
	id, _ := h.send("/v1/messages?beta=true", capBody, "X-Api-Key", capToken, "X-Custom", "kept")

	var rep ResendReply
	r := h.do("POST", fmt.Sprintf("/api/logs/%d/resend", id), "")
	r.decode(t, &rep)
	if r.status != 200 || rep.Status != 200 || rep.Endpoint != "a" || rep.LogID <= id {
		t.Fatalf("resend: %d %s", r.status, r.body)
	}
	row := h.getRow(rep.LogID)
	if row.ResentFrom != id || row.Endpoint != "a" || row.Explicit {
		t.Errorf("new row %+v, want resent_from %d on a by routing", row, id)
	}
	up := a.Requests()[len(a.Requests())-1]
	if up.Header.Get("X-Api-Key") != capKey || up.Header.Get("Authorization") != "" || up.Header.Get("X-Custom") != "kept" ||
		up.RawQuery != "beta=true" || string(up.Body) != capBody || up.Header.Get("X-Ccmesh-Resent-From") != "" {
		t.Errorf("upstream got %v ?%s %s", up.Header, up.RawQuery, up.Body)
	}

	// To a named endpoint, as a stream.
	b.SetDefault(proxytest.Response{Events: proxytest.AnthropicStream(1, 2, "b")})
	r = h.do("POST", fmt.Sprintf("/api/logs/%d/resend", id), `{"endpoint":"b","stream":true}`)
	r.decode(t, &rep)
	if r.status != 200 || rep.Status != 200 || rep.Endpoint != "b" {
		t.Fatalf("resend to b: %d %s", r.status, r.body)
	}
	row = h.getRow(rep.LogID)
	if row.ResentFrom != id || row.Endpoint != "b" || !row.Explicit || !row.Stream || row.StreamEnd != "complete" {
		t.Errorf("new row %+v", row)
	}
	want := strings.Replace(capBody, `{`, `{"stream":true,`, 1)
	if got := string(b.Requests()[len(b.Requests())-1].Body); got != want {
		t.Errorf("b got %s, want %s", got, want)
	}
	// The resend was captured too, and resends again.
	c, cr := h.capture(rep.LogID)
	if cr.status != 200 || !strings.Contains(c.Response.Body, "event: message_stop") {
		t.Errorf("the resend's capture: %d %s", cr.status, cr.body)
	}

	if r := h.do("POST", fmt.Sprintf("/api/logs/%d/resend", id), `{"endpoint":"nope"}`); r.status != 422 || r.errCode() != "unknown_endpoint" {
		t.Errorf("unknown endpoint: %d %s", r.status, r.body)
	}
	if r := h.do("POST", fmt.Sprintf("/api/logs/%d/resend", id), `{"stream":"yes"}`); r.status != 400 || r.errCode() != "bad_json" {
		t.Errorf("bad stream: %d %s", r.status, r.body)
	}
}

func (h *harness) getRow(id int64) struct {
	ResentFrom int64  `json:"resent_from"`
	Endpoint   string `json:"endpoint"`
	Explicit   bool   `json:"explicit"`
	Stream     bool   `json:"stream"`
	StreamEnd  string `json:"stream_end"`
} {
	h.t.Helper()
	var row struct {
		ResentFrom int64  `json:"resent_from"`
		Endpoint   string `json:"endpoint"`
		Explicit   bool   `json:"explicit"`
		Stream     bool   `json:"stream"`
		StreamEnd  string `json:"stream_end"`
	}
	r := h.do("GET", fmt.Sprintf("/api/logs/%d", id), "")
	if r.status != 200 {
		h.t.Fatalf("row %d: %d %s", id, r.status, r.body)
	}
	r.decode(h.t, &row)
	return row
}

func TestResendWithoutCapture(t *testing.T) {
	h, _, _ := captureHarness(t, "off")
	id, _ := h.send("/v1/messages", capBody)
	r := h.do("POST", fmt.Sprintf("/api/logs/%d/resend", id), `{}`)
	if r.status != 409 || r.errCode() != "no_capture" || !strings.Contains(string(r.body), "capture to errors or all") {
		t.Errorf("resend without capture: %d %s", r.status, r.body)
	}
	if r := h.do("POST", "/api/logs/99999/resend", ``); r.status != 404 {
		t.Errorf("resend of no row: %d %s", r.status, r.body)
	}
}

// TestCurlCommand: the command names ccmesh's URL, the headers and body
// as captured, the key as $CCMESH_KEY, and no secret; a shell reads it
// back into exactly those arguments.
func TestCurlCommand(t *testing.T) {
	h, _, _ := captureHarness(t, "all", `,"client_token":"`+capToken+`"`)
	body := strings.Replace(capBody, `"hi"`, `"it's a \"test\" $HOME `+"`x`"+`"`, 1)
	id, _ := h.send("/v1/messages?beta=true", body, "Authorization", "Bearer "+capToken, "X-Custom", "a'b")
	var cr CurlReply
	r := h.do("GET", fmt.Sprintf("/api/logs/%d/curl", id), "")
	r.decode(t, &cr)
	if r.status != 200 {
		t.Fatalf("curl: %d %s", r.status, r.body)
	}
	cmd := cr.Command
	if strings.Contains(cmd, capToken) || strings.Contains(cmd, capKey) || strings.Contains(strings.ToLower(cmd), "authorization") {
		t.Errorf("the command carries a secret:\n%s", cmd)
	}
	if !strings.Contains(cmd, `-H "x-api-key: $CCMESH_KEY"`) || !strings.HasPrefix(cmd, "curl ") {
		t.Errorf("command:\n%s", cmd)
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatalf("no sh to read the command back: %v", err)
	}
	script := `curl() { for a in "$@"; do printf '%s\0' "$a"; done; }` + "\n" + cmd
	c := exec.CommandContext(t.Context(), sh, "-c", script)
	c.Env = []string{"CCMESH_KEY=the-key", "HOME=/nonexistent"}
	out, err := c.Output()
	if err != nil {
		t.Fatalf("sh: %v", err)
	}
	args := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	want := []string{"-sS", "-X", "POST", "http://127.0.0.1:3457/v1/messages?beta=true", "-H", "x-api-key: the-key",
		"-H", "anthropic-version: 2023-06-01", "-H", "content-type: application/json",
		"-H", "user-agent: Go-http-client/1.1", "-H", "x-custom: a'b", "--data-binary", body}
	if g, w := fmt.Sprintf("%q", args), fmt.Sprintf("%q", want); g != w {
		t.Errorf("the shell reads\n %s\nwant\n %s", g, w)
	}
	var reply map[string]json.RawMessage
	r.decode(t, &reply)
	if len(reply) != 1 {
		t.Errorf("reply %s, want only command", r.body)
	}
}

// TestCaptureSetting: capture is one of off, errors, all.
func TestCaptureSetting(t *testing.T) {
	h := newHarness(t)
	var s Settings
	h.do("GET", "/api/settings", "").decode(t, &s)
	if s.Capture != "off" {
		t.Errorf("default capture %q", s.Capture)
	}
	r := h.do("PUT", "/api/settings", `{"capture":"some"}`)
	var e tsErrorBody
	r.decode(t, &e)
	if r.status != 422 || e.Error.Code != "invalid_setting" || e.Error.Field != "capture" || !strings.Contains(e.Error.Message, "off, errors or all") {
		t.Errorf("bad capture: %d %s", r.status, r.body)
	}
	// An export from before the setting imports as off.
	h.do("PUT", "/api/settings", `{"capture":"all"}`)
	var doc map[string]any
	h.do("GET", "/api/export", "").decode(t, &doc)
	delete(doc["settings"].(map[string]any), "capture")
	old, _ := json.Marshal(doc)
	if r := h.do("POST", "/api/import", string(old)); r.status != 200 {
		t.Fatalf("import: %d %s", r.status, r.body)
	}
	h.do("GET", "/api/settings", "").decode(t, &s)
	if s.Capture != "off" {
		t.Errorf("capture after importing an old export: %q", s.Capture)
	}
}
