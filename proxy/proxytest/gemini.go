package proxytest

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Gemini is a fake of the Gemini API (v1beta): generateContent,
// streamGenerateContent (alt=sse and the JSON-array form), countTokens and
// the model list with paging, behind x-goog-api-key, ?key= or Bearer auth,
// with errors in Gemini's shape. In Gemini-3 mode it signs the function
// calls it makes and refuses a later turn that returns one without its
// signature, as Gemini 3 does.
type Gemini struct {
	*httptest.Server
	key string

	mu       sync.Mutex
	queue    []GeminiReply
	fallback GeminiReply
	models   []string
	gemini3  bool
	signed   map[string]string // signature given, by call (name and args)
	given    map[string]bool   // every signature given
	nextSig  int
	nextResp int
	reqs     []Request
}

// GeminiModels are the models a new fake lists and serves.
var GeminiModels = []string{"gemini-2.5-flash", "gemini-2.5-pro", "gemini-3-flash-preview", "gemini-3-pro-preview"}

// NewGemini starts a fake Gemini API that accepts key (any credential when
// key is ""), answers text when its queue is empty, and is closed at the
// end of the test.
func NewGemini(t testing.TB, key string) *Gemini {
	t.Helper()
	g := &Gemini{
		key:      key,
		fallback: GeminiText("Hello from ", "the fake Gemini."),
		models:   append([]string(nil), GeminiModels...),
		signed:   map[string]string{},
		given:    map[string]bool{},
	}
	g.Server = httptest.NewServer(http.HandlerFunc(g.serve))
	t.Cleanup(g.Close)
	return g
}

// Push queues replies, answered in order by generate requests before the
// default.
func (g *Gemini) Push(rs ...GeminiReply) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.queue = append(g.queue, rs...)
}

// SetDefault replaces the reply used when the queue is empty.
func (g *Gemini) SetDefault(r GeminiReply) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.fallback = r
}

// SetModels replaces the models listed and served (names without "models/").
func (g *Gemini) SetModels(names ...string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.models = append([]string(nil), names...)
}

// SetGemini3 turns Gemini-3 mode on or off: the first functionCall of each
// answer gets a thoughtSignature, and a request whose current turn returns a
// model functionCall without a valid one is refused with 400.
func (g *Gemini) SetGemini3(on bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.gemini3 = on
}

// Requests returns a copy of the requests received so far.
func (g *Gemini) Requests() []Request {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]Request(nil), g.reqs...)
}

// Count is the number of requests received.
func (g *Gemini) Count() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.reqs)
}

var geminiPath = regexp.MustCompile(`^/v1beta/models/([^/:]+)(?::(generateContent|streamGenerateContent|countTokens))?$`)

func (g *Gemini) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	g.mu.Lock()
	g.reqs = append(g.reqs, Request{Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery, Header: r.Header.Clone(), Body: body})
	g.mu.Unlock()
	if fault := g.auth(r); fault != nil {
		Serve(w, r, *fault)
		return
	}
	if r.URL.Path == "/v1beta/models" && r.Method == http.MethodGet {
		g.list(w, r)
		return
	}
	m := geminiPath.FindStringSubmatch(r.URL.Path)
	if m == nil {
		Serve(w, r, GeminiError(http.StatusNotFound, "NOT_FOUND", "Requested entity was not found."))
		return
	}
	model, method := m[1], m[2]
	if !g.knows(model) {
		Serve(w, r, GeminiModelNotFound(model))
		return
	}
	switch {
	case method == "" && r.Method == http.MethodGet:
		Serve(w, r, Response{Body: js(geminiModelJSON(model))})
	case method == "" || r.Method != http.MethodPost:
		Serve(w, r, GeminiError(http.StatusMethodNotAllowed, "INVALID_ARGUMENT", "Method not allowed."))
	case method == "countTokens":
		g.countTokens(w, r, body)
	default:
		g.generate(w, r, model, method == "streamGenerateContent", body)
	}
}

