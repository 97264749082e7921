package proxy

import (
	"net/http"
	"strings"

	"github.com/ccmesh/ccmesh/breaker"
)

// This file is the proxy's vocabulary at its seams: the closed sets of
// words other packages store, show or send (protocols, strategies, auth
// modes). Each is a type with its constants here and a Valid method; the
// admin API validates input with it once, and everything after that uses
// the typed value. The words of the request log (error types, stream ends,
// exclusions) are in record.go.

// Protocol is an API family: what an endpoint speaks, and what an inbound
// path belongs to (docs/BEHAVIOUR.md#inbound-api).
type Protocol string

const (
	ProtocolAnthropic       Protocol = "anthropic"        // Messages API
	ProtocolOpenAIChat      Protocol = "openai-chat"      // Chat Completions
	ProtocolOpenAIResponses Protocol = "openai-responses" // Responses API
)

// Protocols lists every Protocol, in the order the UI offers them.
var Protocols = []Protocol{ProtocolAnthropic, ProtocolOpenAIChat, ProtocolOpenAIResponses}

// numProtocols sizes the per-protocol arrays (routable lists, cursors).
const numProtocols = 3

// index is p's position in Protocols, or -1 for an unknown protocol.
func (p Protocol) index() int {
	switch p {
	case ProtocolAnthropic:
		return 0
	case ProtocolOpenAIChat:
		return 1
	case ProtocolOpenAIResponses:
		return 2
	}
	return -1
}

// Valid reports whether p is one of Protocols.
func (p Protocol) Valid() bool { return p.index() >= 0 }

// Profile is the breaker defaults profile of requests of protocol p
// (docs/BEHAVIOUR.md#breaker-defaults).
func (p Protocol) Profile() breaker.Profile {
	if p == ProtocolAnthropic {
		return breaker.Claude
	}
	return breaker.OpenAI
}

// shape is the error format clients of protocol p understand.
func (p Protocol) shape() errShape {
	if p == ProtocolAnthropic {
		return shapeClaude
	}
	return shapeOpenAI
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
	AuthAuto    AuthMode = "auto"      // x-api-key for anthropic endpoints, bearer for the others
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

// resolve turns auto into the mode protocol p's upstreams expect.
func (m AuthMode) resolve(p Protocol) AuthMode {
	if m == AuthXAPIKey || m == AuthBearer {
		return m
	}
	if p == ProtocolAnthropic {
		return AuthXAPIKey
	}
	return AuthBearer
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
