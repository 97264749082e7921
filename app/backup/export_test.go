package backup

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/ccmesh/ccmesh/store"
)

// testSettings stands in for the app's settings document: the package
// carries it as it is and asks it only what Settings says.
type testSettings struct {
	ClientToken  string `json:"client_token"`
	StartAtLogin bool   `json:"start_at_login"`
	Note         string `json:"note"`
}

func (s testSettings) Token() string { return s.ClientToken }
func (s testSettings) AtLogin() bool { return s.StartAtLogin }
func (s testSettings) Local(token string, atLogin bool) testSettings {
	s.ClientToken, s.StartAtLogin = token, atLogin
	return s
}

func testConfig() Config[testSettings] {
	return Config[testSettings]{
		Endpoints: []store.Endpoint{
			{Name: "one", BaseURL: "https://a.example", APIKey: "sk-one-0123456789", ProxyURL: "http://u:secret-pw@proxy.example:8080"},
			{Name: "two", BaseURL: "https://b.example", APIKey: "sk-two-0123456789", ProxyURL: "http://proxy.example:8080"},
		},
		Settings: testSettings{ClientToken: "client-token-0123", StartAtLogin: true, Note: "a<b & c>d"},
	}
}

// A document without keys carries no key, no client token and no proxy
// URL with a password; with keys it carries them. Start at login is this
// machine's either way.
func TestDocOfKeys(t *testing.T) {
	c := testConfig()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	plain := DocOf(c, false, now)
	if plain.Version != Schema || plain.Keys || !plain.ExportedAt.Equal(now) || len(plain.Endpoints) != 2 {
		t.Fatalf("document without keys = %+v", plain)
	}
	if s := plain.Settings; s.ClientToken != "" || s.StartAtLogin || s.Note != c.Settings.Note {
		t.Errorf("settings without keys = %+v", *s)
	}
	if e := plain.Endpoints[0]; e.APIKey != nil || e.Keys != nil || e.ProxyURL != nil {
		t.Errorf("endpoint with a proxy password, without keys: %+v", e)
	}
	if e := plain.Endpoints[1]; e.APIKey != nil || e.ProxyURL == nil || *e.ProxyURL != c.Endpoints[1].ProxyURL {
		t.Errorf("endpoint with a proxy without password, without keys: %+v", e)
	}
	keyed := DocOf(c, true, now)
	if s := keyed.Settings; !keyed.Keys || s.ClientToken != c.Settings.ClientToken || s.StartAtLogin {
		t.Errorf("settings with keys = %+v", *s)
	}
	if e := keyed.Endpoints[0]; e.APIKey == nil || *e.APIKey != "sk-one-0123456789" || e.ProxyURL == nil {
		t.Errorf("endpoint with keys: %+v", e)
	}
	if !c.Settings.StartAtLogin || c.Settings.ClientToken == "" {
		t.Errorf("DocOf changed the configuration's settings: %+v", c.Settings)
	}
}

// The file is indented JSON, HTML characters as they are, and reads back
// as the document; its hash names the configuration, not when or how the
// file was written.
func TestDocFileAndHash(t *testing.T) {
	c := testConfig()
	doc := DocOf(c, true, time.Now().UTC())
	b, err := doc.FileBytes()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("{\n  \"version\": 2,\n")) || !bytes.Contains(b, []byte(`"a<b & c>d"`)) {
		t.Errorf("file bytes:\n%s", b)
	}
	var back Doc[testSettings]
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Hash() != doc.Hash() || doc.Hash() != ConfigHash(c) {
		t.Errorf("the file read back, the document and the configuration hash differently")
	}
	if later := DocOf(c, true, time.Now().Add(time.Hour)); later.Hash() != doc.Hash() {
		t.Errorf("the time of writing changed the hash")
	}
	c.Settings.Note = "another"
	if ConfigHash(c) == doc.Hash() {
		t.Errorf("a changed setting left the hash as it was")
	}
}
