package proxy

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/ccmesh/ccmesh/breaker"
)

// Defaults for zero Config fields.
const (
	DefaultFirstByteTimeout = 60 * time.Second
	DefaultIdleTimeout      = 90 * time.Second
	DefaultMaxBody          = 64 << 20
	DefaultRateLimitWait    = 5 * time.Second
	DefaultRetryDelay       = 300 * time.Millisecond
)

// Endpoint is one upstream as the app hands it to the proxy.
type Endpoint struct {
	ID       int64
	Name     string
	BaseURL  string
	APIKey   string
	Protocol Protocol
	Auth     AuthMode          // "" is AuthAuto
	Models   []string          // patterns with '*' (empty = all)
	ModelMap map[string]string // pattern → forwarded model

	Enabled, Fast            bool
	FastSortOrder, SortOrder int
	// HedgeAfter is this endpoint's own hedge delay when its attempt comes
	// first (docs/BEHAVIOUR.md#hedging): 0 means Config.HedgeAfter; a
	// negative value, never raced.
	HedgeAfter time.Duration
	// Drops are the parts of a request this endpoint refuses, left out
	// before sending (droppable.go), learned or entered by hand.
	Drops Drops
	// OnModelMismatch: what an answer naming another model than the one
	// forwarded does (answered.go); "" records it.
	OnModelMismatch OnModelMismatch
	// ProxyURL is the proxy its requests go through
	// (docs/BEHAVIOUR.md#upstream-proxy); "" is direct.
	ProxyURL string
	// Keys is its key pool (keys.go); when it has any, APIKey is ignored
	// and each attempt sends one of them.
	Keys []Key
	// Weight is its share under the weighted and session strategies
	// (docs/BEHAVIOUR.md#rotation); 0: only when nothing else is left.
	Weight int
	// Tags are what routing rules name as tag:<tag> (rules.go).
	Tags []string
}

// Config is everything the proxy needs to route; the zero value of each
// field takes the default documented beside it.
type Config struct {
	Endpoints                     []Endpoint    // any order; the proxy builds the routable lists
	Strategy                      Strategy      // "" is StrategySticky
	FirstByteTimeout, IdleTimeout time.Duration // defaults 60s / 90s
	MaxBody                       int64         // default 64 MiB
	ClientToken                   string        // optional (docs/BEHAVIOUR.md#safety)
	AllowedHosts                  []string      // Host values accepted besides loopback names (a non-loopback --listen)
	// PublicListener: ccmesh is bound to a non-loopback address, so a
	// request carrying the client token is accepted whatever its Host.
	PublicListener bool
	RateLimitWait  time.Duration // docs/BEHAVIOUR.md#rate-limit-wait budget, default 5s
	RetryDelay     time.Duration // docs/BEHAVIOUR.md#attempt-loop same-endpoint retry delay, default 300ms
	// HedgeAfter races a request's first attempt, when it has no first
	// content (no headers, not streamed) after this long, with the next
	// candidate (docs/BEHAVIOUR.md#hedging); 0 is off.
	HedgeAfter time.Duration
	// Capture says which requests keep their capture, CaptureBodyCap
	// (default DefaultCaptureBody) how much of each body
	// (docs/BEHAVIOUR.md#capture-and-resend); "" is off.
	Capture        CaptureMode
	CaptureBodyCap int
	// Rules are the routing rules, first match wins (rules.go,
	// docs/BEHAVIOUR.md#routing-rules); the app validated them.
	Rules []Rule
}

// endpoint is an Endpoint compiled for the request path.
type endpoint struct {
	Endpoint
	base     *url.URL
	dropV1   bool     // base path already carries a version segment
	authMode AuthMode // resolved: AuthXAPIKey or AuthBearer
	models   []pattern
	modelMap []mapping
	protocol int // Protocol index: into snapshot.lists and Server.cursors
	profile  breaker.Profile
	proxy    *url.URL          // ProxyURL parsed; nil when direct
	rt       http.RoundTripper // the transport of its proxy; nil is the Server's own
	// listIndex[p] is the position in protocol p's routable list; -1 when
	// the endpoint is not in it.
	listIndex [numProtocols]int
	// pool is its keys, picker their shared picking state (keys.go); key
	// and root are set on a key's variant only: the key it sends and the
	// endpoint it was made from.
	pool   []*poolKey
	picker *keyPicker
	// pooled: more than one key is enabled, so a key's faults are its
	// own; a pool of one key fails as the endpoint, as a lone api_key did.
	pooled bool
	key    *poolKey
	root   *endpoint
}

