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
			HedgeAfter:      time.Duration(e.HedgeAfterMs) * time.Millisecond, // -1: proxy.HedgeSetting, 0: proxy.HedgeOff
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

// allowedHosts: a non-loopback listen address is also how clients reach
// the proxy (docs/BEHAVIOUR.md#safety allows it only with a client token).
func allowedHosts(listen string) []string {
	if listen == "" || ListenerIsLoopback(listen) {
		return nil
	}
	return []string{listen}
}
