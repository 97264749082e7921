package app

import (
	"net/http"
	"strings"

	"github.com/ccmesh/ccmesh/proxy"
)

// routeHandler is GET /api/route?protocol=…&model=…: the proxy's own
// routing run dry for a request of that protocol and model — candidates
// in the order they would be tried, every excluded endpoint with its
// reason — changing nothing (docs/BEHAVIOUR.md#routing).
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
	writeJSON(w, http.StatusOK, a.proxy.Explain(p, model))
	return nil
}

func protocolList() string {
	var names []string
	for _, p := range proxy.Protocols {
		names = append(names, string(p))
	}
	return strings.Join(names, ", ")
}