// auth checks the credential in the order the API reads them: ?key=, then
// x-goog-api-key, then Authorization: Bearer (which the real API takes only
// as an OAuth token; gateways, and this fake, take the key there too).
func (g *Gemini) auth(r *http.Request) *Response {
	var fault Response
	key, bearer := r.URL.Query().Get("key"), ""
	if key == "" {
		key = r.Header.Get("x-goog-api-key")
	}
	if key == "" {
		if v, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
			bearer = strings.TrimSpace(v)
		}
	}
	switch {
	case key == "" && bearer == "":
		fault = GeminiPermissionDenied()
	case g.key == "":
		return nil
	case key != "" && key != g.key:
		fault = GeminiKeyInvalid()
	case key == "" && bearer != g.key:
		fault = GeminiUnauthenticated()
	default:
		return nil
	}
	return &fault
}

func (g *Gemini) knows(model string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, m := range g.models {
		if m == model {
			return true
		}
	}
	return false
}

func geminiModelJSON(name string) map[string]any {
	return map[string]any{
		"name": "models/" + name, "version": "001", "displayName": name,
		"inputTokenLimit": 1048576, "outputTokenLimit": 65536,
		"supportedGenerationMethods": []string{"generateContent", "countTokens"},
		"thinking":                   true,
	}
}

// list answers GET /v1beta/models: pageSize (default 50, at most 1000) and
// an opaque pageToken, nextPageToken while more remain.
func (g *Gemini) list(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	models := append([]string(nil), g.models...)
	g.mu.Unlock()
	q := r.URL.Query()
	size := 50
	if v := q.Get("pageSize"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			Serve(w, r, GeminiError(http.StatusBadRequest, "INVALID_ARGUMENT", "Invalid value at 'page_size' (TYPE_INT32), \""+v+"\""))
			return
		}
		if n > 0 {
			size = min(n, 1000)
		}
	}
	start := 0
	if tok := q.Get("pageToken"); tok != "" {
		n, err := decodePageToken(tok)
		if err != nil || n > len(models) {
			Serve(w, r, GeminiError(http.StatusBadRequest, "INVALID_ARGUMENT", "Invalid page token."))
			return
		}
		start = n
	}
	end := min(start+size, len(models))
	page := []any{}
	for _, m := range models[start:end] {
		page = append(page, geminiModelJSON(m))
	}
	out := map[string]any{"models": page}
	if end < len(models) {
		out["nextPageToken"] = encodePageToken(end)
	}
	Serve(w, r, Response{Body: js(out)})
}

func encodePageToken(offset int) string {
	return base64.RawURLEncoding.EncodeToString([]byte("offset:" + strconv.Itoa(offset)))
}

func decodePageToken(tok string) (int, error) {
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		return 0, fmt.Errorf("decode page token: %w", err)
	}
	v, ok := strings.CutPrefix(string(b), "offset:")
	if !ok {
		return 0, fmt.Errorf("decode page token: no offset in %q", b)
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("decode page token: %w", err)
	}
	return n, nil
}

// geminiContent and geminiPart read what the fake checks in a request.
type geminiContent struct {
	Role  string       `json:"role"`
	Parts []geminiPart `json:"parts"`
}

type geminiPart struct {
	Text             *string         `json:"text"`
	FunctionCall     json.RawMessage `json:"functionCall"`
	FunctionResponse json.RawMessage `json:"functionResponse"`
	InlineData       json.RawMessage `json:"inlineData"`
	ThoughtSignature string          `json:"thoughtSignature"`
}

type geminiRequest struct {
	Contents []geminiContent `json:"contents"`
}

