package app

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ccmesh/ccmesh/breaker"
)

func TestCreateEndpointDefaultsAndMask(t *testing.T) {
	h := newHarness(t)
	e := h.mustCreate(`{"name":"main","base_url":"https://api.example.com/","protocol":"anthropic","api_key":"` + secretKey + `"}`)
	if !e.Enabled || e.Auth != "auto" || e.Fast || len(e.Models) != 0 {
		t.Errorf("defaults: got enabled=%v auth=%q fast=%v models=%v, want true auto false []", e.Enabled, e.Auth, e.Fast, e.Models)
	}
	if e.BaseURL != "https://api.example.com" {
		t.Errorf("base_url = %q, want trailing slash trimmed", e.BaseURL)
	}
	if want := "sk-…cdef"; e.APIKeyMasked != want || !e.HasKey {
		t.Errorf("mask = %q has_key=%v, want %q true", e.APIKeyMasked, e.HasKey, want)
	}
	second := h.mustCreate(`{"name":"second","base_url":"http://127.0.0.1:9","protocol":"openai-chat"}`)
	if second.SortOrder <= e.SortOrder {
		t.Errorf("sort_order of second = %d, want after %d", second.SortOrder, e.SortOrder)
	}
}

func TestUpdateFastQueueOrder(t *testing.T) {
	h := newHarness(t)
	a := h.mustCreate(`{"name":"a","base_url":"https://a.example","protocol":"anthropic"}`)
	b := h.mustCreate(`{"name":"b","base_url":"https://b.example","protocol":"anthropic","fast":true}`)
	c := h.mustCreate(`{"name":"c","base_url":"https://c.example","protocol":"anthropic"}`)

	r := h.do("PUT", fmt.Sprintf("/api/endpoints/%d", a.ID), `{"enabled":false,"models":["claude-*"]}`)
	var upd EndpointReply
	r.decode(t, &upd)
	if r.status != 200 || upd.Enabled || !slices.Equal(upd.Models, []string{"claude-*"}) || upd.Name != "a" {
		t.Errorf("update: got %d %+v", r.status, upd)
	}

	if r := h.do("PUT", "/api/fast-queue", fmt.Sprintf(`{"ids":[%d,%d]}`, c.ID, b.ID)); r.status != 200 {
		t.Fatalf("fast-queue: %d %s", r.status, r.body)
	}
	if r := h.do("PUT", "/api/order", fmt.Sprintf(`{"ids":[%d,%d,%d]}`, c.ID, a.ID, b.ID)); r.status != 200 {
		t.Fatalf("order: %d %s", r.status, r.body)
	}
	var list []EndpointReply
	h.do("GET", "/api/endpoints", "").decode(t, &list)
	var names, fast []string
	for _, e := range list {
		names = append(names, e.Name)
	}
	slices.SortFunc(list, func(x, y EndpointReply) int { return x.FastSortOrder - y.FastSortOrder })
	for _, e := range list {
		if e.Fast {
			fast = append(fast, e.Name)
		}
	}
	if want := []string{"c", "a", "b"}; !slices.Equal(names, want) {
		t.Errorf("list order = %v, want %v", names, want)
	}
	if want := []string{"c", "b"}; !slices.Equal(fast, want) {
		t.Errorf("fast queue = %v, want %v", fast, want)
	}

	if r := h.do("DELETE", fmt.Sprintf("/api/endpoints/%d", b.ID), ""); r.status != http.StatusNoContent {
		t.Errorf("delete: %d %s", r.status, r.body)
	}
	if r := h.do("GET", fmt.Sprintf("/api/endpoints/%d", b.ID), ""); r.status != 404 {
		t.Errorf("deleted endpoint: got %d, want 404", r.status)
	}
}

// The key must never leave ccmesh through the API or the log.
func TestKeyNeverShown(t *testing.T) {
	h := newHarness(t)
	e := h.mustCreate(`{"name":"k","base_url":"https://a.example","protocol":"anthropic","api_key":"` + secretKey + `"}`)
	h.do("PUT", fmt.Sprintf("/api/endpoints/%d", e.ID), `{"api_key":"`+secretKey+`-2"}`)
	var bodies []string
	for _, p := range []string{"/api/endpoints", fmt.Sprintf("/api/endpoints/%d", e.ID), "/api/health", "/api/export", "/api/settings"} {
		bodies = append(bodies, string(h.do("GET", p, "").body))
	}
	bodies = append(bodies, h.logs.String())
	for i, b := range bodies {
		if strings.Contains(b, "secret-0123") {
			t.Errorf("reply/log %d contains the key: %s", i, b)
		}
	}
	// Asked for explicitly, the export carries it (for a backup).
	if b := h.exportWithKeys(); !strings.Contains(string(b), secretKey+"-2") {
		t.Errorf("the export with keys lacks the key: %s", b)
	}
}

func TestNewKeyResetsBreaker(t *testing.T) {
	h := newHarness(t)
	e := h.mustCreate(`{"name":"a","base_url":"https://a.example","protocol":"anthropic","api_key":"old-key-123456"}`)
	h.do("POST", fmt.Sprintf("/api/endpoints/%d/force-open", e.ID), "")
	if r := h.do("PUT", fmt.Sprintf("/api/endpoints/%d", e.ID), `{"api_key":"new-key-123456"}`); r.status != http.StatusOK {
		t.Fatalf("update: %d %s", r.status, r.body)
	}
	if v := h.app.Breakers().Get(e.ID).View(time.Now()); v.State != breaker.Closed {
		t.Errorf("after a key change: %v, want closed", v.State)
	}
}

// A force-open the database cannot save still takes effect, and the answer
// says both (docs/BEHAVIOUR.md#manual-control); it is saved later.
func TestForceOpenNotSaved(t *testing.T) {
	h := newHarness(t)
	e := h.mustCreate(`{"name":"a","base_url":"https://a.example","protocol":"anthropic"}`)
	restore := failWrites(t, h, "breaker_events")
	r := h.do("POST", fmt.Sprintf("/api/endpoints/%d/force-open", e.ID), "")
	got := r.apiErr(t)
	if r.status != 500 || got.Code != "not_saved" {
		t.Fatalf("force-open with a failing database: %d %s, want 500 not_saved", r.status, r.body)
	}
	for _, want := range []string{"endpoint a's breaker is forced open now", "saving that failed", "database or disk is full"} {
		if !strings.Contains(got.Message, want) {
			t.Errorf("message %q does not say %q", got.Message, want)
		}
	}
	var hs []Health
	h.do("GET", "/api/health", "").decode(t, &hs)
	if len(hs) != 1 || hs[0].Status != "unhealthy" || hs[0].Reason != "manual" {
		t.Errorf("health after the unsaved force-open = %+v, want unhealthy/manual: it took effect", hs)
	}
	restore()
	h = h.restart() // shutdown saves what is queued
	if v := h.app.Breakers().Get(e.ID).View(time.Now()); v.State != breaker.Open || v.Reason != breaker.Manual {
		t.Errorf("after a restart: %v/%v, want open/manual saved at shutdown", v.State, v.Reason)
	}
	evs, _ := h.app.db.ListBreakerEvents(t.Context(), e.ID, 0)
	forced := 0
	for _, ev := range evs {
		if ev.Cause == "force_open" {
			forced++
		}
	}
	if forced != 1 {
		t.Errorf("audit trail = %+v, want one force_open", evs)
	}
}
