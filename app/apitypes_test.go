package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/ccmesh/ccmesh/app/backup"
	"github.com/ccmesh/ccmesh/app/balance"
	"github.com/ccmesh/ccmesh/app/health"
	"github.com/ccmesh/ccmesh/breaker"
	"github.com/ccmesh/ccmesh/internal/tsgen"
	"github.com/ccmesh/ccmesh/proxy"
	"github.com/ccmesh/ccmesh/store"
)

// The frontend's admin API types are generated from the Go types below into
// frontendTypesFile; frontend/src/api/types.ts re-exports them under the
// names the components use. TestFrontendTypes fails when the file is out of
// date; `make types` rewrites it.

const frontendTypesFile = "../frontend/src/api/types.gen.ts"

// Bodies that handlers write as maps. Each mirrors its handler exactly;
// TestFrontendTypesMirrors checks them against the handlers' replies.
type (
	// tsLogPage is GET /api/logs (listLogs).
	tsLogPage struct {
		Items      []store.RequestLog `json:"items"`
		NextBefore int64              `json:"next_before"` // 0 on the last page
	}
	// tsStats is GET /api/stats (statsHandler).
	tsStats struct {
		Buckets []StatBucket `json:"buckets"`
	}
	// tsClaudeCodeApplied is POST /api/claude-code/apply (clientFile.applyHandler).
	tsClaudeCodeApplied struct {
		SettingsPath string `json:"settings_path"`
		BackupPath   string `json:"backup_path"` // "" when there was no file to back up
	}
	// tsPresets is GET /api/presets (presetsHandler).
	tsPresets struct {
		Presets []Preset `json:"presets"`
	}
	// tsCodexApplied is POST /api/codex/apply (clientFile.applyHandler).
	tsCodexApplied struct {
		ConfigPath string `json:"config_path"`
		BackupPath string `json:"backup_path"` // "" when there was no file to back up
		Written    string `json:"written"`     // config_path again
		Backup     string `json:"backup"`      // backup_path again
	}
	// tsGeminiCLIApplied is POST /api/gemini-cli/apply (clients.Client.Apply).
	tsGeminiCLIApplied struct {
		EnvPath            string `json:"env_path"`
		EnvBackupPath      string `json:"env_backup_path"` // "" when there was no file to back up
		SettingsPath       string `json:"settings_path"`
		SettingsBackupPath string `json:"settings_backup_path"` // "" when there was no file to back up
	}
	// tsErrorBody is every error reply (writeErr).
	tsErrorBody struct {
		Error apiError `json:"error"`
	}
)

// wordsOf lists the words a breaker enum marshals as, from 0 up to the
// first value its String method does not know.
func wordsOf[T interface {
	~uint8
	String() string
}]() []string {
	var out []string
	for i := 0; i < 256; i++ {
		s := T(i).String()
		if s == "unknown" {
			break
		}
		out = append(out, s)
	}
	return out
}

// constsOf lists the values of the string constants declared with type t
// in its package's source, in source order: the closed sets that have no
// list of their own in Go.
func constsOf(t reflect.Type) ([]string, error) {
	dir, ok := strings.CutPrefix(t.PkgPath(), "github.com/ccmesh/ccmesh/")
	if !ok {
		return nil, fmt.Errorf("%s is not a package of this module", t.PkgPath())
	}
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join("..", dir, "*.go"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != t.Name() {
					continue
				}
				for _, v := range vs.Values {
					lit, ok := v.(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						return nil, fmt.Errorf("%s: a %s constant that is not a string literal", fset.Position(v.Pos()), t)
					}
					s, err := strconv.Unquote(lit.Value)
					if err != nil {
						return nil, err
					}
					out = append(out, s)
				}
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no constants of type %s in ../%s", t, dir)
	}
	return out, nil
}

func stringsOf[T ~string](vs []T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}

