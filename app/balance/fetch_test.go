package balance

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A custom connector: placeholders filled, values found at their paths,
// the unit read or given, the multiplier applied; a missing path or a
// wrong type is unknown and names the path.
func TestCustomConnector(t *testing.T) {
	cases := []struct {
		name string
		c    Connector
		body string
		want want
	}{
		{"remaining and unit paths", Connector{URL: "{{base_url}}/balance", Headers: map[string]string{"Authorization": "Bearer {{key}}"},
			Paths: Paths{Remaining: "data.left", Unit: "data.currency"}},
			`{"data":{"left":"12.5","currency":"cny"}}`, want{remaining: f(12.5), unit: CNY}},
		{"used and total with a multiplier", Connector{URL: "{{origin}}/q", Headers: map[string]string{"X-Key": "{{key}}"},
			Paths: Paths{Used: "u", Total: "t"}, Unit: USD, Multiplier: 0.000002},
			`{"u":250000,"t":1000000}`, want{remaining: f(1.5), used: f(0.5), total: f(2), unit: USD}},
		{"tokens with an array index", Connector{URL: "{{origin}}/q", Headers: map[string]string{"X-Key": "{{key}}"},
			Paths: Paths{Remaining: "plans[1].left", ResetAt: "plans.1.reset"}, Unit: Tokens},
			`{"plans":[{"left":1},{"left":0,"reset":"2026-12-02T00:00:00Z"}]}`,
			want{remaining: f(0), unit: Tokens, resetAt: time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)}},
		{"percent with a reset in seconds", Connector{Method: "POST", URL: "{{origin}}/q", Body: `{"key":"{{key}}"}`,
			Paths: Paths{Used: "pct", Total: "all", ResetAt: "reset"}, Unit: Percent},
			`{"pct":100,"all":100,"reset":1796000000}`,
			want{remaining: f(0), used: f(100), total: f(100), unit: Percent, resetAt: time.Unix(1796000000, 0).UTC()}},
		{"missing path", Connector{URL: "{{origin}}/q", Headers: map[string]string{"X-Key": "{{key}}"}, Paths: Paths{Remaining: "data.left"}, Unit: USD},
			`{"data":{}}`, want{err: "data.left: missing in the answer"}},
		{"not a number", Connector{URL: "{{origin}}/q", Headers: map[string]string{"X-Key": "{{key}}"}, Paths: Paths{Remaining: "left"}, Unit: USD},
			`{"left":true}`, want{err: "left: true is not a number"}},
		{"not a unit", Connector{URL: "{{origin}}/q", Headers: map[string]string{"X-Key": "{{key}}"}, Paths: Paths{Remaining: "left", Unit: "cur"}},
			`{"left":1,"cur":"EUR"}`, want{err: `cur: EUR is not a unit`}},
		{"null is missing, not 0", Connector{URL: "{{origin}}/q", Headers: map[string]string{"X-Key": "{{key}}"}, Paths: Paths{Remaining: "left"}, Unit: USD},
			`{"left":null}`, want{err: "left: missing"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var sawKey atomic.Bool
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				if strings.Contains(r.Header.Get("Authorization")+r.Header.Get("X-Key")+string(b), testKey) {
					sawKey.Store(true)
				}
				if c.c.Method != "" && r.Method != c.c.Method {
					t.Errorf("method %s, want %s", r.Method, c.c.Method)
				}
				_, _ = w.Write([]byte(c.body))
			}))
			defer srv.Close()
			r := Reader{}.Read(context.Background(), c.c, Target{BaseURL: srv.URL + "/v1", APIKey: testKey})
			check(t, r, c.want)
			if !sawKey.Load() {
				t.Error("the key did not reach the connector's header or body")
			}
		})
	}
}

