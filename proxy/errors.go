package proxy

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// errShape is the error format of the inbound protocol
// (docs/BEHAVIOUR.md#inbound-api): its Spec's ErrorBody.
type errShape = *conv.Spec

// shapeOfRequest is used before the route is known (404, guards): the
// protocol whose marker header the request carries (anthropic-version),
// else the table's first without one.
func shapeOfRequest(r *http.Request) errShape { return conv.SpecOfHeader(r.Header) }

// writeError answers with an error ccmesh produced itself.
func writeError(w http.ResponseWriter, shape errShape, status int, msg string) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	b := shape.ErrorBody(status, msg)
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b) // a client that left cannot be told anything
}

// setCCMeshHeaders sets the headers every proxy response carries: which
// endpoint answered after how many attempts (docs/BEHAVIOUR.md#attempt-loop),
// and, because the proxy shares its origin with the admin UI, the two that
// keep an upstream's body from ever running as a page there
// (docs/BEHAVIOUR.md#safety).
func setCCMeshHeaders(h http.Header, endpoint string, attempts int) {
	h.Set("X-Ccmesh-Endpoint", endpoint)
	h.Set("X-Ccmesh-Attempts", strconv.Itoa(attempts))
	h.Set("X-Fallback-Triggered", strconv.FormatBool(attempts > 1))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "sandbox")
}

// exhaustedAdvice is the last words of the answer when no attempt
// succeeded: "retry shortly" only when some failure may pass by itself (a
// transport error, a timeout, a 5xx, a rate limit, a broken stream). When
// every attempt failed in a way a retry repeats — a request the
// endpoints' protocols cannot carry, a key refused (401, 403), a path
// that does not exist (404) — it says what to change instead
// (docs/BEHAVIOUR.md#attempt-loop).
func exhaustedAdvice(atts []Attempt) string {
	var translation, key, path bool
	for _, a := range atts {
		switch {
		case a.ErrorType == ErrTranslation:
			translation = true
		case a.ErrorType == ErrStatus && (a.Status == http.StatusUnauthorized || a.Status == http.StatusForbidden):
			key = true
		case a.ErrorType == ErrStatus && a.Status == http.StatusNotFound:
			path = true
		default:
			return "retry shortly; ccmesh skips failing endpoints on its own"
		}
	}
	var fixes []string
	if translation {
		fixes = append(fixes, "send it to an endpoint that speaks the client's protocol, or change what the request asks for")
	}
	if key {
		fixes = append(fixes, "check the endpoint's API key and its permissions")
	}
	if path {
		fixes = append(fixes, "check the endpoint's base URL")
	}
	if len(fixes) == 0 {
		return "retry shortly; ccmesh skips failing endpoints on its own"
	}
	return "retrying will not help: " + strings.Join(fixes, "; ")
}