// frontendTypes renders the TypeScript types of the admin API.
func frontendTypes() ([]byte, error) {
	g := tsgen.New("make types (app/apitypes_test.go)")

	// The closed sets of words, with their values from Go.
	protocol, auth, strategy := reflect.TypeFor[proxy.Protocol](), reflect.TypeFor[proxy.AuthMode](), reflect.TypeFor[proxy.Strategy]()
	g.Enum(protocol, stringsOf(proxy.Protocols)...)
	g.Enum(auth, stringsOf(proxy.AuthModes)...)
	g.Enum(strategy, stringsOf(proxy.Strategies)...)
	g.Enum(reflect.TypeFor[proxy.CaptureMode](), stringsOf(proxy.CaptureModes)...)
	g.Enum(reflect.TypeFor[proxy.RuleAgent](), stringsOf(proxy.RuleAgents)...)
	g.Enum(reflect.TypeFor[proxy.RuleTools](), stringsOf(proxy.RuleToolKinds)...)
	mismatch := reflect.TypeFor[proxy.OnModelMismatch]()
	g.Enum(mismatch, append([]string{""}, stringsOf(proxy.MismatchModes)...)...)
	streamEnd, errorType, exclusion := reflect.TypeFor[proxy.StreamEnd](), reflect.TypeFor[proxy.ErrorType](), reflect.TypeFor[proxy.Exclusion]()
	g.Enum(reflect.TypeFor[proxy.Translation](), stringsOf(proxy.Translations())...)
	for _, e := range []struct {
		t     reflect.Type
		empty bool // "" is a value too
	}{{streamEnd, true}, {errorType, true}, {exclusion, false}, {reflect.TypeFor[proxy.HedgePart](), false}, {reflect.TypeFor[proxy.Adjustment](), false}} {
		values, err := constsOf(e.t)
		if err != nil {
			return nil, err
		}
		if e.empty {
			values = append([]string{""}, values...)
		}
		g.Enum(e.t, values...)
	}
	state, reason, cause := reflect.TypeFor[breaker.State](), reflect.TypeFor[breaker.Reason](), reflect.TypeFor[breaker.Cause]()
	g.Enum(state, wordsOf[breaker.State]()...)
	g.Enum(reason, wordsOf[breaker.Reason]()...)
	g.Enum(cause, wordsOf[breaker.Cause]()...)
	g.Enum(reflect.TypeFor[breaker.Kind](), wordsOf[breaker.Kind]()...)
	// Without a package name to tell them apart, these names would say too little.
	g.Add("BreakerState", state)
	g.Add("BreakerReason", reason)
	g.Add("BreakerCause", cause)
	g.Add("AttemptOutcome", reflect.TypeFor[breaker.Kind]())
	var statuses []string
	for _, enabled := range []bool{true, false} {
		for i := range wordsOf[breaker.State]() {
			statuses = append(statuses, health.Status(enabled, breaker.View{State: breaker.State(i)}))
		}
	}
	g.Union("HealthStatus", statuses...)

	// Fields that are strings in Go but carry one of those sets.
	endpoint := reflect.TypeFor[store.Endpoint]()
	g.FieldType(endpoint, "protocol", protocol)
	g.FieldType(endpoint, "auth", auth)
	patch := reflect.TypeFor[store.EndpointPatch]()
	g.FieldType(patch, "protocol", reflect.PointerTo(protocol))
	g.FieldType(patch, "auth", reflect.PointerTo(auth))
	g.FieldType(endpoint, "on_model_mismatch", mismatch)
	g.FieldType(patch, "on_model_mismatch", reflect.PointerTo(mismatch))
	preset := reflect.TypeFor[Preset]()
	g.FieldType(preset, "protocol", protocol)
	g.FieldType(preset, "auth", auth)
	// The store keeps an endpoint's breaker overrides as raw JSON; they are
	// a breaker.Overrides, under the name the frontend has always used.
	overrides := reflect.TypeFor[breaker.Overrides]()
	g.Add("BreakerParams", overrides)
	g.FieldType(endpoint, "breaker_overrides", overrides)
	g.FieldType(patch, "breaker_overrides", reflect.PointerTo(overrides))
	// The store keeps an endpoint's balance connector as raw JSON; it is a
	// balance.Connector.
	connector := reflect.TypeFor[balance.Connector]()
	g.FieldType(endpoint, "balance", connector)
	g.FieldType(patch, "balance", reflect.PointerTo(connector))
	g.Nullable(reflect.TypeFor[balance.Reading](), "remaining")
	g.Nullable(reflect.TypeFor[balance.Reading](), "used")
	g.Nullable(reflect.TypeFor[balance.Reading](), "total")
	health := reflect.TypeFor[Health]()
	g.FieldEnum(health, "status", "HealthStatus")
	g.FieldType(health, "state", state)
	g.FieldType(health, "reason", reason)
	keyHealth := reflect.TypeFor[KeyHealth]()
	g.FieldEnum(keyHealth, "status", "HealthStatus")
	g.FieldType(keyHealth, "state", state)
	g.FieldType(keyHealth, "reason", reason)
	event := reflect.TypeFor[store.BreakerEvent]()
	g.FieldType(event, "cause", cause)
	g.FieldType(event, "from", state)
	g.FieldType(event, "to", state)
	g.FieldType(event, "reason", reason)

	// A log row's routing and history are `any` in the store: the proxy's
	// values when the row is new (the live "log" event), their JSON when
	// read back. The attempts of a request that reached no endpoint are a
	// nil slice, and so are routing lists with nothing in them.
	logRow := reflect.TypeFor[store.RequestLog]()
	g.FieldType(logRow, "protocol", protocol)
	g.FieldType(logRow, "stream_end", streamEnd)
	g.FieldType(logRow, "routing", reflect.TypeFor[proxy.Routing]())
	g.FieldType(logRow, "history", reflect.TypeFor[[]proxy.Attempt]())
	g.Nullable(logRow, "history")
	// A cost is a number, or null when no price matched (never 0).
	g.Override(reflect.TypeFor[proxy.Cost](), "number | null")
	routing := reflect.TypeFor[proxy.Routing]()
	g.Nullable(routing, "candidates")
	g.Nullable(routing, "excluded")

	if err := frontendMetadata(g); err != nil {
		return nil, err
	}

	// Roots: what the handlers write and decode.
	g.Add("", reflect.TypeFor[Info]())              // GET /api/info
	g.Add("", reflect.TypeFor[EndpointReply]())     // endpoint replies
	g.Add("", patch)                                // POST, PUT /api/endpoints
	g.Add("", health)                               // GET /api/health, force-open/close
	g.Add("", reflect.TypeFor[TestResult]())        // POST /api/endpoints/{id}/test
	g.Add("", reflect.TypeFor[FetchModelsReply]())  // POST /api/endpoints/{id}/fetch-models
	g.Add("", logRow)                               // GET /api/logs/{id}, "log" events
	g.Add("", reflect.TypeFor[CaptureReply]())      // GET /api/logs/{id}/capture
	g.Add("", reflect.TypeFor[ResendInput]())       // POST /api/logs/{id}/resend
	g.Add("", reflect.TypeFor[ResendReply]())       // its reply
	g.Add("", reflect.TypeFor[CurlReply]())         // GET /api/logs/{id}/curl
	g.Add("LogPage", reflect.TypeFor[tsLogPage]())  // GET /api/logs
	g.Add("", event)                                // GET /api/breaker-events
	g.Add("StatsReply", reflect.TypeFor[tsStats]()) // GET /api/stats
	// The counts of a stats bucket, which the UI sums over any set of them
	// (frontend/src/stats.ts).
	g.Add("Totals", reflect.TypeFor[store.Counts]())
	g.Add("", reflect.TypeFor[proxy.Explanation]())             // GET /api/route
	g.Add("", reflect.TypeFor[Settings]())                      // GET, PUT /api/settings
	g.Add("", reflect.TypeFor[SettingsReply]())                 // PUT /api/settings' answer
	g.Add("", reflect.TypeFor[UpdateStatus]())                  // GET /api/update, POST /api/update/check, the update event
	g.Add("", reflect.TypeFor[PricesReply]())                   // GET, PUT /api/prices
	g.Add("ExportDoc", reflect.TypeFor[backup.Doc[Settings]]()) // GET /api/export, POST /api/import
	g.Add("", reflect.TypeFor[backup.ExportRequest]())          // POST /api/export
	g.Add("", reflect.TypeFor[backup.ImportReport]())           // POST /api/import/preview, POST /api/import
	g.Add("", reflect.TypeFor[backup.SyncSettings]())           // GET, PUT /api/sync
	g.Add("", reflect.TypeFor[backup.SyncInput]())              // PUT /api/sync
	g.Add("", reflect.TypeFor[backup.SyncRun]())                // POST /api/sync/push, /pull
	g.Add("", reflect.TypeFor[backup.SyncResult]())             // their reply
	g.Add("", reflect.TypeFor[ClaudeCode]())                    // GET /api/claude-code
	g.Add("ClaudeCodeApplied", reflect.TypeFor[tsClaudeCodeApplied]())
	g.Add("PresetsReply", reflect.TypeFor[tsPresets]())      // GET /api/presets
	g.Add("", reflect.TypeFor[Codex]())                      // GET /api/codex
	g.Add("", reflect.TypeFor[DroppableReply]())             // GET /api/droppable
	g.Add("", reflect.TypeFor[BalanceReply]())               // GET, POST /api/endpoints/{id}/balance
	g.Add("", reflect.TypeFor[BalancesReply]())              // GET /api/balances
	g.Add("", reflect.TypeFor[BalanceTemplatesReply]())      // GET /api/balance-templates
	g.Add("CodexApplied", reflect.TypeFor[tsCodexApplied]()) // POST /api/codex/apply
	g.Add("", reflect.TypeFor[GeminiCLI]())                  // GET /api/gemini-cli
	g.Add("GeminiCLIApplied", reflect.TypeFor[tsGeminiCLIApplied]())
	g.Add("ApiErrorBody", reflect.TypeFor[tsErrorBody]())
	g.Add("ApiErrorDetail", reflect.TypeFor[apiError]())
	return g.Render()
}

