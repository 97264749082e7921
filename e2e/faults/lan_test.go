package faults

import (
	"net"
	"net/http"
	"strings"
	"testing"
)

// testLANListener runs ccmesh the way a user shares it on a LAN (`--listen
// 0.0.0.0:PORT` with a client token set; docs/BEHAVIOUR.md#safety): a
// client holding the token is served whatever host name it used, one
// without it is refused by the DNS-rebinding guard, and the token cannot
// be cleared while ccmesh is bound there.
func testLANListener(t *testing.T, bin string) {
	const token = "lan-client-token-0123456789"
	c := startCCMesh(t, bin)
	up := newUpstream(t, "lan", healthy)
	const model = "claude-e2e-lan"
	c.addEndpoint(t, endpointSpec{Name: "lan", BaseURL: up.url, Protocol: "anthropic", APIKey: "sk-ant-lan-secret", Models: []string{model}})
	c.mustAdmin(t, http.MethodPut, "/api/settings", map[string]any{"client_token": token}, nil)
	c.kill(t)
	_, port, _ := net.SplitHostPort(c.addr)
	c.addr = "0.0.0.0:" + port
	c.start(t)

	for _, tc := range []struct {
		name   string
		host   string
		key    string
		status int
	}{
		{"the token, a LAN host name", "my-pc.lan:" + port, token, 200},
		{"the token, the machine's address", "192.168.1.20:" + port, token, 200},
		{"no token, a LAN host name", "my-pc.lan:" + port, "", 403},
		{"a wrong token, a LAN host name", "my-pc.lan:" + port, "not-the-token", 403},
		{"no token, loopback", "127.0.0.1:" + port, "", 401},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := newMessageRequest(t.Context(), "http://127.0.0.1:"+port, model, false)
			if err != nil {
				t.Fatal(err)
			}
			req.Host = tc.host
			req.Header.Del("X-Api-Key")
			if tc.key != "" {
				req.Header.Set("X-Api-Key", tc.key)
			}
			resp, err := c.http.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Errorf("status %d, want %d", resp.StatusCode, tc.status)
			}
		})
	}
	err := c.admin(t.Context(), http.MethodPut, "/api/settings", map[string]any{"client_token": ""}, nil)
	if err == nil || !strings.Contains(err.Error(), "client_token") {
		t.Errorf("clearing the client token while bound to %s: %v, want a refusal naming client_token", c.addr, err)
	}
	var s map[string]any
	c.mustAdmin(t, http.MethodGet, "/api/settings", nil, &s)
	if s["client_token"] != token {
		t.Errorf("client_token after the refused clear = %v, want it kept", s["client_token"])
	}
}
