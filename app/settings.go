package app

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/ccmesh/ccmesh/app/config"
	"github.com/ccmesh/ccmesh/app/update"
	"github.com/ccmesh/ccmesh/breaker"
	"github.com/ccmesh/ccmesh/proxy"
	"github.com/ccmesh/ccmesh/store"
)

// Settings is the whole settings document: GET and PUT /api/settings, the
// export's settings, and (as JSON) what the store keeps.
type Settings struct {
	// Listen is the address to use at the next start when --listen is not
	// given; "" means the built-in default.
	Listen             string          `json:"listen"`
	Strategy           proxy.Strategy  `json:"strategy"`
	Breaker            BreakerProfiles `json:"breaker"`
	FirstByteTimeoutMs int64           `json:"first_byte_timeout_ms" range:"1,3600000,1 ms to 1 h"`
	IdleTimeoutMs      int64           `json:"idle_timeout_ms" range:"1,3600000,1 ms to 1 h"`
	// HedgeAfterMs races a request's first attempt that has no first
	// content after this long with the next candidate
	// (docs/BEHAVIOUR.md#hedging); 0 is off.
	HedgeAfterMs     int64  `json:"hedge_after_ms" range:"0,600000,0 (off) to 10 min"`
	MaxBodyBytes     int64  `json:"max_body_bytes" range:"1024,1073741824,1 KiB to 1 GiB"`
	ClientToken      string `json:"client_token"`
	LogRetentionRows int    `json:"log_retention_rows" range:"100,10000000"`
	LogRetentionDays int    `json:"log_retention_days" range:"1,3650,1 day to 10 years"`
	Notifications    bool   `json:"notifications"`
	// StartAtLogin is whether the system starts ccmesh at login. It is
	// not kept with the settings: it reads the system's entry, and a PUT
	// that gives it writes or removes that entry (docs/BEHAVIOUR.md#start-at-login).
	StartAtLogin bool   `json:"start_at_login"`
	Language     string `json:"language"` // en | zh-CN
	// Capture says which requests keep what their client sent and got
	// (docs/BEHAVIOUR.md#capture-and-resend): off, errors or all.
	Capture proxy.CaptureMode `json:"capture"`
	// CaptureBodyBytes caps each captured body (more is cut and marked),
	// CaptureTotalBytes what all captures store together, the oldest
	// dropped first (docs/BEHAVIOUR.md#capture-and-resend). The body cap
	// ends at 16 MiB so that a capture (two bodies) stays well within the
	// log writer's 64 MiB queue budget for captures.
	CaptureBodyBytes  int64 `json:"capture_body_bytes" range:"1024,16777216,1 KiB to 16 MiB"`
	CaptureTotalBytes int64 `json:"capture_total_bytes" range:"1048576,17179869184,1 MiB to 16 GiB"`
	// BalanceRefreshMinutes is how often endpoints' balance connectors are
	// read (docs/BEHAVIOUR.md#balance); 0 is never (on demand and after a
	// quota error only).
	BalanceRefreshMinutes int `json:"balance_refresh_minutes" range:"0,1440,0 (never) to 24 h"`
	// UpdateCheck reads UpdateFeedURL at start and daily for a newer
	// release (docs/BEHAVIOUR.md#update-check); off by default.
	UpdateCheck   bool   `json:"update_check"`
	UpdateFeedURL string `json:"update_feed_url"`
	// Prices are the user's price rows, tried before the shipped ones
	// (docs/BEHAVIOUR.md#cost); PUT /api/prices replaces them, and so does
	// a PUT /api/settings that gives them.
	Prices []PriceRow `json:"prices"`
	// Rules are the routing rules, in order, first match wins
	// (docs/BEHAVIOUR.md#routing-rules); a body that gives them replaces
	// them whole.
	Rules []proxy.Rule `json:"rules"`
}

// BreakerProfiles holds the per-profile breaker defaults set by the user
// (docs/BEHAVIOUR.md#breaker-defaults); what they leave out keeps the
// built-in value.
type BreakerProfiles struct {
	Claude breaker.Overrides `json:"claude"`
	OpenAI breaker.Overrides `json:"openai"`
}

// DefaultSettings are the settings of a new database.
func DefaultSettings() Settings {
	return Settings{
		Strategy:              proxy.Strategies[0],
		FirstByteTimeoutMs:    60_000,
		IdleTimeoutMs:         90_000,
		MaxBodyBytes:          64 << 20,
		LogRetentionRows:      50_000,
		LogRetentionDays:      14,
		Notifications:         true,
		Language:              "en",
		Capture:               proxy.CaptureOff,
		CaptureBodyBytes:      proxy.DefaultCaptureBody,
		CaptureTotalBytes:     store.DefaultCaptureTotal,
		BalanceRefreshMinutes: 10,
		UpdateFeedURL:         update.DefaultFeed,
		Prices:                []PriceRow{},
		Rules:                 []proxy.Rule{},
	}
}

