package app

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/ccmesh/ccmesh/app/capture"
	"github.com/ccmesh/ccmesh/store"
)

// Capture and resend (docs/BEHAVIOUR.md#capture-and-resend): the proxy
// keeps what a client sent and got when the capture setting says so; the
// log writer stores it, secrets removed (capture.Source); these handlers
// show it, resend it through the proxy, and write it as a curl command,
// with the package app/capture doing the work.

// CaptureReply is GET /api/logs/{id}/capture.
type CaptureReply struct {
	Request  CapturedRequest  `json:"request"`
	Response CapturedResponse `json:"response"`
}

// CapturedRequest is what the client sent: its headers (names in lower
// case, a repeated header's values joined by ", "), its body as text, and
// whether the body was cut at the cap.
type CapturedRequest struct {
	Headers   map[string]string `json:"headers"`
	Body      string            `json:"body"`
	Truncated bool              `json:"truncated"`
}

// CapturedResponse is what the client got: a stream's body is the raw SSE
// as it was sent.
type CapturedResponse struct {
	Status    int               `json:"status"`
	Headers   map[string]string `json:"headers"`
	Body      string            `json:"body"`
	Truncated bool              `json:"truncated"`
}

// ResendInput is POST /api/logs/{id}/resend's body; both fields are
// optional.
type ResendInput struct {
	// Endpoint names the endpoint to send to (x-ccmesh-endpoint); "" routes
	// the request as any other.
	Endpoint string `json:"endpoint,omitempty"`
	// Stream, when given, sets the body's "stream".
	Stream *bool `json:"stream,omitempty"`
}

// ResendReply says how the resent request went: its new log row (0 when
// the row was lost), the status and the endpoint that answered last.
type ResendReply struct {
	LogID    int64  `json:"log_id"`
	Status   int    `json:"status"`
	Endpoint string `json:"endpoint"`
}

// CurlReply is GET /api/logs/{id}/curl.
type CurlReply struct {
	Command string `json:"command"`
}

func (a *App) getCapture(w http.ResponseWriter, r *http.Request) error {
	id, err := logID(r)
	if err != nil {
		return err
	}
	c, err := capture.Load(r.Context(), a.db, id, a.token, false)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, CaptureReply{
		Request: CapturedRequest{Headers: capture.FlatHeader(c.RequestHeader), Body: capture.Text(c.RequestBody),
			Truncated: c.RequestTruncated},
		Response: CapturedResponse{Status: c.Status, Headers: capture.FlatHeader(c.ResponseHeader),
			Body: capture.Text(c.ResponseBody), Truncated: c.ResponseTruncated},
	})
	return nil
}

func logID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, errBadRequest("bad_id", "id", "%q is not a request log id (a positive integer)", r.PathValue("id"))
	}
	return id, nil
}

func (a *App) resend(w http.ResponseWriter, r *http.Request) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	var in ResendInput
	if len(bytes.TrimSpace(body)) > 0 {
		if err := decodeBody(body, &in); err != nil {
			return err
		}
	}
	if in.Endpoint != "" {
		i := slices.IndexFunc(a.state.Load().Endpoints, func(e store.Endpoint) bool { return e.Name == in.Endpoint })
		if i < 0 {
			return &apiError{Status: http.StatusUnprocessableEntity, Code: "unknown_endpoint", Field: "endpoint",
				Message: fmt.Sprintf("no endpoint is named %q", in.Endpoint)}
		}
	}
	id, err := logID(r)
	if err != nil {
		return err
	}
	out, err := capture.Resend(r.Context(), a.db, a.proxy, id, a.token, in.Endpoint, in.Stream)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ResendReply(out))
	return nil
}

func (a *App) curlCommand(w http.ResponseWriter, r *http.Request) error {
	id, err := logID(r)
	if err != nil {
		return err
	}
	cmd, err := capture.CurlCommand(r.Context(), a.db, id, a.token, a.ProxyURL())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, CurlReply{Command: cmd})
	return nil
}
