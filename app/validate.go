package app

import (
	"net"
	"strconv"

	"github.com/ccmesh/ccmesh/app/apierr"
	"github.com/ccmesh/ccmesh/app/config"
	"github.com/ccmesh/ccmesh/breaker"
	"github.com/ccmesh/ccmesh/proxy"
)

// The admin API validates the words and parameters the store keeps without
// knowing them, once: the settings (PUT, import) here, from the checks of
// the package app/config, which also holds an endpoint's input (create,
// update, import) and the routing rules' checks. What storage relies on
// (names, URLs, keys, model patterns) the store checks. Rejections are 422
// with a stable code the UI keys its messages on.

// rejected is a 422 reply for a bad field value (apierr.Rejected).
func rejected(code, field, format string, args ...any) *apiError {
	return (*apiError)(apierr.Rejected(code, field, format, args...))
}

// invalid is a 422 reply for a bad setting (apierr.Invalid).
func invalid(field, format string, args ...any) *apiError {
	return (*apiError)(apierr.Invalid(field, format, args...))
}

// words lists vs for a message (config.Words).
func words[T ~string](vs []T, last string) string { return config.Words(vs, last) }

// validateSettings checks a whole settings document (a PUT's merge, or an
// import's). bound is the address ccmesh listens on now (the listen
// setting applies only at the next start).
func validateSettings(s Settings, bound string) error {
	if s.Listen != "" {
		host, port, err := net.SplitHostPort(s.Listen)
		if n, perr := strconv.Atoi(port); err != nil || host == "" || perr != nil || n < 1 || n > 65535 {
			return invalid("listen", "listen must be host:port, e.g. 127.0.0.1:3457, not %q", s.Listen)
		}
		if !ListenerIsLoopback(s.Listen) && s.ClientToken == "" {
			return invalid("listen", "a non-loopback address (%s) needs a client token: set client_token first", s.Listen)
		}
	}
	if s.ClientToken != "" {
		if err := config.ValidClientToken(s.ClientToken); err != nil {
			return err
		}
	} else if bound != "" && !ListenerIsLoopback(bound) {
		return invalid("client_token", "client_token cannot be cleared while ccmesh listens on %s, which is not a loopback "+
			"address: anyone who reaches it could use your endpoints' keys. Restart ccmesh on 127.0.0.1 (the listen "+
			"setting, or --listen) first", bound)
	}
	if !s.Strategy.Valid() {
		return invalid("strategy", "strategy must be %s, not %q", words(proxy.Strategies, " or "), s.Strategy)
	}
	switch s.Language {
	case "en", "zh-CN":
	default:
		return invalid("language", "language must be en or zh-CN, not %q", s.Language)
	}
	if !s.Capture.Valid() {
		return invalid("capture", "capture must be %s, not %q", words(proxy.CaptureModes, " or "), s.Capture)
	}
	if err := config.CheckRanges(apierr.CodeInvalidSetting, "", s); err != nil {
		return err
	}
	if err := validUpdateFeed(s.UpdateFeedURL); err != nil {
		return err
	}
	for _, p := range []struct {
		field string
		o     breaker.Overrides
	}{{"breaker.claude", s.Breaker.Claude}, {"breaker.openai", s.Breaker.OpenAI}} {
		if err := config.ValidOverrides(p.field, p.o); err != nil {
			return err
		}
	}
	if err := validPriceRows("prices", s.Prices); err != nil {
		return err
	}
	return nil
}