type mapping struct {
	from pattern
	to   string
}

// snapshot is an immutable compiled Config; a request keeps the one it
// started with, so edits never change a request midway (docs/BEHAVIOUR.md#endpoints).
type snapshot struct {
	cfg    Config
	byName map[string]*endpoint
	// lists[p] is protocol p's routable list (docs/BEHAVIOUR.md#routable-list), in order.
	lists    [numProtocols][]*endpoint
	strategy Strategy
	// invalid records endpoints that could not be compiled, for the log.
	invalid map[string]string
	// secrets are what a capture must mask (captureSecrets).
	secrets []string
	rules   []*rule // cfg.Rules compiled
}

// versionSegment is an API version in a base path: /v1, /v4, or
// Google's /v1beta/openai (a version followed by one more segment).
var versionSegment = regexp.MustCompile(`/v[0-9]+(beta[0-9]*|alpha[0-9]*)?(/[A-Za-z0-9_-]+)?$`)

func compile(cfg Config) *snapshot {
	cfg.FirstByteTimeout = cmp.Or(cfg.FirstByteTimeout, DefaultFirstByteTimeout)
	cfg.IdleTimeout = cmp.Or(cfg.IdleTimeout, DefaultIdleTimeout)
	cfg.MaxBody = cmp.Or(cfg.MaxBody, DefaultMaxBody)
	cfg.RateLimitWait = cmp.Or(cfg.RateLimitWait, DefaultRateLimitWait)
	cfg.RetryDelay = cmp.Or(cfg.RetryDelay, DefaultRetryDelay)
	cfg.CaptureBodyCap = cmp.Or(cfg.CaptureBodyCap, DefaultCaptureBody)
	s := &snapshot{
		cfg:      cfg,
		byName:   make(map[string]*endpoint, len(cfg.Endpoints)),
		strategy: cfg.Strategy,
		invalid:  map[string]string{},
		secrets:  captureSecrets(&cfg),
	}
	if !s.strategy.Valid() {
		s.strategy = StrategySticky
	}
	var all []*endpoint
	for _, e := range cfg.Endpoints {
		ce, err := compileEndpoint(e)
		if err != nil {
			s.invalid[e.Name] = err.Error()
			continue
		}
		s.byName[e.Name] = ce
		all = append(all, ce)
	}
	for pi := range numProtocols {
		s.lists[pi] = routableList(all, pi)
		for i, e := range s.lists[pi] {
			e.listIndex[pi] = i
		}
	}
	for _, e := range all {
		for _, k := range e.pool {
			k.variant.listIndex = e.listIndex
		}
	}
	s.rules = compileRules(cfg.Rules, all)
	return s
}

// routableList is protocol pi's routable list (docs/BEHAVIOUR.md#routable-list):
// the enabled fast-queue endpoints that can serve pi at all, in queue
// order; when there are none, every enabled endpoint that can, in list
// order. The fast queue is per protocol, so a fast queue of Claude relays
// does not leave Codex without endpoints.
func routableList(all []*endpoint, pi int) []*endpoint {
	var fast, every []*endpoint
	for _, e := range all {
		if !e.Enabled || !e.canServe(pi) {
			continue
		}
		every = append(every, e)
		if e.Fast {
			fast = append(fast, e)
		}
	}
	if len(fast) > 0 {
		slices.SortStableFunc(fast, func(a, b *endpoint) int {
			return cmp.Or(cmp.Compare(a.FastSortOrder, b.FastSortOrder), cmp.Compare(a.ID, b.ID))
		})
		return fast
	}
	slices.SortStableFunc(every, func(a, b *endpoint) int {
		return cmp.Or(cmp.Compare(a.SortOrder, b.SortOrder), cmp.Compare(a.ID, b.ID))
	})
	return every
}

