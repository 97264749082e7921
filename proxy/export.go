package proxy

import (
	"context"
	"fmt"
	"io"
	"net/http"
)

// WriteError answers r with an error ccmesh produced itself, in the shape of
// the request's protocol (Claude's when it carries anthropic-version).
func WriteError(w http.ResponseWriter, r *http.Request, status int, msg string) {
	writeError(w, shapeOfRequest(r), status, msg)
}

// NewUpstreamRequest builds a request to endpoint e the way the proxy
// forwards one: docs/BEHAVIOUR.md#endpoints's URL rule and the endpoint's auth. The admin
// actions Test and Fetch models use it.
func NewUpstreamRequest(ctx context.Context, e Endpoint, method, path string, body io.Reader) (*http.Request, error) {
	ce, err := compileEndpoint(e)
	if err != nil {
		return nil, fmt.Errorf("endpoint %s: %w", e.Name, err)
	}
	req, err := http.NewRequestWithContext(ctx, method, ce.upstreamURL(path, ""), body)
	if err != nil {
		return nil, fmt.Errorf("endpoint %s: %w", e.Name, err)
	}
	setEndpointAuth(req.Header, ce)
	protocolHeaders(req.Header, ce.spec)
	return req, nil
}