func parseGeminiRequest(body []byte) (geminiRequest, *Response) {
	var req geminiRequest
	if err := json.Unmarshal(body, &req); err != nil {
		fault := GeminiError(http.StatusBadRequest, "INVALID_ARGUMENT", "Invalid JSON payload received. "+err.Error())
		return req, &fault
	}
	if len(req.Contents) == 0 {
		fault := GeminiError(http.StatusBadRequest, "INVALID_ARGUMENT", "* GenerateContentRequest.contents: contents is not specified\n")
		return req, &fault
	}
	for _, c := range req.Contents {
		if c.Role != "" && c.Role != "user" && c.Role != "model" {
			fault := GeminiError(http.StatusBadRequest, "INVALID_ARGUMENT", "Please use a valid role: user, model.")
			return req, &fault
		}
	}
	return req, nil
}

// countTokens answers {contents} or {generateContentRequest: {contents}}.
func (g *Gemini) countTokens(w http.ResponseWriter, r *http.Request, body []byte) {
	var wrapped struct {
		GenerateContentRequest json.RawMessage `json:"generateContentRequest"`
	}
	if json.Unmarshal(body, &wrapped) == nil && wrapped.GenerateContentRequest != nil {
		body = wrapped.GenerateContentRequest
	}
	req, fault := parseGeminiRequest(body)
	if fault != nil {
		Serve(w, r, *fault)
		return
	}
	n := estimateTokens(req.Contents)
	Serve(w, r, Response{Body: js(map[string]any{
		"totalTokens":         n,
		"promptTokensDetails": []any{map[string]any{"modality": "TEXT", "tokenCount": n}},
	})})
}

func (g *Gemini) generate(w http.ResponseWriter, r *http.Request, model string, stream bool, body []byte) {
	req, fault := parseGeminiRequest(body)
	if fault == nil {
		fault = g.checkSignatures(req.Contents)
	}
	if fault != nil {
		Serve(w, r, *fault)
		return
	}
	reply, id := g.nextReply()
	if reply.Fault != nil {
		Serve(w, r, *reply.Fault)
		return
	}
	reply = g.gemini3Text(reply)
	usage := reply.Usage
	out, thoughts := replyTokens(reply)
	if usage.Prompt == 0 {
		usage.Prompt = estimateTokens(req.Contents)
	}
	if usage.Candidates == 0 {
		usage.Candidates, usage.Thoughts = out, max(usage.Thoughts, thoughts)
	}
	chunks := geminiChunks(reply, model, id, usage, g.signer(reply))
	if !stream {
		Serve(w, r, Response{Body: js(geminiMerged(chunks))})
		return
	}
	frames := reply.Raw
	if frames == nil {
		for _, c := range chunks {
			frames = append(frames, js(c))
		}
	}
	writeGeminiStream(w, r, frames, r.URL.Query().Get("alt") == "sse", reply.CutAfter)
}

func (g *Gemini) nextReply() (GeminiReply, string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.nextResp++
	id := fmt.Sprintf("fake-gemini-%d", g.nextResp)
	if len(g.queue) > 0 {
		r := g.queue[0]
		g.queue = g.queue[1:]
		return r, id
	}
	return g.fallback, id
}

// signer gives, in Gemini-3 mode, the first functionCall of reply a new
// signature and remembers it by the call, as Gemini 3 signs only the first
// of parallel calls; an answer without a call gets its signature on its last
// part (an empty text part, see gemini3Text).
func (g *Gemini) signer(reply GeminiReply) func(int, *GeminiCall) string {
	g.mu.Lock()
	on := g.gemini3
	g.mu.Unlock()
	target := len(reply.Parts) - 1
	for i, p := range reply.Parts {
		if p.Call != nil {
			target = i
			break
		}
	}
	return func(i int, call *GeminiCall) string {
		if !on || i != target {
			return ""
		}
		g.mu.Lock()
		defer g.mu.Unlock()
		g.nextSig++
		sum := sha256.Sum256(fmt.Appendf(nil, "fake-gemini-signature-%d", g.nextSig))
		sig := base64.StdEncoding.EncodeToString(sum[:])
		g.given[sig] = true
		if call != nil {
			args, _ := json.Marshal(call.Args)
			g.signed[callKey(call.Name, args)] = sig
		}
		return sig
	}
}

