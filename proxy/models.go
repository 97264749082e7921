package proxy

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/ccmesh/ccmesh/proxy/translate"
	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// serveModels answers GET /v1/models from the enabled endpoints' model
// lists: the endpoints of the family of the protocol whose marker header
// the client sends (anthropic endpoints for a Claude client, which sends
// anthropic-version), OpenAI endpoints otherwise, in that protocol's shape. Patterns with '*' name no model and are left
// out; names are listed once, sorted.
// A protocol whose model list has a path of its own (conv.Spec.ModelsPath:
// Gemini's /v1beta/models) is answered there, in its shape, from its
// family's endpoints.
func (s *Server) serveModels(w http.ResponseWriter, r *http.Request, snap *snapshot, spec *conv.Spec) {
	if spec == nil {
		spec = conv.SpecOfHeader(r.Header)
	}
	var ids []string
	for _, e := range snap.byName {
		if !e.Enabled || e.spec.Family != spec.Family {
			continue
		}
		for _, m := range e.Models {
			if !strings.Contains(m, "*") {
				ids = append(ids, m)
			}
		}
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	v := spec.ModelsAnswer(ids)
	b, _ := json.Marshal(v) // plain structs always marshal
	h := w.Header()
	setCCMeshHeaders(h, "", 0)
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

// modelsSpec is the protocol whose own model list path is path (its
// upstreams' ModelsPath, which its clients ask ccmesh too), nil for any
// other path.
func modelsSpec(path string) *conv.Spec {
	for _, s := range translate.Specs {
		if s.ModelsPath != "" && s.ModelsPath == path {
			return s
		}
	}
	return nil
}
