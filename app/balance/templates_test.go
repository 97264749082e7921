package balance

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

const testKey = "sk-test-balance-key"

// route is what the fake answers on one path.
type route struct {
	status int
	body   string
}

// fake answers routes by path, and fails the test for a request without
// the key in the expected Authorization form.
func fake(t *testing.T, auth string, routes map[string]route) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if got := r.Header.Get("Authorization"); got != auth {
			t.Errorf("%s: Authorization = %q, want %q", r.URL.Path, got, auth)
		}
		rt, ok := routes[r.URL.Path]
		if !ok {
			http.Error(w, `{"error":{"message":"no route"}}`, http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rt.status)
		_, _ = w.Write([]byte(rt.body))
	}))
	t.Cleanup(srv.Close)
	return srv
}

type want struct {
	remaining, used, total *float64
	unit                   Unit
	unlimited              bool
	resetAt                time.Time
	template               string
	err                    string // a part of the error; "" for a known reading
	status                 int
}

func f(v float64) *float64 { return &v }

var bearer = "Bearer " + testKey

// Every template against the shape its source documents, and the error
// shapes the providers send.
func TestTemplates(t *testing.T) {
	reset := time.UnixMilli(1779792169974).UTC()
	cases := []struct {
		name     string
		template string
		base     string // the base URL's path (and for the unit, nothing else matters: loopback is no .cn)
		auth     string
		routes   map[string]route
		want     want
	}{
		{"new-api", "newapi", "/v1", bearer, map[string]route{"/api/usage/token/": {200,
			`{"code":true,"message":"ok","data":{"object":"token_usage","name":"k","total_granted":1500000,"total_used":500000,"total_available":1000000,"unlimited_quota":false,"model_limits":{},"model_limits_enabled":false,"expires_at":0}}`}},
			want{remaining: f(2), used: f(1), total: f(3), unit: USD, template: "newapi"}},
		{"new-api unlimited", "newapi", "", bearer, map[string]route{"/api/usage/token/": {200,
			`{"code":true,"data":{"total_granted":0,"total_used":250000,"total_available":-250000,"unlimited_quota":true,"expires_at":0}}`}},
			want{used: f(0.5), unit: USD, unlimited: true, template: "newapi"}},
		{"new-api spent", "newapi", "", bearer, map[string]route{"/api/usage/token/": {200,
			`{"code":true,"data":{"total_granted":500000,"total_used":500000,"total_available":0,"unlimited_quota":false,"expires_at":0}}`}},
			want{remaining: f(0), used: f(1), total: f(1), unit: USD, template: "newapi"}},
		{"new-api bad key", "newapi", "", bearer, map[string]route{"/api/usage/token/": {401,
			`{"success":false,"message":"Invalid Bearer token"}`}},
			want{err: "401: Invalid Bearer token", status: 401}},
		{"new-api 200 without data", "newapi", "", bearer, map[string]route{"/api/usage/token/": {200, `{"code":true}`}},
			want{err: "data.total_available: missing"}},
		{"legacy billing", "openai_billing", "/v1", bearer, map[string]route{
			"/v1/dashboard/billing/subscription": {200, `{"object":"billing_subscription","has_payment_method":true,"soft_limit_usd":5,"hard_limit_usd":5,"system_hard_limit_usd":5,"access_until":0}`},
			"/v1/dashboard/billing/usage":        {200, `{"object":"list","total_usage":139.4104}`}},
			want{remaining: f(3.605896), used: f(1.394104), total: f(5), unit: USD, template: "openai_billing"}},
		{"legacy billing without usage", "openai_billing", "", bearer, map[string]route{
			"/v1/dashboard/billing/subscription": {200, `{"hard_limit_usd":5}`}},
			want{err: "usage: 404", status: 404}},
		{"relay answers new-api", "relay", "/v1", bearer, map[string]route{"/api/usage/token/": {200,
			`{"code":true,"data":{"total_granted":500000,"total_used":0,"total_available":500000,"unlimited_quota":false}}`}},
			want{remaining: f(1), used: f(0), total: f(1), unit: USD, template: "newapi"}},
		{"relay falls back to legacy billing", "relay", "/v1", bearer, map[string]route{
			"/v1/dashboard/billing/subscription": {200, `{"hard_limit_usd":10}`},
			"/v1/dashboard/billing/usage":        {200, `{"total_usage":1000}`}},
			want{remaining: f(0), used: f(10), total: f(10), unit: USD, template: "openai_billing"}},
		{"relay answers neither", "relay", "", bearer, map[string]route{},
			want{err: "new-api: 404: no route; legacy billing: subscription: 404: no route", status: 404}},
		{"sub2api quota", "sub2api", "", bearer, map[string]route{"/v1/usage": {200,
			`{"mode":"quota_limited","isValid":true,"status":"active","quota":{"limit":10.0,"used":3.5,"remaining":6.5,"unit":"USD"},"remaining":6.5,"unit":"USD","rate_limits":[{"window":"5h","limit":5,"used":1.2,"remaining":3.8,"reset_at":"2026-05-06T15:00:00Z"}]}`}},
			want{remaining: f(6.5), used: f(3.5), total: f(10), unit: USD, template: "sub2api"}},
		{"sub2api window spent", "sub2api", "", bearer, map[string]route{"/v1/usage": {200,
			`{"mode":"quota_limited","isValid":true,"remaining":0,"unit":"USD","rate_limits":[{"window":"5h","limit":5,"used":5,"remaining":0,"reset_at":"2026-05-06T15:00:00+08:00"},{"window":"1d","limit":20,"used":5,"remaining":15,"reset_at":"2026-05-07T00:00:00Z"}]}`}},
			want{remaining: f(0), unit: USD, resetAt: time.Date(2026, 5, 6, 7, 0, 0, 0, time.UTC), template: "sub2api"}},
		{"sub2api subscription", "sub2api", "", bearer, map[string]route{"/v1/usage": {200,
			`{"mode":"unrestricted","isValid":true,"planName":"Pro Plan","unit":"USD","remaining":15.5,"subscription":{"daily_usage_usd":2.5}}`}},
			want{remaining: f(15.5), unit: USD, template: "sub2api"}},
		{"sub2api invalid key", "sub2api", "", bearer, map[string]route{"/v1/usage": {200, `{"isValid":false}`}},
			want{err: "isValid is false", status: 200}},
		{"openrouter", "openrouter", "/api", bearer, map[string]route{"/api/v1/key": {200,
			`{"data":{"label":"sk-or-v1-116...0ce","limit":5,"usage":0.1015644762,"is_provisioning_key":false,"limit_remaining":4.8984355238,"is_free_tier":false}}`}},
			want{remaining: f(4.898436), used: f(0.101564), total: f(5), unit: USD, template: "openrouter"}},
		{"openrouter no limit", "openrouter", "/api", bearer, map[string]route{"/api/v1/key": {200,
			`{"data":{"label":"k","limit":null,"usage":25.5,"limit_remaining":null}}`}},
			want{used: f(25.5), unit: USD, unlimited: true, template: "openrouter"}},
		{"openrouter unauthorised", "openrouter", "/api", bearer, map[string]route{"/api/v1/key": {401,
			`{"error":{"code":401,"message":"No auth credentials found"}}`}},
			want{err: "401: No auth credentials found", status: 401}},
		{"deepseek", "deepseek", "/anthropic", bearer, map[string]route{"/user/balance": {200,
			`{"is_available":true,"balance_infos":[{"currency":"CNY","total_balance":"110.00","granted_balance":"10.00","topped_up_balance":"100.00"}]}`}},
			want{remaining: f(110), unit: CNY, template: "deepseek"}},
		{"deepseek unavailable", "deepseek", "/anthropic", bearer, map[string]route{"/user/balance": {200,
			`{"is_available":false,"balance_infos":[{"currency":"USD","total_balance":"0.50","granted_balance":"0.50","topped_up_balance":"0.00"}]}`}},
			want{remaining: f(0), unit: USD, template: "deepseek"}},
		{"deepseek not a number", "deepseek", "", bearer, map[string]route{"/user/balance": {200,
			`{"is_available":true,"balance_infos":[{"currency":"CNY","total_balance":"n/a"}]}`}},
			want{err: `balance_infos[0].total_balance: "n/a" is not a number`}},
		{"deepseek empty", "deepseek", "", bearer, map[string]route{"/user/balance": {200, `{"is_available":false,"balance_infos":[]}`}},
			want{err: "balance_infos: missing or empty", status: 200}},
		{"moonshot", "moonshot", "/anthropic", bearer, map[string]route{"/v1/users/me/balance": {200,
			`{"code":0,"data":{"available_balance":49.58894,"voucher_balance":46.58893,"cash_balance":3.00001},"scode":"0x0","status":true}`}},
			want{remaining: f(49.58894), unit: USD, template: "moonshot"}},
		{"moonshot bad key", "moonshot", "/anthropic", bearer, map[string]route{"/v1/users/me/balance": {401,
			`{"error":{"message":"Invalid Authentication","type":"invalid_authentication_error"}}`}},
			want{err: "401: Invalid Authentication", status: 401}},
		{"siliconflow", "siliconflow", "", bearer, map[string]route{"/v1/user/info": {200,
			`{"code":20000,"message":"OK","status":true,"data":{"id":"u","balance":"0.88","chargeBalance":"88.00","totalBalance":"88.88"}}`}},
			want{remaining: f(88.88), unit: USD, template: "siliconflow"}},
		{"siliconflow refused", "siliconflow", "", bearer, map[string]route{"/v1/user/info": {200,
			`{"code":30001,"message":"api key invalid","status":false,"data":null}`}},
			want{err: "api key invalid", status: 200}},
		{"zhipu", "zhipu", "/api/anthropic", testKey, map[string]route{"/api/monitor/usage/quota/limit": {200,
			`{"code":200,"msg":"Operation successful","data":{"limits":[{"type":"TOKENS_LIMIT","unit":3,"number":5,"percentage":12},{"type":"TOKENS_LIMIT","unit":6,"number":1,"percentage":40,"nextResetTime":1779792169974},{"type":"TIME_LIMIT","unit":5,"number":1,"usage":1000,"currentValue":0,"remaining":1000,"percentage":0,"nextResetTime":1779964969979}],"level":"pro"},"success":true}`}},
			want{remaining: f(60), used: f(40), total: f(100), unit: Percent, resetAt: reset, template: "zhipu"}},
		{"zhipu spent", "zhipu", "/api/anthropic", testKey, map[string]route{"/api/monitor/usage/quota/limit": {200,
			`{"code":200,"data":{"limits":[{"type":"TOKENS_LIMIT","percentage":100,"nextResetTime":1779792169974}]},"success":true}`}},
			want{remaining: f(0), used: f(100), total: f(100), unit: Percent, resetAt: reset, template: "zhipu"}},
		{"zhipu refused", "zhipu", "/api/anthropic", testKey, map[string]route{"/api/monitor/usage/quota/limit": {200,
			`{"code":1001,"msg":"token expired","success":false}`}},
			want{err: "token expired", status: 200}},
		{"stepfun", "stepfun", "/v1", bearer, map[string]route{"/v1/accounts": {200,
			`{"object":"account","type":"prepaid","balance":26.00,"total_cash_balance":0.00,"total_voucher_balance":26.00}`}},
			want{remaining: f(26), unit: USD, template: "stepfun"}},
		{"novita", "novita", "/openai", bearer, map[string]route{"/openapi/v1/billing/balance/detail": {200,
			`{"availableBalance":"1000000","cashBalance":"800000","creditLimit":"200000","pendingCharges":"0","outstandingInvoices":"0"}`}},
			want{remaining: f(100), unit: USD, template: "novita"}},
		{"not JSON", "novita", "", bearer, map[string]route{"/openapi/v1/billing/balance/detail": {200, `<html>login</html>`}},
			want{err: "not JSON", status: 200}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := fake(t, c.auth, c.routes)
			r := Reader{}.Read(context.Background(), Connector{Template: c.template}, Target{BaseURL: srv.URL + c.base, APIKey: testKey})
			check(t, r, c.want)
		})
	}
}