// The key goes to the endpoint's own origin only (unless confirmed), no
// redirect is followed, the answer is capped, and a read has 5 s.
func TestReadLimits(t *testing.T) {
	var otherHits atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		otherHits.Add(1)
		if strings.Contains(r.Header.Get("Authorization"), testKey) {
			t.Errorf("the key reached the other host on %s", r.URL.Path)
		}
		_, _ = w.Write([]byte(`{"balance":5}`))
	}))
	defer other.Close()
	own := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/accounts":
			http.Redirect(w, r, other.URL+"/v1/accounts", http.StatusFound)
		case "/openapi/v1/billing/balance/detail":
			_, _ = w.Write([]byte(`{"availableBalance":"` + strings.Repeat("1", MaxBytes) + `"}`))
		}
	}))
	defer own.Close()
	target := Target{BaseURL: own.URL + "/v1", APIKey: testKey}
	t.Run("other host refused", func(t *testing.T) {
		c := Connector{URL: other.URL + "/balance", Headers: map[string]string{"Authorization": "Bearer {{key}}"}, Paths: Paths{Remaining: "balance"}, Unit: USD}
		r := Reader{}.Read(context.Background(), c, target)
		check(t, r, want{err: "refused to send the key"})
		if otherHits.Load() != 0 {
			t.Errorf("the other host got %d requests", otherHits.Load())
		}
	})
	t.Run("other host confirmed", func(t *testing.T) {
		c := Connector{URL: other.URL + "/balance", Headers: map[string]string{"X-Other": "no key"}, Paths: Paths{Remaining: "balance"}, Unit: USD, OtherHost: true}
		check(t, Reader{}.Read(context.Background(), c, target), want{remaining: f(5), unit: USD})
	})
	t.Run("redirect not followed", func(t *testing.T) {
		before := otherHits.Load()
		check(t, Reader{}.Read(context.Background(), Connector{Template: "stepfun"}, target), want{err: "302: a redirect, not followed", status: 302})
		if otherHits.Load() != before {
			t.Error("the redirect was followed")
		}
	})
	t.Run("64 KiB cap", func(t *testing.T) {
		check(t, Reader{}.Read(context.Background(), Connector{Template: "novita"}, target), want{err: "over 64 KiB", status: 200})
	})
	t.Run("5 s timeout", func(t *testing.T) {
		var left time.Duration
		rt := roundTrip(func(r *http.Request) (*http.Response, error) {
			d, ok := r.Context().Deadline()
			if !ok {
				t.Error("no deadline on the balance request")
			}
			left = time.Until(d)
			return nil, context.DeadlineExceeded
		})
		r := Reader{Transport: rt}.Read(context.Background(), Connector{Template: "stepfun"}, target)
		if left <= Timeout-time.Second || left > Timeout {
			t.Errorf("deadline in %v, want about %v", left, Timeout)
		}
		check(t, r, want{err: "no answer within 5s"})
	})
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Check accepts what can be read and refuses, naming the field, what
// cannot: an unknown template, a custom one without paths or unit, the key
// in a URL, another host without the user's yes.
func TestCheck(t *testing.T) {
	base := "https://relay.example/v1"
	ok := Paths{Remaining: "left"}
	cases := []struct {
		name  string
		c     Connector
		field string
	}{
		{"none", Connector{}, ""},
		{"template", Connector{Template: "deepseek"}, ""},
		{"threshold only", Connector{Template: "relay", LowThreshold: f(5)}, ""},
		{"unknown template", Connector{Template: "nope"}, "balance.template"},
		{"template with a url", Connector{Template: "relay", URL: base}, "balance.template"},
		{"custom on the origin", Connector{URL: "{{origin}}/b", Paths: ok, Unit: USD}, ""},
		{"custom with base_url", Connector{URL: "{{base_url}}/b", Paths: ok, Unit: CNY}, ""},
		{"no paths", Connector{URL: "{{origin}}/b", Unit: USD}, "balance.paths"},
		{"used without total", Connector{URL: "{{origin}}/b", Paths: Paths{Used: "u"}, Unit: USD}, "balance.paths"},
		{"no unit", Connector{URL: "{{origin}}/b", Paths: ok}, "balance.unit"},
		{"bad unit", Connector{URL: "{{origin}}/b", Paths: ok, Unit: "EUR"}, "balance.unit"},
		{"bad method", Connector{URL: "{{origin}}/b", Paths: ok, Unit: USD, Method: "DELETE"}, "balance.method"},
		{"key in url", Connector{URL: "{{origin}}/b?k={{key}}", Paths: ok, Unit: USD}, "balance.url"},
		{"not a url", Connector{URL: "ftp://x", Paths: ok, Unit: USD}, "balance.url"},
		{"paths without url", Connector{Paths: ok}, "balance.url"},
		{"other host", Connector{URL: "https://billing.example/b", Paths: ok, Unit: USD}, "balance.other_host"},
		{"other host confirmed", Connector{URL: "https://billing.example/b", Paths: ok, Unit: USD, OtherHost: true}, ""},
		{"other port is another host", Connector{URL: "https://relay.example:8443/b", Paths: ok, Unit: USD}, "balance.other_host"},
		{"negative threshold", Connector{Template: "relay", LowThreshold: f(-1)}, "balance.low_threshold"},
		{"negative multiplier", Connector{URL: "{{origin}}/b", Paths: ok, Unit: USD, Multiplier: -1}, "balance.multiplier"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got, msg := c.c.Check(base); got != c.field {
				t.Errorf("Check = %q (%s), want %q", got, msg, c.field)
			}
		})
	}
}

