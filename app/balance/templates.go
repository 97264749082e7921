package balance

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Template is a built-in connector: the documented balance route of a
// provider or relay, on the endpoint's own origin, with the endpoint's key.
type Template struct {
	Name  string `json:"name"`
	Title string `json:"title"`
	// Source is the documentation of the shape the template reads.
	Source string `json:"source"`
	read   func(ctx context.Context, rd Reader, t Target) Reading
}

// newAPIQuotaPerUSD is new-api's and one-api's quota unit: 500 000 = $1.
const newAPIQuotaPerUSD = 500_000

// templates are the built-in connectors, in the order the UI lists them.
// MiniMax is not among them: its documentation names a route on another
// host than its API's and does not give the answer's shape.
var templates = []Template{
	{Name: "relay", Title: "Relay (new-api, then legacy billing)",
		Source: "tries new-api's token usage, then the OpenAI legacy billing routes (see those two)",
		read:   readRelay},
	{Name: "newapi", Title: "new-api / one-api token usage",
		Source: "https://github.com/QuantumNous/new-api — GET /api/usage/token/ (data.total_granted, total_used, total_available, unlimited_quota, expires_at; 500 000 quota = $1)",
		read:   readNewAPI},
	{Name: "openai_billing", Title: "OpenAI legacy billing (one-api, new-api, relays)",
		Source: "https://github.com/songquanpeng/one-api — GET /v1/dashboard/billing/subscription (hard_limit_usd) and /v1/dashboard/billing/usage (total_usage in cents); https://doc.allall.ai/api-386878071",
		read:   readLegacyBilling},
	{Name: "sub2api", Title: "sub2api key usage",
		Source: "https://docs.tokenfor.me/en/api-integration/balance.html — GET /v1/usage (isValid, mode, remaining, unit, quota.limit/used, rate_limits[].reset_at)",
		read:   readSub2API},
	{Name: "openrouter", Title: "OpenRouter key",
		Source: "https://openrouter.ai/docs/api/api-reference/api-keys/get-current-key — GET /api/v1/key (data.limit, usage, limit_remaining; limit null = no limit)",
		read:   readOpenRouter},
	{Name: "deepseek", Title: "DeepSeek balance",
		Source: "https://api-docs.deepseek.com/zh-cn/api/get-user-balance.md — GET /user/balance (is_available, balance_infos[].currency, total_balance as strings)",
		read:   readDeepSeek},
	{Name: "moonshot", Title: "Moonshot / Kimi balance",
		Source: "https://platform.moonshot.cn/docs/api/balance — GET /v1/users/me/balance (data.available_balance; CNY on moonshot.cn, USD on moonshot.ai)",
		read:   readMoonshot},
	{Name: "siliconflow", Title: "SiliconFlow balance",
		Source: "https://raw.githubusercontent.com/steipete/CodexBar/main/docs/siliconflow.md — GET /v1/user/info (data.totalBalance as a string; USD on siliconflow.com, CNY on siliconflow.cn)",
		read:   readSiliconFlow},
	{Name: "zhipu", Title: "Zhipu / Z.ai plan quota",
		Source: "https://docs.rs/ai-usagebar/latest/ai_usagebar/zai/types/index.html — GET /api/monitor/usage/quota/limit with the raw key (data.limits[].percentage, nextResetTime in ms)",
		read:   readZhipu},
	{Name: "stepfun", Title: "StepFun account",
		Source: "https://platform.stepfun.com/docs/zh/api-reference/accounts/get.md, https://platform.stepfun.ai/docs/en/api-reference/accounts/get — GET /v1/accounts (balance; no currency given: CNY on stepfun.com, USD on stepfun.ai)",
		read:   readStepFun},
	{Name: "novita", Title: "Novita balance",
		Source: "https://novita.ai/docs/api-reference/basic-get-user-balance — GET /openapi/v1/billing/balance/detail (availableBalance as a string, 1/10000 USD)",
		read:   readNovita},
}

// Templates lists the built-in connectors.
func Templates() []Template { return slices.Clone(templates) }

// Names are the templates' names.
func Names() []string {
	out := make([]string, len(templates))
	for i, t := range templates {
		out[i] = t.Name
	}
	return out
}

// Lookup finds a template by name.
func Lookup(name string) (Template, bool) {
	for _, t := range templates {
		if t.Name == name {
			return t, true
		}
	}
	return Template{}, false
}

// get is a GET of path on the target's origin with the key as a Bearer
// token (raw: the key alone, as Zhipu's monitor route takes it).
func get(t Target, path string, raw bool) call {
	h := http.Header{}
	if raw {
		h.Set("Authorization", t.APIKey)
	} else {
		h.Set("Authorization", "Bearer "+t.APIKey)
	}
	return call{method: http.MethodGet, url: t.origin() + path, header: h}
}

