package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/ccmesh/ccmesh/proxy"
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

const upstreamActionTimeout = 20 * time.Second

func (a *App) client() *http.Client {
	return &http.Client{Transport: a.opts.Transport, Timeout: upstreamActionTimeout}
}

// call sends one request to endpoint e the way the proxy would (URL rules,
// auth injection) and returns status and at most 1 MiB of body.
func (a *App) call(ctx context.Context, e store.Endpoint, method, path string, body []byte) (int, []byte, error) {
	pe := proxyConfig([]store.Endpoint{e}, DefaultSettings(), "").Endpoints[0]
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := proxy.NewUpstreamRequest(ctx, pe, method, path, rd)
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := a.client().Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, b, err
}

// testEndpoint sends GET /v1/models, or a 1-token message where the
// upstream does not serve the model list, and keeps the result for health.
func (a *App) testEndpoint(w http.ResponseWriter, r *http.Request) error {
	e, err := a.pathEndpoint(r)
	if err != nil {
		return err
	}
	id := e.ID
	ctx, cancel := context.WithTimeout(r.Context(), upstreamActionTimeout)
	defer cancel()
	start := time.Now()
	status, body, err := a.call(ctx, e, http.MethodGet, "/v1/models", nil)
	if err == nil && (status == http.StatusNotFound || status == http.StatusMethodNotAllowed) {
		path, msg := minimalRequest(e)
		start = time.Now()
		status, body, err = a.call(ctx, e, http.MethodPost, path, msg)
	}
	res := TestResult{At: start, LatencyMs: time.Since(start).Milliseconds(), Status: status}
	switch {
	case err != nil:
		res.Message = "could not reach the endpoint: " + err.Error()
	case status >= 200 && status < 300:
		res.OK = true
		res.Message = "ok"
	default:
		res.Message = fmt.Sprintf("the endpoint answered %d: %s", status, head(body, 300))
	}
	a.testsMu.Lock()
	a.tests[id] = res
	a.testsMu.Unlock()
	a.events.Publish("health", a.Health())
	writeJSON(w, http.StatusOK, res)
	return nil
}

func minimalRequest(e store.Endpoint) (string, []byte) {
	model := "claude-haiku-4-5"
	protocol := proxy.Protocol(e.Protocol)
	if protocol != proxy.ProtocolAnthropic {
		model = "gpt-4o-mini"
	}
	for _, m := range e.Models {
		if !strings.Contains(m, "*") {
			model = m
			break
		}
	}
	mj, _ := json.Marshal(model)
	switch protocol {
	case proxy.ProtocolOpenAIChat:
		return "/v1/chat/completions", fmt.Appendf(nil, `{"model":%s,"max_tokens":1,"messages":[{"role":"user","content":"ping"}]}`, mj)
	case proxy.ProtocolOpenAIResponses:
		return "/v1/responses", fmt.Appendf(nil, `{"model":%s,"max_output_tokens":16,"input":"ping"}`, mj)
	}
	return "/v1/messages", fmt.Appendf(nil, `{"model":%s,"max_tokens":1,"messages":[{"role":"user","content":"ping"}]}`, mj)
}

func head(b []byte, n int) string {
	s := strings.TrimSpace(string(b))
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// fetchModels fills the endpoint's models from the upstream's /v1/models
// (Anthropic and OpenAI both answer {"data":[{"id":…}]}).
func (a *App) fetchModels(w http.ResponseWriter, r *http.Request) error {
	e, err := a.pathEndpoint(r)
	if err != nil {
		return err
	}
	id := e.ID
	ctx, cancel := context.WithTimeout(r.Context(), upstreamActionTimeout)
	defer cancel()
	status, body, err := a.call(ctx, e, http.MethodGet, "/v1/models", nil)
	if err != nil {
		return &apiError{Status: http.StatusBadGateway, Code: "upstream_unreachable",
			Message: fmt.Sprintf("could not reach %s: %v", e.Name, err)}
	}
	if status != http.StatusOK {
		return &apiError{Status: http.StatusBadGateway, Code: "upstream_error",
			Message: fmt.Sprintf("%s answered %d to GET /v1/models: %s", e.Name, status, head(body, 300))}
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &list); err != nil || len(list.Data) == 0 {
		return &apiError{Status: http.StatusBadGateway, Code: "upstream_bad_models",
			Message: fmt.Sprintf("%s's /v1/models did not list any models", e.Name)}
	}
	models := make([]string, 0, len(list.Data))
	for _, m := range list.Data {
		if m.ID != "" && !slices.Contains(models, m.ID) {
			models = append(models, m.ID)
		}
	}
	var updated store.Endpoint
	err = a.mutate(r.Context(), func(ctx context.Context) error {
		updated, err = a.db.UpdateEndpoint(ctx, id, store.EndpointPatch{Models: &models})
		return err
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"models": models, "endpoint": reply(updated)})
	return nil
}
