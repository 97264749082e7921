package app

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"

	"github.com/ccmesh/ccmesh/store"
)

func (a *App) getSettings(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, a.state.Load().Settings)
	return nil
}

func (a *App) putSettings(w http.ResponseWriter, r *http.Request) error {
	var saved store.Settings
	err := a.mutate(r.Context(), func(ctx context.Context) error {
		// Decoding onto a copy of the current settings merges: fields the
		// body leaves out keep their values.
		s := a.state.Load().Settings
		if err := decodeJSON(r, &s); err != nil {
			return err
		}
		if err := validateSettings(s); err != nil {
			return err
		}
		saved = s
		return a.db.PutSettings(ctx, s)
	})
	if err != nil {
		return err
	}
	a.events.Publish("settings", saved)
	writeJSON(w, http.StatusOK, saved)
	return nil
}

func invalid(field, format string, args ...any) *apiError {
	return &apiError{Status: http.StatusUnprocessableEntity, Code: "invalid_setting", Field: field,
		Message: fmt.Sprintf(format, args...)}
}

func validateSettings(s store.Settings) error {
	if s.Listen != "" {
		host, port, err := net.SplitHostPort(s.Listen)
		if n, perr := strconv.Atoi(port); err != nil || host == "" || perr != nil || n < 1 || n > 65535 {
			return invalid("listen", "listen must be host:port, e.g. 127.0.0.1:3457, not %q", s.Listen)
		}
		if !ListenerIsLoopback(s.Listen) && s.ClientToken == "" {
			return invalid("listen", "a non-loopback address (%s) needs a client token: set client_token first", s.Listen)
		}
	}
	switch s.Strategy {
	case "sticky", "priority", "round-robin":
	default:
		return invalid("strategy", "strategy must be sticky, priority or round-robin, not %q", s.Strategy)
	}
	switch s.Language {
	case "en", "zh-CN":
	default:
		return invalid("language", "language must be en or zh-CN, not %q", s.Language)
	}
	positive := []struct {
		field string
		v     int64
	}{
		{"first_byte_timeout_ms", s.FirstByteTimeoutMs},
		{"idle_timeout_ms", s.IdleTimeoutMs},
		{"max_body_bytes", s.MaxBodyBytes},
		{"log_retention_rows", int64(s.LogRetentionRows)},
		{"log_retention_days", int64(s.LogRetentionDays)},
	}
	for _, p := range positive {
		if p.v <= 0 {
			return invalid(p.field, "%s must be greater than 0", p.field)
		}
	}
	for name, p := range map[string]store.BreakerParams{"claude": s.Breaker.Claude, "openai": s.Breaker.OpenAI} {
		if err := store.ValidateBreakerParams("breaker."+name, p); err != nil {
			return err
		}
	}
	return nil
}
