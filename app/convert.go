package app

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/ccmesh/ccmesh/breaker"
	"github.com/ccmesh/ccmesh/proxy"
	"github.com/ccmesh/ccmesh/store"
)

// This file translates between the store's plain types and the types of
// breaker and proxy, so that neither of those imports the store. The
// store's strings were validated by the admin API (validate.go) before they
// were stored.

// breakerConfig turns the user's per-profile defaults into a breaker.Config;
// parameters the user did not set keep docs/BEHAVIOUR.md#breaker-defaults's values.
func breakerConfig(s Settings) breaker.Config {
	return breaker.Config{
		Claude: breaker.Resolve(breaker.Config{}, breaker.Claude, s.Breaker.Claude),
		OpenAI: breaker.Resolve(breaker.Config{}, breaker.OpenAI, s.Breaker.OpenAI),
	}
}

// endpointOverrides decodes the breaker overrides an endpoint was stored
// with; the admin API validated them before they were stored.
func endpointOverrides(e store.Endpoint) (breaker.Overrides, error) {
	var o breaker.Overrides
	if err := json.Unmarshal(e.BreakerOverrides, &o); err != nil {
		return breaker.Overrides{}, fmt.Errorf("decode breaker_overrides of endpoint %d: %w", e.ID, err)
	}
	return o, nil
}

func proxyConfig(eps []store.Endpoint, s Settings, listen string) proxy.Config {
	out := make([]proxy.Endpoint, len(eps))
	for i, e := range eps {
		out[i] = proxy.Endpoint{
			ID:              e.ID,
			Name:            e.Name,
			BaseURL:         e.BaseURL,
			APIKey:          e.APIKey,
			Protocol:        proxy.Protocol(e.Protocol),
			Auth:            proxy.AuthMode(e.Auth),
			Models:          e.Models,
			ModelMap:        e.ModelMap,
			Enabled:         e.Enabled,
			Fast:            e.Fast,
			FastSortOrder:   e.FastSortOrder,
			SortOrder:       e.SortOrder,
			HedgeAfter:      endpointHedge(e.HedgeAfterMs),
			Drops:           proxyDrops(e.Drops),
			OnModelMismatch: proxy.OnModelMismatch(e.OnModelMismatch),
			ProxyURL:        e.ProxyURL,
			Keys:            proxyKeys(e.Keys),
			Weight:          e.Weight,
			Tags:            e.Tags,
		}
	}
	return proxy.Config{
		Endpoints:        out,
		Strategy:         s.Strategy,
		FirstByteTimeout: time.Duration(s.FirstByteTimeoutMs) * time.Millisecond,
		IdleTimeout:      time.Duration(s.IdleTimeoutMs) * time.Millisecond,
		HedgeAfter:       time.Duration(s.HedgeAfterMs) * time.Millisecond,
		MaxBody:          s.MaxBodyBytes,
		ClientToken:      s.ClientToken,
		AllowedHosts:     allowedHosts(listen),
		PublicListener:   listen != "" && !ListenerIsLoopback(listen),
		Capture:          s.Capture,
		CaptureBodyCap:   int(s.CaptureBodyBytes),
		Rules:            s.Rules,
	}
}

var stateNames = map[string]breaker.State{
	breaker.Closed.String():   breaker.Closed,
	breaker.Open.String():     breaker.Open,
	breaker.HalfOpen.String(): breaker.HalfOpen,
}

var reasonNames = map[string]breaker.Reason{
	breaker.ReasonNone.String():     breaker.ReasonNone,
	breaker.Broken.String():         breaker.Broken,
	breaker.RateLimited.String():    breaker.RateLimited,
	breaker.QuotaExhausted.String(): breaker.QuotaExhausted,
	breaker.Manual.String():         breaker.Manual,
}

func stateRow(id int64, s breaker.Snapshot) store.BreakerState {
	return store.BreakerState{
		EndpointID:          id,
		State:               s.State.String(),
		Reason:              s.Reason.String(),
		OpenedAt:            s.OpenedAt,
		Until:               s.Until,
		ConsecutiveFailures: s.ConsecutiveFailures,
		HalfOpenSuccesses:   s.HalfOpenSuccesses,
		Reopens:             s.Reopens,
		Balance:             s.Balance,
		UpdatedAt:           time.Now(),
	}
}

func snapshotFrom(r store.BreakerState) (breaker.Snapshot, error) {
	st, ok := stateNames[r.State]
	if !ok {
		return breaker.Snapshot{}, fmt.Errorf("endpoint %d: unknown breaker state %q", r.EndpointID, r.State)
	}
	reason, ok := reasonNames[r.Reason]
	if !ok {
		return breaker.Snapshot{}, fmt.Errorf("endpoint %d: unknown breaker reason %q", r.EndpointID, r.Reason)
	}
	return breaker.Snapshot{
		State:               st,
		Reason:              reason,
		OpenedAt:            r.OpenedAt,
		Until:               r.Until,
		ConsecutiveFailures: r.ConsecutiveFailures,
		HalfOpenSuccesses:   r.HalfOpenSuccesses,
		Reopens:             r.Reopens,
		Balance:             r.Balance,
	}, nil
}

// allowedHosts: a non-loopback listen address is also how clients reach
// the proxy (docs/BEHAVIOUR.md#safety allows it only with a client token).
func allowedHosts(listen string) []string {
	if listen == "" || ListenerIsLoopback(listen) {
		return nil
	}
	return []string{listen}
}

// endpointHedge is an endpoint's hedge_after_ms as the proxy takes it:
// -1 (the setting's) is 0 there, 0 (never) is negative.
func endpointHedge(ms int64) time.Duration {
	switch {
	case ms < 0:
		return 0
	case ms == 0:
		return -1
	}
	return time.Duration(ms) * time.Millisecond
}
