package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/ccmesh/ccmesh/internal/logcode"
	"github.com/ccmesh/ccmesh/proxy"
	"github.com/ccmesh/ccmesh/proxy/translate/conv"
	"github.com/ccmesh/ccmesh/store"
)

// TestResult is the outcome of the Test action (docs/BEHAVIOUR.md#health).
type TestResult struct {
	OK        bool      `json:"ok"`
	Status    int       `json:"status"`
	LatencyMs int64     `json:"latency_ms"`
	Message   string    `json:"message"`
	At        time.Time `json:"at"`
}

// loadTests reads the stored last test of every endpoint.
func (a *App) loadTests(ctx context.Context) error {
	rows, err := a.db.LoadEndpointTests(ctx)
	if err != nil {
		return err
	}
	a.testsMu.Lock()
	defer a.testsMu.Unlock()
	for _, t := range rows {
		a.tests[t.EndpointID] = TestResult{OK: t.OK, Status: t.Status, LatencyMs: t.LatencyMs, Message: t.Message, At: t.At}
	}
	return nil
}

// keepTest stores res as endpoint id's last test. Under writeMu, so that a
// delete of the endpoint comes either before (the store refuses the row)
// or after (reload forgets the result).
func (a *App) keepTest(ctx context.Context, id int64, res TestResult) error {
	a.writeMu.Lock()
	defer a.writeMu.Unlock()
	err := a.db.SaveEndpointTest(ctx, store.EndpointTest{EndpointID: id, At: res.At, OK: res.OK,
		Status: res.Status, LatencyMs: res.LatencyMs, Message: res.Message})
	switch {
	case errors.Is(err, store.ErrNotFound):
		return err // deleted while its test ran
	case err != nil:
		// Health still shows the result until the next start.
		a.log.Warn().Err(err).Str(logcode.Field, logcode.TestNotStored).Int64("endpoint", id).Msg("could not store the test result")
	}
	a.testsMu.Lock()
	a.tests[id] = res
	a.testsMu.Unlock()
	return nil
}

// forgetTests drops the results of endpoints that are gone; the database
// dropped their rows with them.
func (a *App) forgetTests(eps []store.Endpoint) {
	a.testsMu.Lock()
	defer a.testsMu.Unlock()
	for id := range a.tests {
		if !slices.ContainsFunc(eps, func(e store.Endpoint) bool { return e.ID == id }) {
			delete(a.tests, id)
		}
	}
}

const upstreamActionTimeout = 20 * time.Second

