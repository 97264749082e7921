// Package proxy is ccmesh's inbound HTTP side: routing over endpoints, the
// attempt loop with failover, error classification, SSE streaming and the
// request log record. docs/BEHAVIOUR.md states its rules, from
// #inbound-api to #request-log, and the proxy's side of #safety.
package proxy

import (
	"crypto/subtle"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/ccmesh/ccmesh/breaker"
	"github.com/ccmesh/ccmesh/proxy/translate"
	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// Options are the proxy's collaborators.
type Options struct {
	Breakers *breaker.Set
	// KeyBreakers holds the breakers of pool keys, by key id (keys.go);
	// nil: a set of the proxy's own.
	KeyBreakers *breaker.Set
	Sink        LogSink // may be nil: records are dropped
	Logger      zerolog.Logger
	// Transport carries upstream requests. Nil means NewTransport().
	Transport http.RoundTripper
	// OnLearn is told of each part an endpoint refused and was then served
	// without (learn.go), to persist it; nil keeps it in memory only. It is
	// called on the request's goroutine and must not block.
	OnLearn func(endpointID int64, l Learned)
}

// Server serves the /v1/* routes. Configure it with Update before use; until
// then every request is answered 503.
type Server struct {
	breakers    *breaker.Set
	keyBreakers *breaker.Set
	sink        LogSink
	log         zerolog.Logger
	transport   http.RoundTripper
	snap        atomic.Pointer[snapshot]
	paused      atomic.Bool
	affinity    affinities    // the session strategy's table (session.go)
	weights     []weightState // the weighted strategy's, per protocol (selector.go)
	// cursors are the per-protocol rotation cursors of docs/BEHAVIOUR.md#rotation, indexes
	// into the protocol's routable list (taken modulo its current length so
	// they survive edits).
	cursors []atomic.Int64
	// ruleCursors are the routing rules' own, by rule name (selector.go).
	ruleCursors sync.Map
	// copyBufs recycles copyResponse's 32 KiB buffers: one per request
	// would otherwise dominate the proxy's allocations.
	copyBufs sync.Pool
	learned  learnedDrops // refused parts learned, until the config carries them
	proxied  transports   // one per endpoint proxy_url in use (upstreamproxy.go)
	speeds   speeds       // each endpoint's time to first byte, for the fastest strategy (fastest.go)
	onLearn  func(int64, Learned)
	// states are the per-protocol conversation states (conv.Spec.NewState:
	// Gemini's thought signatures), by the protocol's index; nil for a
	// protocol that keeps none.
	states []any
}

// New makes a Server.
func New(opts Options) *Server {
	s := &Server{breakers: opts.Breakers, keyBreakers: opts.KeyBreakers, sink: opts.Sink, log: opts.Logger, transport: opts.Transport, onLearn: opts.OnLearn}
	s.copyBufs.New = func() any { b := make([]byte, 32<<10); return &b }
	s.weights, s.cursors = make([]weightState, len(Protocols)), make([]atomic.Int64, len(Protocols))
	s.states = make([]any, len(translate.Specs))
	for i, spec := range translate.Specs {
		if spec.NewState != nil {
			s.states[i] = spec.NewState()
		}
	}
	if s.breakers == nil {
		s.breakers = breaker.NewSet(breaker.Config{}, nil)
	}
	if s.keyBreakers == nil {
		s.keyBreakers = breaker.NewSet(breaker.Config{}, nil)
	}
	if s.transport == nil {
		s.transport = NewTransport()
	}
	s.proxied.base = func() *http.Transport {
		if t, ok := opts.Transport.(*http.Transport); ok {
			return t.Clone()
		}
		return NewTransport()
	}
	return s
}

// TransportFor is the transport that reaches an endpoint with proxyURL
// ("" direct): the admin side's Test, Fetch models and balance reads go
// the way its requests do.
func (s *Server) TransportFor(proxyURL string) http.RoundTripper {
	if proxyURL == "" {
		return s.transport
	}
	if t := s.proxied.get(proxyURL); t != nil {
		return t
	}
	return s.transport
}

// NewTransport is the default upstream transport, tuned for a local proxy:
// HTTP/1.1 and HTTP/2, a keep-alive pool large enough for bursts of
// Claude Code sub-agents, no transparent decompression (success bodies
// pass through as they came, docs/BEHAVIOUR.md#headers) and no proxy taken from the
// environment: a stray HTTPS_PROXY must not silently reroute API keys.
// Users who need an outbound proxy pass their own Transport.
func NewTransport() *http.Transport {
	return &http.Transport{
		Proxy: nil,
		DialContext: (&net.Dialer{
			Timeout:   10 * time.Second,
			KeepAlive: 30 * time.Second,
		}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		DisableCompression:    true,
	}
}

// Update compiles cfg and swaps it in atomically; requests in flight keep
// the snapshot they started with.
func (s *Server) Update(cfg Config) {
	snap := compile(cfg)
	s.learned.settle(&cfg)
	use := map[string]bool{}
	for _, e := range snap.byName {
		if e.proxy != nil {
			e.rt, use[e.ProxyURL] = s.proxied.get(e.ProxyURL), true
		}
	}
	s.proxied.keep(use)
	for name, why := range snap.invalid {
		s.log.Warn().Str("endpoint", name).Str("error", why).Msg("endpoint left out of routing")
	}
	s.snap.Store(snap)
}

// SetPaused pauses or resumes the proxy: while paused every /v1/ request
// that passes the guards is answered 503, with the headers and the log
// record any answer gets, and nothing reaches an upstream.
func (s *Server) SetPaused(p bool) { s.paused.Store(p) }

// PausedMessage is the error a paused proxy answers with.
const PausedMessage = "ccmesh is paused: resume it from the tray or the window to send requests upstream"

// ServeHTTP serves the /v1/* routes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rec := &Record{Time: start, Path: r.URL.Path}
	snap := s.snap.Load()
	var (
		cw *captureWriter // tees the answer when the capture setting is on
		q  *request
	)
	if snap != nil && snap.cfg.Capture.on() {
		cw = &captureWriter{ResponseWriter: w, limit: snap.cfg.CaptureBodyCap}
		w = cw
	}
	defer func() {
		rec.DurationMs = time.Since(start).Milliseconds()
		rec.ModelAnswered = answeringModel(rec.Attempts)
		if cw != nil {
			rec.Capture = cw.capture(r, q, rec, snap.cfg.Capture, snap.secrets)
		}
		if s.sink != nil {
			s.sink.Log(rec)
		}
	}()
	shape := shapeOfRequest(r)
	fail := func(status int, msg string) {
		rec.Status, rec.Error = status, msg
		setCCMeshHeaders(w.Header(), "", 0)
		writeError(w, shape, status, msg)
	}
	if snap == nil {
		fail(http.StatusServiceUnavailable, "ccmesh is starting: no configuration loaded yet; retry in a moment")
		return
	}
	mark, internal := internalOf(r.Context())
	if internal {
		rec.Tag, rec.ResentFrom = mark.tag, resentFrom(r.Header)
	}
	routed, _, _ := conv.SpecOfRoute(r.URL.Path, r.URL.RawQuery)
	tokenOK := internal || clientTokenOK(r, snap.cfg.ClientToken, routed)
	// On a non-loopback listener a client that holds the token may name
	// the host however its network does; without the token the
	// DNS-rebinding guard decides (docs/BEHAVIOUR.md#safety).
	tokenSent := internal || (snap.cfg.ClientToken != "" && tokenOK)
	anyHost := snap.cfg.PublicListener && tokenSent
	if msg := guard(r, snap.cfg.AllowedHosts, anyHost, tokenSent); msg != "" {
		if p, ok := routeProtocol(r.URL.Path); ok {
			shape = p.Spec()
		}
		fail(http.StatusForbidden, msg)
		return
	}
	if !tokenOK {
		how := "x-api-key or Authorization: Bearer"
		if routed != nil {
			shape = routed // the path's protocol is known: its clients read its shape
			if routed.KeyHeader != "" && routed.KeyHeader != "X-Api-Key" {
				how = strings.ToLower(routed.KeyHeader) + ", x-api-key or Authorization: Bearer"
			}
		}
		fail(http.StatusUnauthorized, "ccmesh requires its client token: send it as "+how)
		return
	}
	if s.paused.Load() {
		fail(http.StatusServiceUnavailable, PausedMessage)
		return
	}
	if ms := modelsSpec(r.URL.Path); r.URL.Path == "/v1/models" || ms != nil {
		if ms != nil {
			shape = ms
		}
		if r.Method != http.MethodGet {
			fail(http.StatusMethodNotAllowed, "use GET for "+r.URL.Path)
			return
		}
		rec.Status = http.StatusOK
		s.serveModels(w, r, snap, ms)
		return
	}
	spec, inbound, ok := conv.SpecOfRoute(r.URL.Path, r.URL.RawQuery)
	if !ok {
		fail(http.StatusNotFound, "ccmesh does not serve "+r.URL.Path+": it serves "+servedPaths)
		return
	}
	proto := spec.Protocol
	rec.Protocol = proto
	if isWebSocketUpgrade(r) {
		// Codex CLI tries a WebSocket first where its provider block allows
		// it; answering at once sends it back to HTTP (docs/BEHAVIOUR.md#inbound-api).
		shape = proto.Spec()
		w.Header().Set("Connection", "close")
		fail(http.StatusUpgradeRequired, "ccmesh does not serve WebSockets on "+r.URL.Path+
			": set supports_websockets = false in the [model_providers.ccmesh] block of ~/.codex/config.toml (Connect Codex writes it) and Codex uses HTTP")
		return
	}
	if r.Method != http.MethodPost {
		shape = proto.Spec()
		fail(http.StatusMethodNotAllowed, "use POST for "+r.URL.Path)
		return
	}
	q = &request{s: s, snap: snap, w: w, r: r, rec: rec, proto: proto, pi: proto.Index(), shape: spec, inbound: inbound, start: start}
	q.serve()
	if q.abort {
		// As httputil.ReverseProxy does: net/http closes the connection
		// without finishing the response, and logs nothing. The deferred
		// record above is still written.
		panic(http.ErrAbortHandler)
	}
}

// isWebSocketUpgrade reports a request to switch the connection to a
// WebSocket (RFC 6455 §4.1).
func isWebSocketUpgrade(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket") &&
		slices.ContainsFunc(strings.Split(r.Header.Get("Connection"), ","), func(v string) bool {
			return strings.EqualFold(strings.TrimSpace(v), "upgrade")
		})
}

// routeProtocol is the protocol an inbound path belongs to (conv.Spec.Inbound).
func routeProtocol(path string) (Protocol, bool) {
	spec, _, ok := conv.SpecOfRoute(path, "")
	if !ok {
		return "", false
	}
	return spec.Protocol, true
}

// servedPaths names every inbound path, for the answer to any other.
var servedPaths = func() string {
	var paths []string
	for _, s := range translate.Specs {
		paths = append(paths, s.Inbound...)
		if s.RouteDoc != "" {
			paths = append(paths, s.RouteDoc)
		}
	}
	return strings.Join(paths, ", ") + " and /v1/models"
}()

// guard applies docs/BEHAVIOUR.md#safety's Host and browser checks; it
// returns why the request is refused, or "". Besides loopback names,
// allowed lists the Host values a non-loopback listener is reached by.
// tokenSent: the request carries the valid client token (or is ccmesh's
// own), which a web page cannot know.
func guard(r *http.Request, allowed []string, anyHost, tokenSent bool) string {
	if !anyHost && !IsLoopbackHost(r.Host) && !slices.Contains(allowed, r.Host) {
		return "ccmesh only answers requests addressed to a loopback host (localhost, 127.0.0.1, [::1]); Host " + quoteShort(r.Host) + " was refused to prevent DNS rebinding"
	}
	if from, ok := fromWebPage(r); ok && !tokenSent {
		return "ccmesh refuses requests sent by a web page (" + from + ") that carry no client token: any page you open could " +
			"otherwise spend your API keys. Call ccmesh from a program (CLI clients and SDKs send no Origin), or set a client " +
			"token in ccmesh's Settings and send it as x-api-key or Authorization: Bearer"
	}
	return ""
}

// fromWebPage reports whether a browser sent r on behalf of a page of
// another origin, and says which: an Origin other than ccmesh's own, or a
// Sec-Fetch-Site other than same-origin or none (none is the user's own
// navigation, which no page can cause). A page on any local port counts:
// loopback is where the user's other tools and dev servers run.
func fromWebPage(r *http.Request) (string, bool) {
	if o := r.Header.Get("Origin"); o != "" && !sameOrigin(o, r.Host) {
		return "origin " + quoteShort(o), true
	}
	switch site := r.Header.Get("Sec-Fetch-Site"); site {
	case "", "same-origin", "none":
		return "", false
	default:
		return "Sec-Fetch-Site " + quoteShort(site), true
	}
}

// sameOrigin reports whether Origin o names the server the request was
// addressed to (Host host).
func sameOrigin(o, host string) bool {
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Path != "" || u.User != nil {
		return false
	}
	return strings.EqualFold(u.Host, host)
}

func quoteShort(s string) string {
	if len(s) > 100 {
		s = s[:100] + "…"
	}
	return `"` + s + `"`
}

// IsLoopbackHost reports whether host (a Host header: name or IP, with or
// without a port) names the local machine: localhost, 127.0.0.0/8 or ::1.
func IsLoopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	host = strings.TrimSuffix(host, ".")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// clientTokenOK reports whether r carries ccmesh's client token: as
// x-api-key, Authorization: Bearer, or the key header or query member of
// spec, the protocol of its path (nil when the path names none), the way
// that protocol's clients send their key (conv.Spec.KeyHeader, KeyQuery).
func clientTokenOK(r *http.Request, token string, spec *conv.Spec) bool {
	if token == "" {
		return true
	}
	same := func(k string) bool { return k != "" && subtle.ConstantTimeCompare([]byte(k), []byte(token)) == 1 }
	if same(r.Header.Get("X-Api-Key")) || same(BearerToken(r.Header)) {
		return true
	}
	if spec == nil {
		return false
	}
	if spec.KeyHeader != "" && same(r.Header.Get(spec.KeyHeader)) {
		return true
	}
	return spec.KeyQuery != "" && same(r.URL.Query().Get(spec.KeyQuery))
}