// refused is the reading of a 2xx answer whose own flag says it failed
// (new-api's success, SiliconFlow's status, Zhipu's success): the
// message it gives, or the flag's path.
func refused(now time.Time, status int, doc any, flag string) (Reading, bool) {
	if ok, found := boolAt(doc, flag); found && !ok {
		msg := stringAt(doc, "message")
		if msg == "" {
			msg = stringAt(doc, "msg")
		}
		if msg == "" {
			msg = flag + " is false"
		}
		return failed(now, status, "%s", clip(msg)), true
	}
	return Reading{}, false
}

func readNewAPI(ctx context.Context, rd Reader, t Target) Reading {
	now := rd.now()
	a, err := rd.do(ctx, t, get(t, "/api/usage/token/", false))
	if err != nil {
		return failedCall(now, err)
	}
	if r, bad := refused(now, a.status, a.doc, "success"); bad {
		return r
	}
	if r, bad := refused(now, a.status, a.doc, "code"); bad {
		return r
	}
	unlimited, _ := boolAt(a.doc, "data.unlimited_quota")
	if unlimited {
		r := fromPaths(now, a.doc, Paths{Used: "data.total_used"}, USD, 1.0/newAPIQuotaPerUSD)
		r.Unlimited = true
		return r
	}
	return fromPaths(now, a.doc, Paths{Remaining: "data.total_available", Used: "data.total_used", Total: "data.total_granted"},
		USD, 1.0/newAPIQuotaPerUSD)
}

func readLegacyBilling(ctx context.Context, rd Reader, t Target) Reading {
	now := rd.now()
	sub, err := rd.do(ctx, t, get(t, "/v1/dashboard/billing/subscription", false))
	if err != nil {
		return failedCall(now, fmt.Errorf("subscription: %w", err))
	}
	total := fromPaths(now, sub.doc, Paths{Total: "hard_limit_usd"}, USD, 1)
	if total.Error != "" {
		total.Error = "subscription: " + total.Error
		return total
	}
	// OpenAI asked for a window; the relays that kept the route ignore it.
	day := now.UTC()
	q := url.Values{"start_date": {day.AddDate(0, 0, -99).Format(time.DateOnly)}, "end_date": {day.AddDate(0, 0, 1).Format(time.DateOnly)}}
	use, err := rd.do(ctx, t, get(t, "/v1/dashboard/billing/usage?"+q.Encode(), false))
	if err != nil {
		return failedCall(now, fmt.Errorf("usage: %w", err))
	}
	used := fromPaths(now, use.doc, Paths{Used: "total_usage"}, USD, 0.01) // cents
	if used.Error != "" {
		used.Error = "usage: " + used.Error
		return used
	}
	return Reading{Total: total.Total, Used: used.Used, Unit: USD}
}

// readRelay tries new-api's shape, then the legacy billing one: relays
// answer one or the other, or both.
func readRelay(ctx context.Context, rd Reader, t Target) Reading {
	r := readNewAPI(ctx, rd, t)
	if r.Error == "" {
		r.Template = "newapi"
		return r
	}
	l := readLegacyBilling(ctx, rd, t)
	if l.Error == "" {
		l.Template = "openai_billing"
		return l
	}
	return failed(rd.now(), l.Status, "new-api: %s; legacy billing: %s", r.Error, l.Error)
}

func readSub2API(ctx context.Context, rd Reader, t Target) Reading {
	now := rd.now()
	a, err := rd.do(ctx, t, get(t, "/v1/usage", false))
	if err != nil {
		return failedCall(now, err)
	}
	if valid, found := boolAt(a.doc, "isValid"); found && !valid {
		return failed(now, a.status, "isValid is false: the key is not valid")
	}
	r := fromPaths(now, a.doc, Paths{Remaining: "remaining", Unit: "unit"}, USD, 1)
	if r.Error != "" {
		return r
	}
	if v, err := number(a.doc, "quota.limit"); err == nil {
		r.Total = ptr(v)
	}
	if v, err := number(a.doc, "quota.used"); err == nil {
		r.Used = ptr(v)
	}
	// A spent window of the key's rate limits ends at its reset_at.
	if limits, ok := lookup(a.doc, "rate_limits"); ok {
		list, _ := limits.([]any)
		for _, l := range list {
			left, err := number(l, "remaining")
			if err != nil || left > 0 {
				continue
			}
			if v, ok := lookup(l, "reset_at"); ok {
				if at, err := timeOf(v); err == nil && !at.IsZero() && (r.ResetAt.IsZero() || at.After(r.ResetAt)) {
					r.ResetAt = at // the latest: spent until every spent window resets
				}
			}
		}
	}
	return r
}