func compileEndpoint(e Endpoint) (*endpoint, error) {
	pi := e.Protocol.index()
	if pi < 0 {
		return nil, fmt.Errorf("unknown protocol %q", e.Protocol)
	}
	// Errors leave the URL itself out: it may carry credentials and these
	// messages reach the process log.
	u, err := url.Parse(e.BaseURL)
	if uerr := (*url.Error)(nil); errors.As(err, &uerr) {
		err = uerr.Err
	}
	if err != nil {
		return nil, fmt.Errorf("parse base_url: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, errors.New("base_url must be an http(s) URL with a host")
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	u.RawQuery, u.Fragment = "", ""
	ce := &endpoint{
		Endpoint: e,
		base:     u,
		dropV1:   versionSegment.MatchString(u.Path),
		protocol: pi,
		profile:  e.Protocol.Profile(),
	}
	if e.ProxyURL != "" {
		if ce.proxy, err = ParseProxyURL(e.ProxyURL); err != nil {
			return nil, err
		}
	}
	for pi := range ce.listIndex {
		ce.listIndex[pi] = -1
	}
	ce.authMode = e.Auth.resolve(e.Protocol)
	for _, m := range e.Models {
		ce.models = append(ce.models, compilePattern(m))
	}
	ce.modelMap = compileMap(e.ModelMap)
	compileKeys(ce)
	return ce, nil
}

// canServe reports whether the endpoint can serve requests of protocol
// pi at all: its own protocol's always; another protocol's, translated,
// only when it names models (docs/BEHAVIOUR.md#candidates).
func (e *endpoint) canServe(pi int) bool {
	return e.protocol == pi || len(e.models) > 0 || len(e.modelMap) > 0
}

// serves reports whether the endpoint serves model for a request of
// protocol pi: its own protocol's clients by its models filter (empty =
// all), other protocols' only for a model its models or a model_map
// pattern names.
func (e *endpoint) serves(pi int, model string) bool {
	if e.protocol == pi && len(e.models) == 0 {
		return true
	}
	for _, p := range e.models {
		if p.match(model) {
			return true
		}
	}
	if e.protocol == pi {
		return false
	}
	for _, m := range e.modelMap {
		if m.from.match(model) {
			return true
		}
	}
	return false
}

// compileMap compiles a model_map (an endpoint's or a rule's).
func compileMap(mm map[string]string) []mapping {
	var out []mapping
	for from, to := range mm {
		out = append(out, mapping{from: compilePattern(from), to: to})
	}
	// Map iteration order is random; the most specific pattern wins so the
	// choice is stable: exact names first, then longer literal text.
	slices.SortFunc(out, func(a, b mapping) int {
		return cmp.Or(
			cmp.Compare(a.from.wild(), b.from.wild()),
			-cmp.Compare(a.from.literalLen(), b.from.literalLen()),
			strings.Compare(a.from.raw, b.from.raw))
	})
	return out
}

// mapModel applies model_map after the endpoint was chosen.
func (e *endpoint) mapModel(model string) string { return mapWith(e.modelMap, model) }

// mapWith is model as the first mapping that matches it rewrites it.
func mapWith(mm []mapping, model string) string {
	for _, m := range mm {
		if m.from.match(model) {
			return m.to
		}
	}
	return model
}

// upstreamURL joins base_url and the inbound path (docs/BEHAVIOUR.md#endpoints).
func (e *endpoint) upstreamURL(path, rawQuery string) string {
	if e.dropV1 {
		path = strings.TrimPrefix(path, "/v1")
	}
	u := *e.base
	u.Path += path
	u.RawQuery = rawQuery
	return u.String()
}

// pattern is a model pattern where '*' matches any run of characters.
type pattern struct {
	raw   string
	parts []string // raw split on '*'
}

func compilePattern(s string) pattern { return pattern{raw: s, parts: strings.Split(s, "*")} }

func (p pattern) wild() int { return len(p.parts) - 1 }

func (p pattern) literalLen() int { return len(p.raw) - p.wild() }

func (p pattern) match(s string) bool {
	if len(p.parts) == 1 {
		return s == p.raw
	}
	first, last := p.parts[0], p.parts[len(p.parts)-1]
	if !strings.HasPrefix(s, first) {
		return false
	}
	s = s[len(first):]
	for _, mid := range p.parts[1 : len(p.parts)-1] {
		i := strings.Index(s, mid)
		if i < 0 {
			return false
		}
		s = s[i+len(mid):]
	}
	return strings.HasSuffix(s, last)
}
