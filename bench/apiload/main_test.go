package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/ccmesh/ccmesh/app"
)

const token = "apiload-test-token-0123456789"

// TestKindsAgainstTheApp runs every call kind against ccmesh's own
// handler: the queries must be ones the API accepts.
func TestKindsAgainstTheApp(t *testing.T) {
	a, err := app.New(t.Context(), app.Options{DataDir: t.TempDir(), AdminToken: token, Headless: true,
		HomeDir: t.TempDir(), Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = a.Close(ctx)
	})
	srv := httptest.NewServer(a.Handler())
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/endpoints",
		strings.NewReader(`{"name":"alpha","base_url":"http://127.0.0.1:9","protocol":"anthropic","api_key":"k-123456789"}`))
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != http.StatusCreated {
		t.Fatalf("create endpoint: %v %v", res, err)
	}
	res.Body.Close()

	c := &client{base: srv.URL, token: token, http: srv.Client()}
	name, err := c.firstEndpoint()
	if err != nil || name != "alpha" {
		t.Fatalf("firstEndpoint = %q, %v; want alpha", name, err)
	}
	ks := kinds(time.Now(), name)
	for _, r := range run(c, ks, 3) {
		if r.Calls != 3 || r.Errors != 0 || r.Items != 0 || r.P99Us <= 0 || r.Seq == 0 {
			t.Errorf("%s: %d calls, %d errors (%s), %d items, p99 %v µs, seq %d; want 3 calls, no error, 0 items, a p99",
				r.Target, r.Calls, r.Errors, r.ErrorEg, r.Items, r.P99Us, r.Seq)
		}
	}

	bad := &client{base: srv.URL, token: "wrong-token-0123456789", http: srv.Client()}
	for _, r := range run(bad, ks[:1], 2) {
		if r.Errors != 2 || !strings.Contains(r.ErrorEg, "401") || r.P99Us != 0 {
			t.Errorf("with a wrong token: %d errors (%q), p99 %v; want 2 errors, a 401", r.Errors, r.ErrorEg, r.P99Us)
		}
	}
}