func readOpenRouter(ctx context.Context, rd Reader, t Target) Reading {
	now := rd.now()
	a, err := rd.do(ctx, t, get(t, "/api/v1/key", false))
	if err != nil {
		return failedCall(now, err)
	}
	if _, ok := lookup(a.doc, "data"); !ok {
		return failed(now, a.status, "data: missing in the answer")
	}
	if v, ok := lookup(a.doc, "data.limit"); ok && v == nil {
		r := fromPaths(now, a.doc, Paths{Used: "data.usage"}, USD, 1)
		r.Unlimited = true
		return r
	}
	return fromPaths(now, a.doc, Paths{Remaining: "data.limit_remaining", Used: "data.usage", Total: "data.limit"}, USD, 1)
}

func readDeepSeek(ctx context.Context, rd Reader, t Target) Reading {
	now := rd.now()
	a, err := rd.do(ctx, t, get(t, "/user/balance", false))
	if err != nil {
		return failedCall(now, err)
	}
	infos, _ := lookup(a.doc, "balance_infos")
	list, _ := infos.([]any)
	if len(list) == 0 {
		return failed(now, a.status, "balance_infos: missing or empty in the answer")
	}
	// One entry per currency; the first is the account's own.
	r := fromPaths(now, a.doc, Paths{Remaining: "balance_infos[0].total_balance", Unit: "balance_infos[0].currency"}, "", 1)
	if r.Error != "" {
		return r
	}
	if avail, found := boolAt(a.doc, "is_available"); found && !avail && *r.Remaining > 0 {
		// DeepSeek says the balance cannot pay for calls (granted credit
		// expired, a hold): nothing usable is left.
		r.Remaining = ptr(0)
	}
	return r
}

// hostUnit is the currency of a provider whose China site bills in CNY
// and whose international one in USD, told by the host's last label.
func hostUnit(t Target, cnSuffix string) Unit {
	u, err := url.Parse(t.BaseURL)
	if err == nil && strings.HasSuffix(strings.ToLower(u.Hostname()), cnSuffix) {
		return CNY
	}
	return USD
}

func readMoonshot(ctx context.Context, rd Reader, t Target) Reading {
	now := rd.now()
	a, err := rd.do(ctx, t, get(t, "/v1/users/me/balance", false))
	if err != nil {
		return failedCall(now, err)
	}
	if r, bad := refused(now, a.status, a.doc, "status"); bad {
		return r
	}
	return fromPaths(now, a.doc, Paths{Remaining: "data.available_balance"}, hostUnit(t, ".cn"), 1)
}

func readSiliconFlow(ctx context.Context, rd Reader, t Target) Reading {
	now := rd.now()
	a, err := rd.do(ctx, t, get(t, "/v1/user/info", false))
	if err != nil {
		return failedCall(now, err)
	}
	if r, bad := refused(now, a.status, a.doc, "status"); bad {
		return r
	}
	return fromPaths(now, a.doc, Paths{Remaining: "data.totalBalance"}, hostUnit(t, ".cn"), 1)
}

// readZhipu reads the plan's quota windows: the most used one says how
// much is left, until its reset.
func readZhipu(ctx context.Context, rd Reader, t Target) Reading {
	now := rd.now()
	a, err := rd.do(ctx, t, get(t, "/api/monitor/usage/quota/limit", true))
	if err != nil {
		return failedCall(now, err)
	}
	if r, bad := refused(now, a.status, a.doc, "success"); bad {
		return r
	}
	v, _ := lookup(a.doc, "data.limits")
	list, _ := v.([]any)
	if len(list) == 0 {
		return failed(now, a.status, "data.limits: missing or empty in the answer")
	}
	best := -1.0
	var r Reading
	for i := range list {
		p := fmt.Sprintf("data.limits[%d]", i)
		lr := fromPaths(now, a.doc, Paths{Used: p + ".percentage", ResetAt: p + ".nextResetTime"}, Percent, 1)
		if lr.Error != "" {
			return lr
		}
		if *lr.Used > best {
			best, r = *lr.Used, lr
		}
	}
	r.Total = ptr(100)
	r.Remaining = ptr(max(0, 100-best))
	return r
}

func readStepFun(ctx context.Context, rd Reader, t Target) Reading {
	now := rd.now()
	a, err := rd.do(ctx, t, get(t, "/v1/accounts", false))
	if err != nil {
		return failedCall(now, err)
	}
	return fromPaths(now, a.doc, Paths{Remaining: "balance"}, hostUnit(t, ".com"), 1)
}

func readNovita(ctx context.Context, rd Reader, t Target) Reading {
	now := rd.now()
	a, err := rd.do(ctx, t, get(t, "/openapi/v1/billing/balance/detail", false))
	if err != nil {
		return failedCall(now, err)
	}
	return fromPaths(now, a.doc, Paths{Remaining: "availableBalance"}, USD, 0.0001)
}
