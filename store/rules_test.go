package store

import (
	"errors"
	"slices"
	"testing"
	"time"
)

// An endpoint's tags are stored, read back in order, and checked: 1-32
// characters of A-Z a-z 0-9 . _ -, each once.
func TestEndpointTags(t *testing.T) {
	db := openTestDB(t)
	e := mustCreate(t, db, endpointPatch("alpha"))
	if e.Tags == nil || len(e.Tags) != 0 {
		t.Errorf("a new endpoint's tags = %#v, want []", e.Tags)
	}
	p := EndpointPatch{Tags: ptr([]string{"cheap", "eu-1", "v4.6_x"})}
	if _, err := db.UpdateEndpoint(t.Context(), e.ID, p); err != nil {
		t.Fatalf("UpdateEndpoint: %v", err)
	}
	got, err := db.GetEndpoint(t.Context(), e.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"cheap", "eu-1", "v4.6_x"}; !slices.Equal(got.Tags, want) {
		t.Errorf("tags read back = %v, want %v", got.Tags, want)
	}
	for _, tt := range []struct {
		name  string
		tags  []string
		field string
	}{
		{"empty", []string{""}, "tags[0]"},
		{"space", []string{"ok", "two words"}, "tags[1]"},
		{"colon", []string{"tag:x"}, "tags[0]"},
		{"too long", []string{"a234567890123456789012345678901234"}, "tags[0]"},
		{"twice", []string{"cheap", "eu", "cheap"}, "tags[2]"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := db.UpdateEndpoint(t.Context(), e.ID, EndpointPatch{Tags: ptr(tt.tags)})
			var ve *ValidationError
			if !errors.As(err, &ve) || ve.Code != CodeInvalidTag || ve.Field != tt.field {
				t.Fatalf("tags %q: err = %v, want %s on %s", tt.tags, err, CodeInvalidTag, tt.field)
			}
		})
	}
}

// A row's rule is stored and read back, and its deltas are summed per
// bucket and rule, "" for the requests no rule decided.
func TestLogRuleAndRuleBuckets(t *testing.T) {
	db := openTestDB(t)
	h := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	d := func(req, in int64) UsageDelta {
		return UsageDelta{EndpointID: 1, Endpoint: "a", Model: "m", Counts: Counts{Requests: req, Attempts: 1, Tokens: Tokens{Input: in}}}
	}
	rows := []RequestLog{
		{At: h.Add(time.Second), Status: 200, Rule: "subagents", Deltas: []UsageDelta{d(0, 1), d(1, 10)}},
		{At: h.Add(2 * time.Second), Status: 200, Rule: "subagents", Deltas: []UsageDelta{d(1, 5)}},
		{At: h.Add(3 * time.Second), Status: 200, Deltas: []UsageDelta{d(1, 7)}},
		{At: h.Add(61 * time.Minute), Status: 200, Rule: "long", Deltas: []UsageDelta{d(1, 100)}},
	}
	if err := db.insertLogs(t.Context(), rows, make([][]byte, len(rows)), make([][]byte, len(rows))); err != nil {
		t.Fatal(err)
	}
	items, _, err := db.ListLogs(t.Context(), LogFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var rules []string
	for _, it := range items {
		rules = append(rules, it.Rule)
	}
	if want := []string{"long", "", "subagents", "subagents"}; !slices.Equal(rules, want) {
		t.Errorf("rules of the rows, newest first = %q, want %q", rules, want)
	}
	type sum struct {
		start              time.Time
		rule               string
		req, attempts, inp int64
	}
	for _, tt := range []struct {
		minutes bool
		want    []sum
	}{
		{false, []sum{{h, "", 1, 1, 7}, {h, "subagents", 2, 3, 16}, {h.Add(time.Hour), "long", 1, 1, 100}}},
		{true, []sum{{h, "", 1, 1, 7}, {h, "subagents", 2, 3, 16}, {h.Add(61 * time.Minute), "long", 1, 1, 100}}},
	} {
		bs, err := db.UsageRuleBuckets(t.Context(), h.Add(-time.Hour), h.Add(3*time.Hour), tt.minutes)
		if err != nil {
			t.Fatal(err)
		}
		var got []sum
		for _, b := range bs {
			got = append(got, sum{b.Start, b.Rule, b.Requests, b.Attempts, b.Input})
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("rule buckets (minutes %v) = %v, want %v", tt.minutes, got, tt.want)
		}
	}
}
