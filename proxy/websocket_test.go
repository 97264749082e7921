package proxy

import (
	"bufio"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Codex's WebSocket upgrade on /v1/responses is answered at once with 426
// and what to set, on the raw connection a WebSocket client uses; nothing
// reaches an upstream and the request is logged.
func TestWebSocketUpgradeRefused(t *testing.T) {
	up := upstream(t, okClaude())
	e := ep(1, "up", up.URL)
	e.Protocol = ProtocolOpenAIResponses
	h := newHarness(t, Config{Endpoints: []Endpoint{e}})
	conn, err := net.Dial("tcp", strings.TrimPrefix(h.front.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	req := "GET /v1/responses HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: keep-alive, Upgrade\r\n" +
		"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nAuthorization: Bearer k\r\n\r\n"
	if _, err := conn.Write([]byte(req)); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second)) // a hang fails the test instead of the suite
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to the upgrade: %v", err)
	}
	defer resp.Body.Close()
	t.Logf("answered in %s", time.Since(start))
	var body strings.Builder
	_, _ = bufio.NewReader(resp.Body).WriteTo(&body)
	if resp.StatusCode != http.StatusUpgradeRequired || !strings.Contains(body.String(), "supports_websockets = false") {
		t.Errorf("got %d %s", resp.StatusCode, body.String())
	}
	if rec := h.record(); rec.Status != http.StatusUpgradeRequired || rec.Protocol != ProtocolOpenAIResponses {
		t.Errorf("record %d %s", rec.Status, rec.Protocol)
	}
	if up.Count() != 0 {
		t.Errorf("the upstream saw %d requests", up.Count())
	}
}