// clone returns s with breaker profiles of its own, so that decoding onto
// it leaves s alone.
func (s Settings) clone() Settings {
	s.Breaker.Claude = s.Breaker.Claude.Clone()
	s.Breaker.OpenAI = s.Breaker.OpenAI.Clone()
	return s
}

// mergeSettings decodes a PUT /api/settings body onto base: the fields it
// gives change, the rest keep base's values. Price rows are a list that a
// body replaces whole: decoded onto base's rows, encoding/json would keep
// the fields a new row leaves out and write through their pointers, into
// the current snapshot.
func mergeSettings(base Settings, body []byte) (Settings, error) {
	s := base.clone()
	s.Prices, s.Rules = nil, nil
	if err := decodeBody(body, &s); err != nil {
		return Settings{}, err
	}
	if s.Prices == nil { // left out (or null): kept
		s.Prices = base.Prices
	}
	if s.Rules == nil {
		s.Rules = base.Rules
	}
	return s, nil
}

// loadSettings reads the stored settings laid over DefaultSettings, so a
// field the stored document lacks (a new setting, a fresh database) has its
// default.
func (a *App) loadSettings(ctx context.Context) (Settings, error) {
	s := DefaultSettings()
	doc, err := a.db.GetSettings(ctx)
	if err != nil {
		return Settings{}, err
	}
	if doc != nil {
		if err := json.Unmarshal(doc, &s); err != nil {
			return Settings{}, fmt.Errorf("decode the stored settings: %w", err)
		}
	}
	if s.Prices == nil { // [] in the API, not null
		s.Prices = []PriceRow{}
	}
	if s.Rules == nil {
		s.Rules = []proxy.Rule{}
	}
	s.StartAtLogin = a.startAtLogin()
	return s, nil
}

func (a *App) getSettings(w http.ResponseWriter, r *http.Request) error {
	s := a.state.Load().Settings
	s.StartAtLogin = a.startAtLogin() // the entry as it is now, whoever changed it
	writeJSON(w, http.StatusOK, s)
	return nil
}

func (a *App) putSettings(w http.ResponseWriter, r *http.Request) error {
	// Read and decoded before the write lock: a body that trickles in, or
	// a bad one, must not hold up every other change. Decoding onto a copy
	// of the current settings merges: fields the body leaves out keep their
	// values.
	body, err := readBody(r)
	if err != nil {
		return err
	}
	base := a.state.Load()
	s, err := mergeSettings(base.Settings, body)
	if err != nil {
		return err
	}
	var (
		saved    Settings
		warnings []Warning
	)
	err = a.mutate(r.Context(), func(ctx context.Context) error {
		if now := a.state.Load(); now != base {
			// Another change came first: merge onto it instead. The body
			// decoded once, so it decodes again.
			var err error
			if s, err = mergeSettings(now.Settings, body); err != nil {
				return err
			}
		}
		if err := validateSettings(s, a.opts.Listen); err != nil {
			return err
		}
		var err error
		if warnings, err = validateRules(s.Rules, config.TargetsOf(a.state.Load().Endpoints)); err != nil {
			return err
		}
		if startAtLogin, ok := givenStartAtLogin(body); ok {
			if err := a.setStartAtLogin(startAtLogin); err != nil {
				return err
			}
		}
		s.StartAtLogin = a.startAtLogin() // the answer says what is on disk
		doc, err := json.Marshal(s)
		if err != nil {
			return err
		}
		saved = s
		return a.db.PutSettings(ctx, doc)
	})
	if err != nil {
		return err
	}
	a.events.Publish("settings", saved)
	writeJSON(w, http.StatusOK, SettingsReply{Settings: saved, Warnings: warnings})
	return nil
}

// Warning is a change the admin API made but has something to say about
// (config.Warning, declared here under the name the API's generated types
// give it).
type Warning config.Warning

// SettingsReply is PUT /api/settings' answer: the settings as saved, and
// what they may not do as meant.
type SettingsReply struct {
	Settings
	Warnings []Warning `json:"warnings"`
}

// validateRules checks the rules against targets (config.ValidateRules).
func validateRules(rules []proxy.Rule, targets config.Targets) ([]Warning, error) {
	ws, err := config.ValidateRules(rules, targets)
	if err != nil {
		return nil, err
	}
	out := make([]Warning, len(ws))
	for i, w := range ws {
		out[i] = Warning(w)
	}
	return out, nil
}

// givenStartAtLogin is the start_at_login a PUT body gives: only a body
// that names it changes the system's entry.
func givenStartAtLogin(body []byte) (on, ok bool) {
	var b struct {
		StartAtLogin *bool `json:"start_at_login"`
	}
	if json.Unmarshal(body, &b) != nil || b.StartAtLogin == nil {
		return false, false
	}
	return *b.StartAtLogin, true
}
