package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestNewProxy(t *testing.T) {
	tests := []struct {
		name     string
		upstream string
		wantErr  bool
	}{
		{"ok", "http://127.0.0.1:1", false},
		{"no scheme", "127.0.0.1:1", true},
		{"empty", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := newProxy(tt.upstream)
			if (err != nil) != tt.wantErr {
				t.Errorf("newProxy(%q) error = %v, want error %v", tt.upstream, err, tt.wantErr)
			}
		})
	}
}

// TestForwards: path, query, body and the upstream's Host reach the
// upstream, and its answer comes back unchanged.
func TestForwards(t *testing.T) {
	var gotPath, gotHost, gotBody string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		gotPath, gotHost, gotBody = r.URL.RequestURI(), r.Host, string(b)
		_, _ = io.WriteString(w, "answer")
	}))
	defer up.Close()
	rp, err := newProxy(up.URL)
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	rp.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "http://front.example/v1/messages?beta=true", strings.NewReader("question")))
	if rec.Code != 200 || rec.Body.String() != "answer" {
		t.Errorf("answer = %d %q, want 200 %q", rec.Code, rec.Body.String(), "answer")
	}
	wantHost := strings.TrimPrefix(up.URL, "http://")
	if gotPath != "/v1/messages?beta=true" || gotHost != wantHost || gotBody != "question" {
		t.Errorf("upstream got %q host %q body %q, want /v1/messages?beta=true host %q body question", gotPath, gotHost, gotBody, wantHost)
	}
}
