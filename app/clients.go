package app

import (
	"crypto/sha256"
	"errors"
	"net/http"
	"os"

	"github.com/ccmesh/ccmesh/app/clients"
	"github.com/ccmesh/ccmesh/app/probe"
)

// Connect Claude Code, Codex and Gemini CLI (docs/BEHAVIOUR.md#admin-api): the
// clients and their files are app/clients'; the app serves each client's
// preview and apply routes and gives the clients what they need of it.

// The API's replies, under the names the rest of the app uses.
type (
	ClaudeCode = clients.ClaudeCode
	Codex      = clients.Codex
	GeminiCLI  = clients.GeminiCLI
)

// clientHost is the App as the clients see it.
type clientHost struct{ a *App }

func (h clientHost) ProxyURL() string    { return h.a.ProxyURL() }
func (h clientHost) ClientToken() string { return h.a.state.Load().Settings.ClientToken }

// Home is the user's home directory, Options.HomeDir in tests.
func (h clientHost) Home() (string, error) {
	if h.a.opts.HomeDir != "" {
		return h.a.opts.HomeDir, nil
	}
	return os.UserHomeDir()
}

// Getenv reads the environment only when the home is the user's: a test's
// home keeps the user's own client files out of reach.
func (h clientHost) Getenv(name string) string {
	if h.a.opts.HomeDir != "" {
		return ""
	}
	return os.Getenv(name)
}

// ExportLines are the shell lines that point Claude Code at this proxy;
// the UI and the tray copy them (clients.ExportLines).
func (a *App) ExportLines() string { return clients.ExportLines(clientHost{a}) }

// clientPreview is GET of a client's route: the change Connect would make.
func (a *App) clientPreview(c clients.Client) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		shown, err := c.Show(clientHost{a})
		if err != nil {
			return clientErr(err)
		}
		writeJSON(w, http.StatusOK, shown)
		return nil
	}
}

// clientApply is POST of a client's route/apply: the change the preview
// named by its hash, written (clients.Client.Apply).
func (a *App) clientApply(c clients.Client) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		hash, err := planHashFrom(r, c.Preview)
		if err != nil {
			return err
		}
		reply, err := c.Apply(clientHost{a}, hash)
		if err != nil {
			return clientErr(err)
		}
		writeJSON(w, http.StatusOK, reply)
		return nil
	}
}

// clientErr answers a file ccmesh will not read or change as a 409 that
// says what to do, and a change of several files only partly written as a
// 500 that names what was written; any other error is the API's as it is.
func clientErr(err error) error {
	if c, ok := errors.AsType[*clients.Conflict](err); ok {
		return &apiError{Status: http.StatusConflict, Code: c.Code, Field: c.Field, Message: c.Message}
	}
	if p, ok := errors.AsType[*clients.PartialWrite](err); ok {
		return &apiError{Status: http.StatusInternalServerError, Code: "client_config_partly_written", Message: p.Error()}
	}
	return err
}

// planHashFrom reads the {"hash":"…"} body an apply call sends; what
// names the endpoint that gave the preview.
func planHashFrom(r *http.Request, what string) (string, error) {
	var body struct {
		Hash string `json:"hash"`
	}
	if r.ContentLength != 0 {
		if err := decodeJSON(r, &body); err != nil {
			return "", err
		}
	}
	switch {
	case body.Hash == "":
		return "", errBadRequest("hash_required", "hash", "send the hash of the change %s showed, as {\"hash\":\"…\"}", what)
	case !isSHA256Hex(body.Hash):
		return "", errBadRequest("bad_hash", "hash", "hash %q is not the hash %s gives (64 hex digits)", probe.Head([]byte(body.Hash), 80), what)
	}
	return body.Hash, nil
}

func isSHA256Hex(s string) bool {
	if len(s) != 2*sha256.Size {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !('0' <= s[i] && s[i] <= '9' || 'a' <= s[i] && s[i] <= 'f') {
			return false
		}
	}
	return true
}
