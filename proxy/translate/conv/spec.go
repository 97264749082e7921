package conv

import (
	"fmt"
	"net/http"
	"time"
)

// Spec is everything protocol-specific about one API family that the
// proxy and the admin API need besides the codec: how its clients reach
// ccmesh, how its upstreams are called and answer, and what its errors
// look like. Each codec package exports its Spec; package translate lists
// them in one table (Register), and the proxy and the app ask that table,
// so adding a protocol is its package and one line there.
type Spec struct {
	Protocol Protocol
	Codec    Codec
	// Family groups protocols whose clients are served one model list on
	// GET /v1/models and whose codecs share request members (SameFamily).
	Family string
	// Profile names the breaker defaults profile of its requests
	// (docs/BEHAVIOUR.md#breaker-defaults), as breaker.Profile's String does.
	Profile string

	// Inbound lists the paths its clients post to; the first is also the
	// path of a request to its upstreams unless UpstreamPath says more.
	Inbound []string
	// Route, when set, claims an inbound path Inbound does not list and
	// reads the model and the stream flag from it (a protocol that names
	// the model in the path, not the body).
	Route func(path, rawQuery string) (Inbound, bool)
	// RouteDoc names the paths Route claims, for the answer to a path no
	// protocol serves.
	RouteDoc string
	// CountPath is the inbound path of its token counter, when it has one
	// of its own (Route marks its counter paths itself: Inbound.Count).
	CountPath string
	// UpstreamPath, when set, is the path and query of a request for
	// model, streamed or not; nil is Inbound[0] with no query.
	UpstreamPath func(model string, stream bool) (path, rawQuery string)
	// Version is the version segment its upstream paths start with; a base
	// URL that already ends in a version segment drops it
	// (docs/BEHAVIOUR.md#endpoints).
	Version string

	// KeyHeader is the header its upstreams take the key in under the auth
	// mode auto; "" is Authorization: Bearer.
	KeyHeader string
	// KeyQuery is the query member its clients may send their key in
	// ("" for none); like KeyHeader it is taken as ccmesh's client token
	// and never forwarded.
	KeyQuery string
	// HeaderPrefix starts the request headers only its upstreams read
	// (Anthropic-): a translated request to another protocol leaves them out.
	HeaderPrefix string
	// Headers are request headers its upstreams require, set when the
	// client did not send them.
	Headers map[string]string
	// MarkerHeader is a request header only its clients send; it picks
	// the error shape of a request whose path is not known yet.
	MarkerHeader string

	// EventKind decides what an SSE event of its streams is for the
	// prelude hold; holding is true while the hold lasts (only errors and
	// the end matter after it, so a decode may be skipped then).
	EventKind func(name string, data []byte, holding bool) EventKind
	// BodyUsage reads a non-streamed answer's usage.
	BodyUsage func(body []byte) (Usage, bool)
	// EventUsage reads the usage one SSE data payload carries.
	EventUsage func(data []byte) (Usage, bool)
	// UsageAsked, when set, reports whether a client's streamed request
	// asks its upstream for usage; when it does not, ccmesh keeps the
	// stream's text (StreamText) for an estimate.
	UsageAsked func(body []byte) bool
	// StreamText is the text one SSE data payload adds to the answer.
	StreamText func(data []byte) string

	// ErrorBody is a non-streamed error in its clients' shape.
	ErrorBody func(status int, msg string) []byte
	// StreamError is a complete SSE event that ends a started stream with msg.
	StreamError func(msg string) []byte
	// ErrorStatuses maps the error types and codes its upstreams put in
	// stream error events to the status they stand for.
	ErrorStatuses map[string]int
	// ReadError, when set, reads its upstreams' non-2xx body for what the
	// attempt loop needs beyond the status; ok is false when the body is
	// not in its shape.
	ReadError func(status int, body []byte) (e UpstreamError, ok bool)

	// NewState, when set, makes the state one proxy server keeps for the
	// protocol's conversations (Gemini's thought signatures); CodecFor is
	// then the codec of one attempt's conversation over that state, for a
	// client the proxy knows as client.
	NewState func() any
	CodecFor func(state any, client string, r *Request) Codec

	// CountUpstream, when set, is the path and query of its upstreams'
	// token counter for model (nil: the client's own counter path, when the
	// client speaks the protocol). DecodeCount reads a client's count
	// body, EncodeCount writes one for its upstreams (nil: only its own
	// clients' counts go to them), CountAnswer is its clients' answer for
	// n tokens, ReadCount reads its upstreams' answer.
	CountUpstream func(model string) (path, rawQuery string)
	DecodeCount   func(body []byte) (*Request, error)
	EncodeCount   func(r *Request) ([]byte, error)
	CountAnswer   func(n int64) []byte
	ReadCount     func(body []byte) int64

	// SignedThinking: its upstreams verify thinking signatures, and may
	// refuse thinking blocks another upstream produced.
	SignedThinking bool
	// RequiredMaxTokens is the output limit a request to it must carry,
	// 0 when it may carry none.
	RequiredMaxTokens int64

	// ProbeModel is the model of the Test probe when the endpoint names
	// none; Probe is the probe's path and body for model.
	ProbeModel string
	Probe      func(model string) (path string, body []byte)
	// ModelsPath is its upstreams' model list, "" for /v1/models;
	// ModelsPage reads one page of it, nil for ReadModelList.
	ModelsPath string
	ModelsPage func(body []byte) (ModelPage, error)
	// ModelsLimit is the query member and value that ask its model list
	// for its largest page ("" when it takes none); ModelsAfter is the
	// member that asks for the page after ModelPage.Cursor.
	ModelsLimit  [2]string
	ModelsAfter  string
	ModelsAnswer func(ids []string) any // ccmesh's own GET /v1/models answer
}