// TestFrontendTypes keeps the frontend's API types in step with the Go
// types: it fails when the generated file differs from what the Go types
// give, and with CCMESH_UPDATE_TYPES=1 (make types) it rewrites the file.
func TestFrontendTypes(t *testing.T) {
	got, err := frontendTypes()
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("CCMESH_UPDATE_TYPES") == "1" {
		if err := os.WriteFile(frontendTypesFile, got, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", frontendTypesFile)
		return
	}
	want, err := os.ReadFile(frontendTypesFile)
	if err != nil {
		t.Fatalf("%v: run `make types` to generate it", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is out of date with the Go API types: run `make types` and commit the result\n%s",
			filepath.Clean(frontendTypesFile), firstDifference(string(want), string(got)))
	}
}

// firstDifference shows the first line where the committed file (want)
// and the generated text (got) differ.
func firstDifference(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("line %d:\n  committed: %q\n  generated: %q", i+1, wl, gl)
		}
	}
	return "(they differ only in line endings)"
}

// TestFrontendTypesMirrors checks that the test's mirrors of map-shaped
// replies have the handlers' exact members: each reply decodes into its
// mirror with no member left over, and encodes back to the same JSON.
func TestFrontendTypesMirrors(t *testing.T) {
	h := newHarness(t)
	var cc ClaudeCode
	h.do("GET", "/api/claude-code", "").decode(t, &cc)
	var cx Codex
	h.do("GET", "/api/codex", "").decode(t, &cx)
	var gc GeminiCLI
	h.do("GET", "/api/gemini-cli", "").decode(t, &gc)

	tests := []struct {
		method, path, body string
		status             int
		mirror             any
	}{
		{"GET", "/api/logs", "", http.StatusOK, &tsLogPage{}},
		{"GET", "/api/stats", "", http.StatusOK, &tsStats{}},
		{"GET", "/api/presets", "", http.StatusOK, &tsPresets{}},
		{"POST", "/api/claude-code/apply", `{"hash":"` + cc.Hash + `"}`, http.StatusOK, &tsClaudeCodeApplied{}},
		{"POST", "/api/codex/apply", `{"hash":"` + cx.Hash + `"}`, http.StatusOK, &tsCodexApplied{}},
		{"POST", "/api/gemini-cli/apply", `{"hash":"` + gc.Hash + `"}`, http.StatusOK, &tsGeminiCLIApplied{}},
		{"GET", "/api/endpoints/999", "", http.StatusNotFound, &tsErrorBody{}},
		{"GET", "/api/logs?limit=x", "", http.StatusBadRequest, &tsErrorBody{}},
	}
	for _, tt := range tests {
		r := h.do(tt.method, tt.path, tt.body)
		if r.status != tt.status {
			t.Errorf("%s %s: status %d, want %d: %s", tt.method, tt.path, r.status, tt.status, r.body)
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(r.body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(tt.mirror); err != nil {
			t.Errorf("%s %s: %s does not decode into %T: %v", tt.method, tt.path, r.body, tt.mirror, err)
			continue
		}
		again, err := json.Marshal(tt.mirror)
		if err != nil {
			t.Fatal(err)
		}
		var gotV, wantV any
		if err := json.Unmarshal(r.body, &wantV); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(again, &gotV); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(gotV, wantV) {
			t.Errorf("%s %s: the handler wrote\n  %s\nbut %T encodes as\n  %s", tt.method, tt.path, bytes.TrimSpace(r.body), tt.mirror, again)
		}
	}
}
