package app

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
)

// Preset is a known provider an endpoint can start from
// (docs/BEHAVIOUR.md#presets): it fills protocol, base URL, auth, models
// and model_map; the user adds the key.
type Preset struct {
	ID       string            `json:"id"`
	Name     string            `json:"name"`
	Protocol string            `json:"protocol"`
	BaseURL  string            `json:"base_url"`
	Auth     string            `json:"auth"`
	Models   []string          `json:"models"`
	ModelMap map[string]string `json:"model_map"`
	KeyHint  string            `json:"key_hint"`
	// Balance is the balance template the preset picks (docs/BEHAVIOUR.md#balance); "" for none.
	Balance string `json:"balance,omitempty"`
	// Source is the documentation the row came from; Date when ccmesh
	// recorded it.
	Source string `json:"source"`
	Date   string `json:"date"`
}

//go:embed presets.json
var presetsJSON []byte

// presets is the embedded list, read once at start; a broken file is a
// build mistake a test catches.
var presets = mustPresets(presetsJSON)

func mustPresets(b []byte) []Preset {
	var doc struct {
		Presets []Preset `json:"presets"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		panic(fmt.Sprintf("app: presets.json: %v", err))
	}
	return doc.Presets
}

// presetsHandler is GET /api/presets.
func (a *App) presetsHandler(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, map[string]any{"presets": presets})
	return nil
}
