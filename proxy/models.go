package proxy

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

type anthropicModel struct {
	Type        string    `json:"type"`
	ID          string    `json:"id"`
	DisplayName string    `json:"display_name"`
	CreatedAt   time.Time `json:"created_at"`
}

type anthropicModelList struct {
	Data    []anthropicModel `json:"data"`
	HasMore bool             `json:"has_more"`
	FirstID *string          `json:"first_id"`
	LastID  *string          `json:"last_id"`
}

type openAIModel struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

type openAIModelList struct {
	Object string        `json:"object"`
	Data   []openAIModel `json:"data"`
}

// serveModels answers GET /v1/models from the enabled endpoints' model
// lists: anthropic endpoints for a Claude client (anthropic-version sent),
// OpenAI endpoints otherwise. Patterns with '*' name no model and are left
// out; names are listed once, sorted.
func (s *Server) serveModels(w http.ResponseWriter, r *http.Request, snap *snapshot) {
	claude := r.Header.Get("anthropic-version") != ""
	var ids []string
	for _, e := range snap.byName {
		if !e.Enabled || (e.Protocol == ProtocolAnthropic) != claude {
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
	var v any
	if claude {
		list := anthropicModelList{Data: make([]anthropicModel, 0, len(ids))}
		for _, id := range ids {
			list.Data = append(list.Data, anthropicModel{Type: "model", ID: id, DisplayName: id})
		}
		if len(ids) > 0 {
			list.FirstID, list.LastID = &ids[0], &ids[len(ids)-1]
		}
		v = list
	} else {
		list := openAIModelList{Object: "list", Data: make([]openAIModel, 0, len(ids))}
		for _, id := range ids {
			list.Data = append(list.Data, openAIModel{ID: id, Object: "model", OwnedBy: "ccmesh"})
		}
		v = list
	}
	b, _ := json.Marshal(v) // plain structs always marshal
	h := w.Header()
	setCCMeshHeaders(h, "", 0)
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}