// client carries the admin side's upstream calls. It never follows a
// redirect: the request holds the endpoint's key, which must not go to the
// host a Location names (docs/BEHAVIOUR.md#safety); a 3xx is the answer.
func (a *App) client(e store.Endpoint) *http.Client {
	return &http.Client{
		Transport:     a.transportFor(e),
		Timeout:       upstreamActionTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// transportFor is the transport that reaches e the way the proxy's
// requests do: through its proxy_url's (docs/BEHAVIOUR.md#upstream-proxy),
// else the app's own.
func (a *App) transportFor(e store.Endpoint) http.RoundTripper {
	if e.ProxyURL == "" || a.proxy == nil {
		return a.upstream
	}
	return a.proxy.TransportFor(e.ProxyURL)
}

// upstreamReply is what call returns of an upstream's answer.
type upstreamReply struct {
	status   int
	location string // of a 3xx
	body     []byte // at most 1 MiB
}

// call sends one request to endpoint e the way the proxy would (URL rules,
// auth injection) and returns its answer.
func (a *App) call(ctx context.Context, e store.Endpoint, method, path string, query url.Values, body []byte) (upstreamReply, error) {
	pe := proxyConfig([]store.Endpoint{e}, DefaultSettings(), "").Endpoints[0]
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := proxy.NewUpstreamRequest(ctx, pe, method, path, rd)
	if err != nil {
		return upstreamReply{}, err
	}
	req.URL.RawQuery = query.Encode()
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := a.client(e).Do(req)
	if err != nil {
		return upstreamReply{}, err
	}
	defer resp.Body.Close()
	if err := proxy.ProxyAnswered(e.ProxyURL, resp.StatusCode); err != nil {
		return upstreamReply{}, err
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return upstreamReply{status: resp.StatusCode, location: resp.Header.Get("Location"), body: b}, err
}

// redirected says a 3xx was not followed, naming where it pointed.
func (r upstreamReply) redirected() (string, bool) {
	if r.status < 300 || r.status > 399 {
		return "", false
	}
	where := "elsewhere"
	if u, err := url.Parse(r.location); err == nil && u.Host != "" {
		where = "to " + u.Scheme + "://" + u.Host
	} else if r.location != "" {
		where = "to another path on the same host"
	}
	return fmt.Sprintf("the endpoint answered %d, a redirect %s; ccmesh does not follow redirects with your key: set base_url to the address that answers", r.status, where), true
}

// redact masks e's key and the client token in text an upstream may have
// echoed them in, before the admin side shows or stores it.
func (a *App) redact(e store.Endpoint, text string) string {
	secrets := []string{e.APIKey, proxy.ProxyPassword(e.ProxyURL), a.state.Load().Settings.ClientToken}
	for _, k := range e.Keys {
		secrets = append(secrets, k.Key)
	}
	return proxy.Redact(text, secrets...)
}

// testEndpoint sends GET /v1/models, or a 1-token message where the
// upstream does not serve the model list, and keeps the result for health,
// in memory and in the database (docs/BEHAVIOUR.md#health). With ?key=<id>
// it tests that key of the pool, and keeps the result for the key's health
// (in memory only).
func (a *App) testEndpoint(w http.ResponseWriter, r *http.Request) error {
	e, err := a.pathEndpoint(r)
	if err != nil {
		return err
	}
	id := e.ID
	keyID, err := a.testKey(r, &e)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(r.Context(), upstreamActionTimeout)
	defer cancel()
	start := time.Now()
	rep, err := a.call(ctx, e, http.MethodGet, specOf(e).Models(), nil, nil)
	if err == nil && (rep.status == http.StatusNotFound || rep.status == http.StatusMethodNotAllowed) {
		path, msg := minimalRequest(e)
		start = time.Now()
		rep, err = a.call(ctx, e, http.MethodPost, path, nil, msg)
	}
	res := TestResult{At: start, LatencyMs: time.Since(start).Milliseconds(), Status: rep.status}
	redirect, isRedirect := rep.redirected()
	switch {
	case errors.As(err, new(*proxy.ProxyError)):
		res.Message = proxyFailure(err)
	case err != nil:
		res.Message = "could not reach the endpoint: " + err.Error()
	case isRedirect:
		res.Message = redirect
	case rep.status >= 200 && rep.status < 300:
		res.OK = true
		res.Message = "ok"
	default:
		res.Message = fmt.Sprintf("the endpoint answered %d: %s", rep.status, head(rep.body, 300))
	}
	res.Message = a.redact(e, res.Message)
	if keyID != 0 {
		a.keyFails.keepTest(keyID, res)
	} else if err := a.keepTest(r.Context(), id, res); err != nil {
		return err
	}
	a.events.Publish("health", a.Health())
	writeJSON(w, http.StatusOK, res)
	return nil
}

// proxyFailure says that e's proxy, not e, failed.
func proxyFailure(err error) string {
	var pe *proxy.ProxyError
	errors.As(err, &pe)
	return pe.Error()
}

// minimalRequest is the Test probe's path and body in e's protocol
// (conv.Spec.Probe): its first model without a '*', or the protocol's own.
func minimalRequest(e store.Endpoint) (string, []byte) {
	spec := specOf(e)
	model := spec.ProbeModel
	for _, m := range e.Models {
		if !strings.Contains(m, "*") {
			model = m
			break
		}
	}
	return spec.Probe(model)
}

// specOf is e's protocol's entry in the table. One the table does not
// know gets the first protocol's, never used: a.call refuses such an
// endpoint before anything is sent.
func specOf(e store.Endpoint) *conv.Spec {
	if s := proxy.Protocol(e.Protocol).Spec(); s != nil {
		return s
	}
	return proxy.Protocols[0].Spec()
}

// head is at most n bytes of an upstream's text, cut on a character
// boundary (proxy.Head), marked when cut.
func head(b []byte, n int) string {
	b = bytes.TrimSpace(b)
	s := proxy.Head(b, n)
	if len(s) < len(b) {
		s += "…"
	}
	return s
}

// FetchModelsReply is POST /api/endpoints/{id}/fetch-models: the models
// the upstream lists, for the user to accept into the endpoint's models
// with an ordinary PUT; nothing is saved here (docs/BEHAVIOUR.md#health).
type FetchModelsReply struct {
	Models []string `json:"models"`
	// Truncated: the upstream lists more than maxFetchedModels models, or
	// more pages than maxModelPages; Models holds the first ones.
	Truncated bool `json:"truncated"`
}

const (
	// maxFetchedModels bounds the list: a relay listing every model of
	// every provider must not make a list no one can read or route by.
	maxFetchedModels = 2000
	// maxModelPages bounds the requests one fetch sends, whatever an
	// upstream says about having more.
	maxModelPages = 50
)

// fetchModels reads the upstream's model list (conv.Spec.Models), following
// its pages (Anthropic: has_more and last_id, asked for with after_id;
// OpenAI-style lists: one page unless they say has_more, then after), and
// returns the ids without saving them.
func (a *App) fetchModels(w http.ResponseWriter, r *http.Request) error {
	e, err := a.pathEndpoint(r)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(r.Context(), upstreamActionTimeout)
	defer cancel()
	q := url.Values{}
	spec := specOf(e)
	if spec.ModelsLimit[0] != "" {
		q.Set(spec.ModelsLimit[0], spec.ModelsLimit[1])
	}
	after := spec.ModelsAfter
	out := FetchModelsReply{Models: []string{}}
	seen := map[string]bool{}
pages:
	for page := 1; ; page++ {
		p, err := a.modelsPage(ctx, e, q, page)
		if err != nil {
			return err
		}
		for _, m := range p.IDs {
			if m == "" || seen[m] {
				continue
			}
			if len(out.Models) == maxFetchedModels {
				out.Truncated = true
				break pages
			}
			seen[m] = true
			out.Models = append(out.Models, m)
		}
		if !p.More {
			break
		}
		cursor := p.Cursor
		// More is said to exist, but there is no way to ask for it, or no
		// more requests may be sent: what came is a part.
		if cursor == "" || cursor == q.Get(after) || page == maxModelPages {
			out.Truncated = true
			break
		}
		q.Set(after, cursor)
	}
	if len(out.Models) == 0 {
		return &apiError{Status: http.StatusBadGateway, Code: "upstream_bad_models",
			Message: fmt.Sprintf("%s's %s did not list any models", e.Name, spec.Models())}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// modelsPage reads page number n of e's model list, with query q.
func (a *App) modelsPage(ctx context.Context, e store.Endpoint, q url.Values, n int) (conv.ModelPage, error) {
	spec := specOf(e)
	which := "GET " + spec.Models()
	if n > 1 {
		which = fmt.Sprintf("GET %s (page %d)", spec.Models(), n)
	}
	rep, err := a.call(ctx, e, http.MethodGet, spec.Models(), q, nil)
	if errors.As(err, new(*proxy.ProxyError)) {
		return conv.ModelPage{}, &apiError{Status: http.StatusBadGateway, Code: "upstream_unreachable",
			Message: a.redact(e, fmt.Sprintf("%s, %s: %s", e.Name, which, proxyFailure(err)))}
	}
	if err != nil {
		return conv.ModelPage{}, &apiError{Status: http.StatusBadGateway, Code: "upstream_unreachable",
			Message: a.redact(e, fmt.Sprintf("could not reach %s for %s: %v", e.Name, which, err))}
	}
	if redirect, ok := rep.redirected(); ok {
		return conv.ModelPage{}, &apiError{Status: http.StatusBadGateway, Code: "upstream_redirect",
			Message: a.redact(e, fmt.Sprintf("%s, %s: %s", e.Name, which, redirect))}
	}
	if rep.status != http.StatusOK {
		return conv.ModelPage{}, &apiError{Status: http.StatusBadGateway, Code: "upstream_error",
			Message: a.redact(e, fmt.Sprintf("%s answered %d to %s: %s", e.Name, rep.status, which, head(rep.body, 300)))}
	}
	p, err := spec.ReadModels(rep.body)
	if err != nil {
		return conv.ModelPage{}, &apiError{Status: http.StatusBadGateway, Code: "upstream_bad_models",
			Message: fmt.Sprintf("%s's answer to %s is not a model list: %v", e.Name, which, err)}
	}
	return p, nil
}
