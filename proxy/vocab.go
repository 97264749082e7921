package proxy

import (
	"net/http"
	"strings"

	"github.com/ccmesh/ccmesh/breaker"
	"github.com/ccmesh/ccmesh/proxy/translate"
	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// This file is the proxy's vocabulary at its seams: the closed sets of
// words other packages store, show or send (protocols, strategies, auth
// modes). Each is a type with its constants here and a Valid method; the
// admin API validates input with it once, and everything after that uses
// the typed value. The words of the request log (error types, stream ends,
// exclusions) are in record.go.

// Protocol is an API family: what an endpoint speaks, and what an inbound
// path belongs to (docs/BEHAVIOUR.md#inbound-api). It is the codecs' own
// type: everything protocol-specific is its conv.Spec in the table of
// package translate, which Valid and Index consult.
type Protocol = conv.Protocol

// Protocols lists every Protocol, in the order the UI offers them: the
// table's order.
var Protocols = protocolsOf(translate.Specs)

func protocolsOf(specs []*conv.Spec) []Protocol {
	out := make([]Protocol, len(specs))
	for i, s := range specs {
		out[i] = s.Protocol
	}
	return out
}

// profileOf is the breaker defaults profile of requests of protocol p
// (docs/BEHAVIOUR.md#breaker-defaults): the one its Spec names, Claude's
// when it names none the breaker knows (TestProtocolTable holds every
// protocol of the table to one it knows).
func profileOf(p Protocol) breaker.Profile {
	if s := p.Spec(); s != nil && s.Profile == breaker.OpenAI.String() {
		return breaker.OpenAI
	}
	return breaker.Claude
}

// Strategy is how the routable list is rotated (docs/BEHAVIOUR.md#rotation).
type Strategy string

const (
	StrategySticky     Strategy = "sticky"      // stay on an endpoint until it fails
	StrategyPriority   Strategy = "priority"    // always the first candidate in list order
	StrategyRoundRobin Strategy = "round-robin" // the cursor advances on every request
	StrategySession    Strategy = "session"     // a conversation keeps its endpoint; conversations spread (session.go)
	StrategyFastest    Strategy = "fastest"     // the quicker of two random candidates by time to first byte (fastest.go)
	StrategyWeighted   Strategy = "weighted"    // smooth weighted round-robin over the candidates by their weights
)

// Strategies lists every Strategy; the first is the default.
var Strategies = []Strategy{StrategySticky, StrategyPriority, StrategyRoundRobin, StrategySession, StrategyFastest, StrategyWeighted}

// Valid reports whether s is one of Strategies.
func (s Strategy) Valid() bool {
	switch s {
	case StrategySticky, StrategyPriority, StrategyRoundRobin, StrategySession, StrategyFastest, StrategyWeighted:
		return true
	}
	return false
}

// AuthMode is how an endpoint's key is sent (docs/BEHAVIOUR.md#endpoints).
type AuthMode string

const (
	AuthAuto    AuthMode = "auto"      // the header the endpoint's protocol takes its key in (conv.Spec.KeyHeader)
	AuthXAPIKey AuthMode = "x-api-key" // the x-api-key header
	AuthBearer  AuthMode = "bearer"    // Authorization: Bearer
)

// AuthModes lists every AuthMode; the first is the default.
var AuthModes = []AuthMode{AuthAuto, AuthXAPIKey, AuthBearer}

// Valid reports whether m is one of AuthModes.
func (m AuthMode) Valid() bool {
	switch m {
	case AuthAuto, AuthXAPIKey, AuthBearer:
		return true
	}
	return false
}

// keyHeader is the header a key goes in under m for an endpoint of
// protocol p: "" is Authorization: Bearer.
func (m AuthMode) keyHeader(p Protocol) string {
	switch m {
	case AuthXAPIKey:
		return "X-Api-Key"
	case AuthBearer:
		return ""
	}
	if s := p.Spec(); s != nil {
		return s.KeyHeader
	}
	return ""
}

// BearerToken returns the credential of an Authorization header using the
// Bearer scheme, whose name is case-insensitive (RFC 9110 §11.1), or "".
// The proxy's client-token check and the admin API's token check share it.
func BearerToken(h http.Header) string {
	a := h.Get("Authorization")
	if len(a) > len("bearer ") && strings.EqualFold(a[:len("bearer ")], "bearer ") {
		return strings.TrimSpace(a[len("bearer "):])
	}
	return ""
}
