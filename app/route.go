package app

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/ccmesh/ccmesh/proxy"
)

// routeHandler is GET /api/route?protocol=…&model=…: the proxy's own
// routing run dry for a request of that protocol and model — the routing
// rule that would decide it, candidates in the order they would be tried,
// every excluded endpoint with its reason — changing nothing
// (docs/BEHAVIOUR.md#routing). The rest of the query describes the
// sample request the rules look at: agent=main|subagent, thinking=1|0,
// input_tokens=<n>, tools=web_search, images=1, header=<Name>:<value>
// (repeatable).
func (a *App) routeHandler(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	p := proxy.Protocol(q.Get("protocol"))
	if !p.Valid() {
		return errBadRequest("bad_query", "protocol", "query protocol=%q must be one of %s", string(p), protocolList())
	}
	model := strings.TrimSpace(q.Get("model"))
	if model == "" {
		return errBadRequest("bad_query", "model", "name the model to route, e.g. model=claude-sonnet-4-5")
	}
	sm, err := routeSample(q)
	if err != nil {
		return err
	}
	sm.Protocol, sm.Model = p, model
	writeJSON(w, http.StatusOK, a.proxy.ExplainSample(sm))
	return nil
}

// routeSample reads the sample request's facts from a dry run's query.
func routeSample(q url.Values) (proxy.Sample, error) {
	var sm proxy.Sample
	if v := q.Get("agent"); v != "" {
		if sm.Agent = proxy.RuleAgent(v); !sm.Agent.Valid() {
			return sm, errBadRequest("bad_query", "agent", "query agent=%q must be one of %s", v, words(proxy.RuleAgents, ", "))
		}
	}
	for _, f := range []struct {
		name string
		dst  *bool
	}{{"thinking", &sm.Thinking}, {"images", &sm.Images}} {
		switch v := q.Get(f.name); v {
		case "", "0", "false":
		case "1", "true":
			*f.dst = true
		default:
			return sm, errBadRequest("bad_query", f.name, "query %s=%q must be 1 or 0", f.name, v)
		}
	}
	if v := q.Get("input_tokens"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return sm, errBadRequest("bad_query", "input_tokens", "query input_tokens=%q must be a count of tokens, 0 or more", v)
		}
		sm.InputTokens = n
	}
	switch v := q.Get("tools"); v {
	case "":
	case string(proxy.ToolsWebSearch):
		sm.WebSearch = true
	default:
		return sm, errBadRequest("bad_query", "tools", "query tools=%q must be one of %s", v, words(proxy.RuleToolKinds, ", "))
	}
	for _, h := range q["header"] {
		name, value, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(name) == "" {
			return sm, errBadRequest("bad_query", "header", "query header=%q must be Name:value", h)
		}
		if sm.Header == nil {
			sm.Header = http.Header{}
		}
		sm.Header.Add(strings.TrimSpace(name), strings.TrimSpace(value))
	}
	return sm, nil
}

func protocolList() string {
	var names []string
	for _, p := range proxy.Protocols {
		names = append(names, string(p))
	}
	return strings.Join(names, ", ")
}