// What a reading means for routing: nothing left is exhausted (a
// percentage only with a reset still ahead), unknown never is, and the
// low threshold compares known readings only.
func TestReadingMeaning(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name                 string
		r                    Reading
		exhausted, hasCredit bool
		belowFive            bool
	}{
		{"credit", Reading{Remaining: f(10), Unit: USD}, false, true, false},
		{"low credit", Reading{Remaining: f(2), Unit: USD}, false, true, true},
		{"zero", Reading{Remaining: f(0), Unit: USD}, true, false, true},
		{"negative", Reading{Remaining: f(-3), Unit: CNY}, true, false, true},
		{"unknown", Reading{Error: "500: boom"}, false, false, false},
		{"unlimited", Reading{Unlimited: true, Unit: USD}, false, true, false},
		{"percent spent until a reset", Reading{Remaining: f(0), Unit: Percent, ResetAt: now.Add(time.Hour)}, true, false, true},
		{"percent spent, no reset", Reading{Remaining: f(0), Unit: Percent}, false, false, true},
		{"reset already passed", Reading{Remaining: f(0), Unit: Tokens, ResetAt: now.Add(-time.Minute)}, false, false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.r.Exhausted(now); got != c.exhausted {
				t.Errorf("Exhausted = %v, want %v", got, c.exhausted)
			}
			if got := c.r.HasCredit(); got != c.hasCredit {
				t.Errorf("HasCredit = %v, want %v", got, c.hasCredit)
			}
			if got := c.r.Below(f(5)); got != c.belowFive {
				t.Errorf("Below(5) = %v, want %v", got, c.belowFive)
			}
			if c.r.Below(nil) {
				t.Error("Below(nil) = true")
			}
		})
	}
}

// Paths and values as answers spell them.
func TestPaths(t *testing.T) {
	doc := map[string]any{"a": map[string]any{"b": []any{map[string]any{"c": "1.5"}, 7.0}}}
	cases := []struct {
		path string
		want float64
		err  string
	}{
		{"a.b[0].c", 1.5, ""},
		{"a.b.0.c", 1.5, ""},
		{"a.b[1]", 7, ""},
		{"a.b[2]", 0, "a.b[2]: missing"},
		{"a.x", 0, "a.x: missing"},
		{"a", 0, "is not a number"},
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) {
			got, err := number(doc, c.path)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Errorf("number = %v, %v; want error %q", got, err, c.err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Errorf("number = %v, %v; want %v", got, err, c.want)
			}
		})
	}
	times := []struct {
		in   any
		want time.Time
	}{
		{1779792169974.0, time.UnixMilli(1779792169974).UTC()},
		{"1779792169", time.Unix(1779792169, 0).UTC()},
		{"2026-05-06T15:00:00+08:00", time.Date(2026, 5, 6, 7, 0, 0, 0, time.UTC)},
		{0.0, time.Time{}},
	}
	for _, c := range times {
		if got, err := timeOf(c.in); err != nil || !got.Equal(c.want) {
			t.Errorf("timeOf(%v) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	if _, err := timeOf("tomorrow"); err == nil {
		t.Error(`timeOf("tomorrow") gave no error`)
	}
}