// UpstreamError is what a protocol's error body says to the attempt loop.
type UpstreamError struct {
	// RateLimited: a limit to wait out, RetryAfter long when given.
	RateLimited bool
	RetryAfter  time.Duration
	// Quota: the quota or the credit is spent for longer than a retry.
	Quota bool
	// KeyRefused: the key is invalid, expired or not allowed.
	KeyRefused bool
}

// ModelPage is one page of an upstream's model list.
type ModelPage struct {
	IDs []string
	// More: the page says more exist; Cursor is what asks for the next
	// page ("" when the page gives no way to ask).
	More   bool
	Cursor string
}

// Models is the path of s's upstreams' model list.
func (s *Spec) Models() string {
	if s.ModelsPath != "" {
		return s.ModelsPath
	}
	return "/v1/models"
}

// ReadModels reads one page of s's upstreams' model list.
func (s *Spec) ReadModels(body []byte) (ModelPage, error) {
	if s.ModelsPage != nil {
		return s.ModelsPage(body)
	}
	return ReadModelList(body)
}

// Inbound is what an inbound path says about its request.
type Inbound struct {
	// Model is the model the path names, "" when the body names it.
	Model string
	// Stream: the path asks for a stream; StreamSaid: the path says
	// either way (the body's stream flag is then not read).
	Stream, StreamSaid bool
	// Count: the path is the protocol's token counter.
	Count bool
	// Form, when set, is the stream form the path asks for instead of the
	// codec's own SSE (Gemini's JSON array without alt=sse).
	Form *StreamForm
}

// StreamForm is a stream form a client may ask for besides its codec's
// own: its encoder and its Content-Type.
type StreamForm struct {
	Encoder func(*Request) StreamEncoder
	Type    string
}

// EventKind is what an SSE event is to the prelude hold.
type EventKind uint8

const (
	EventPrelude  EventKind = iota // not content: held while the hold lasts
	EventContent                   // content: releases the hold
	EventError                     // an error the upstream reports in its stream
	EventTerminal                  // the stream's last event
)

// registry is the table Register was given, in its order; families is
// every declared protocol's Family.
var (
	registry []*Spec
	byName   = map[Protocol]int{}
	families = map[Protocol]string{}
)

// Declare records s's family; each codec package declares its Spec when
// it is loaded, so that codecs can tell a protocol of their own family
// from any other without the table (SameFamily).
func Declare(s *Spec) { families[s.Protocol] = s.Family }

// SameFamily reports whether protocols p and q are declared in one family.
func SameFamily(p, q Protocol) bool {
	f, ok := families[p]
	return ok && f == families[q]
}

// Register sets the table of protocols, in the order the UI offers them.
// Package translate calls it once, with every codec package's Spec; a
// second call, a repeated protocol or a Spec without its codec panics.
func Register(specs ...*Spec) []*Spec {
	if registry != nil {
		panic("conv: Register called twice")
	}
	for i, s := range specs {
		if s.Codec == nil || s.Codec.Protocol() != s.Protocol {
			panic(fmt.Sprintf("conv: spec %q does not carry its codec", s.Protocol))
		}
		if _, dup := byName[s.Protocol]; dup {
			panic(fmt.Sprintf("conv: protocol %q registered twice", s.Protocol))
		}
		byName[s.Protocol] = i
	}
	registry = specs
	return specs
}

// Specs is the table, in the order the UI offers it.
func Specs() []*Spec { return registry }

// Index is p's position in the table, or -1 for an unknown protocol.
func (p Protocol) Index() int {
	if i, ok := byName[p]; ok {
		return i
	}
	return -1
}

// Valid reports whether p is in the table.
func (p Protocol) Valid() bool { return p.Index() >= 0 }

// Spec is p's entry in the table, nil for an unknown protocol.
func (p Protocol) Spec() *Spec {
	if i := p.Index(); i >= 0 {
		return registry[i]
	}
	return nil
}

// Upstream is the path and query of a request to s's upstreams.
// s.Inbound may be empty when s.UpstreamPath is set.
func (s *Spec) Upstream(model string, stream bool) (path, rawQuery string) {
	if s.UpstreamPath != nil {
		return s.UpstreamPath(model, stream)
	}
	return s.Inbound[0], ""
}

// SpecOfRoute is the protocol an inbound path belongs to, and what the
// path says about its request.
func SpecOfRoute(path, rawQuery string) (*Spec, Inbound, bool) {
	for _, s := range registry {
		for _, p := range s.Inbound {
			if p == path {
				return s, Inbound{Count: p == s.CountPath && p != ""}, true
			}
		}
	}
	for _, s := range registry {
		if s.Route != nil {
			if in, ok := s.Route(path, rawQuery); ok {
				return s, in, true
			}
		}
	}
	return nil, Inbound{}, false
}

// SpecOfHeader is the protocol whose marker header h carries, or the
// table's first protocol without a marker: the shape of an error to a
// request whose path names no protocol.
func SpecOfHeader(h http.Header) *Spec {
	var plain *Spec
	for _, s := range registry {
		switch {
		case s.MarkerHeader != "" && h.Get(s.MarkerHeader) != "":
			return s
		case s.MarkerHeader == "" && plain == nil:
			plain = s
		}
	}
	return plain
}