// gemini3Text adds, in Gemini-3 mode, the empty text part that ends a
// Gemini 3 answer without a call and carries its signature (as the
// recording proxy/testdata/realstreams/gemini/text-signature-on-empty-part
// shows).
func (g *Gemini) gemini3Text(reply GeminiReply) GeminiReply {
	g.mu.Lock()
	on := g.gemini3
	g.mu.Unlock()
	for _, p := range reply.Parts {
		if p.Call != nil {
			return reply
		}
	}
	if on && len(reply.Parts) > 0 {
		reply.Parts = append(append([]GeminiPart(nil), reply.Parts...), GeminiPart{})
	}
	return reply
}

func callKey(name string, args json.RawMessage) string {
	var v any
	if len(args) > 0 && json.Unmarshal(args, &v) == nil {
		args, _ = json.Marshal(v) // canonical: sorted keys
	} else {
		args = []byte("{}")
	}
	return name + "\x00" + string(args)
}

// checkSignatures refuses, in Gemini-3 mode, a request whose current turn
// (everything after the last user text) holds a model content whose first
// functionCall has no signature, or one this fake did not give it. The
// dummy signatures that disable the check are let through.
func (g *Gemini) checkSignatures(contents []geminiContent) *Response {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.gemini3 {
		return nil
	}
	start := 0
	for i, c := range contents {
		if c.Role != "model" && hasUserText(c) {
			start = i + 1
		}
	}
	for i := start; i < len(contents); i++ {
		if contents[i].Role != "model" {
			continue
		}
		for _, p := range contents[i].Parts {
			if p.FunctionCall == nil {
				continue
			}
			var call struct {
				Name string          `json:"name"`
				Args json.RawMessage `json:"args"`
			}
			_ = json.Unmarshal(p.FunctionCall, &call)
			if fault := g.checkSignature(call.Name, call.Args, p.ThoughtSignature, i+1); fault != nil {
				return fault
			}
			break // only the first of parallel calls carries one
		}
	}
	return nil
}

func (g *Gemini) checkSignature(name string, args json.RawMessage, sig string, position int) *Response {
	var fault Response
	want, known := g.signed[callKey(name, args)]
	switch {
	case sig == "":
		fault = geminiMissingSignature(name, position)
	case isDummySignature(sig):
		return nil
	case !g.given[sig], known && sig != want:
		fault = geminiCorruptedSignature()
	default:
		return nil
	}
	return &fault
}

func hasUserText(c geminiContent) bool {
	for _, p := range c.Parts {
		if p.Text != nil {
			return true
		}
	}
	return false
}

// writeGeminiStream sends chunks as SSE (alt=sse) or as one JSON array
// whose elements are flushed as made, cut after cutAfter chunks if set.
func writeGeminiStream(w http.ResponseWriter, r *http.Request, chunks []string, sse bool, cutAfter int) {
	rc := http.NewResponseController(w)
	if sse {
		w.Header().Set("Content-Type", "text/event-stream")
	} else {
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	}
	w.WriteHeader(http.StatusOK)
	_ = rc.Flush()
	for i, c := range chunks {
		if cutAfter > 0 && i == cutAfter {
			panic(http.ErrAbortHandler)
		}
		if _, err := io.WriteString(w, geminiFrame(i, c, sse)); err != nil || r.Context().Err() != nil {
			return
		}
		_ = rc.Flush()
	}
	if cutAfter > 0 && cutAfter >= len(chunks) {
		panic(http.ErrAbortHandler)
	}
	if !sse && len(chunks) == 0 {
		_, _ = io.WriteString(w, "[")
	}
	if !sse {
		_, _ = io.WriteString(w, "]")
	}
}