func check(t *testing.T, r Reading, w want) {
	t.Helper()
	if w.err != "" {
		if !strings.Contains(r.Error, w.err) || r.Known() || r.Remaining != nil {
			t.Errorf("reading = %s, want unknown with error containing %q", show(r), w.err)
		}
		if r.Status != w.status {
			t.Errorf("status = %d, want %d", r.Status, w.status)
		}
		if strings.Contains(r.Error, testKey) {
			t.Errorf("error %q holds the key", r.Error)
		}
		return
	}
	if r.Error != "" {
		t.Fatalf("error %q, want a reading", r.Error)
	}
	for _, n := range []struct {
		name      string
		got, want *float64
	}{{"remaining", r.Remaining, w.remaining}, {"used", r.Used, w.used}, {"total", r.Total, w.total}} {
		switch {
		case n.got == nil && n.want == nil:
		case n.got == nil || n.want == nil || *n.got != *n.want:
			t.Errorf("%s = %s, want %s", n.name, fmtp(n.got), fmtp(n.want))
		}
	}
	if r.Unit != w.unit || r.Unlimited != w.unlimited || !r.ResetAt.Equal(w.resetAt) || r.Template != w.template {
		t.Errorf("reading = %s, want unit %s unlimited %v reset %v template %s", show(r), w.unit, w.unlimited, w.resetAt, w.template)
	}
}
