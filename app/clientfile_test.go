package app

import (
	"cmp"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccmesh/ccmesh/app/clients"
)

// Connect Claude Code, Codex and Gemini CLI write the user's files safely
// (app/clients/file.go): each test runs against every writer and file.

type clientCase struct {
	name, route, rel, valid string
	backupKey               string // the apply reply's key for the backup: "" is backup_path
	marker                  string // in the file after apply: "" is ccmesh's address
}

var clientCases = []clientCase{
	{"claude code", "/api/claude-code", ".claude/settings.json", `{"model":"opus"}`, "", ""},
	{"codex", "/api/codex", ".codex/config.toml", "model = \"o3\"\n", "", ""},
	{"gemini cli .env", "/api/gemini-cli", ".gemini/.env", "DEBUG=1\n", "env_backup_path", ""},
	{"gemini cli settings", "/api/gemini-cli", ".gemini/settings.json", `{"ui":{"theme":"Dracula"}}`, "settings_backup_path", "gemini-api-key"},
}

// backup is the path of the backup the apply reply names.
func (c clientCase) backup(reply map[string]string) string {
	if c.backupKey == "" {
		return reply["backup_path"]
	}
	return reply[c.backupKey]
}

// path is the client's file in h's home, its directory made.
func (c clientCase) path(t *testing.T, h *harness) string {
	t.Helper()
	p := filepath.Join(h.app.opts.HomeDir, c.rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	return p
}

// apply previews the change and applies it, and returns the apply's answer.
func (c clientCase) apply(t *testing.T, h *harness) (resp, map[string]string) {
	t.Helper()
	var plan struct {
		Hash string `json:"hash"`
	}
	if r := h.do("GET", c.route, ""); r.status != 200 {
		return r, nil
	} else {
		r.decode(t, &plan)
	}
	r := h.do("POST", c.route+"/apply", `{"hash":"`+plan.Hash+`"}`)
	var out map[string]string
	if r.status == 200 {
		r.decode(t, &out)
	}
	return r, out
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestClientFilePlantedTempLink: a link planted at the temporary name
// the writer once used (path.ccmesh-tmp) redirects nothing.
func TestClientFilePlantedTempLink(t *testing.T) {
	for _, c := range clientCases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			path := c.path(t, h)
			writeFile(t, path, c.valid)
			victim := filepath.Join(t.TempDir(), "victim")
			writeFile(t, victim, "not yours")
			if err := os.Symlink(victim, path+".ccmesh-tmp"); err != nil {
				t.Fatal(err)
			}
			if r, _ := c.apply(t, h); r.status != 200 {
				t.Fatalf("apply: %d %s", r.status, r.body)
			}
			if got := readFile(t, victim); got != "not yours" {
				t.Errorf("the link's target holds %q, want it untouched", got)
			}
			if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() || !strings.Contains(readFile(t, path), cmp.Or(c.marker, "127.0.0.1:3457")) {
				t.Errorf("%s after apply: %v %v", path, fi, err)
			}
		})
	}
}

// TestClientFileBackupsNeverReplaced: a backup's name taken already (an
// apply in the same second) gets another name; no backup is overwritten.
func TestClientFileBackupsNeverReplaced(t *testing.T) {
	for _, c := range clientCases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			path := c.path(t, h)
			now := time.Now()
			var taken []string
			for _, at := range []time.Time{now, now.Add(time.Second)} {
				name := path + ".ccmesh-backup-" + at.Format("20060102-150405")
				writeFile(t, name, "an older backup")
				taken = append(taken, name)
			}
			writeFile(t, path, c.valid)
			r, first := c.apply(t, h)
			if r.status != 200 {
				t.Fatalf("apply: %d %s", r.status, r.body)
			}
			second := c.valid + "\n"
			writeFile(t, path, second)
			r, again := c.apply(t, h)
			if r.status != 200 {
				t.Fatalf("second apply: %d %s", r.status, r.body)
			}
			for _, name := range taken {
				if got := readFile(t, name); got != "an older backup" {
					t.Errorf("%s holds %q, want the older backup", name, got)
				}
			}
			if c.backup(first) == c.backup(again) {
				t.Fatalf("both applies backed up to %s", c.backup(first))
			}
			if got := readFile(t, c.backup(first)); got != c.valid {
				t.Errorf("first backup holds %q, want %q", got, c.valid)
			}
			if got := readFile(t, c.backup(again)); got != second {
				t.Errorf("second backup holds %q, want %q", got, second)
			}
		})
	}
}

// TestClientFileTooLarge: a file over 4 MiB is not read: a clear 409 on
// preview and apply, and the file stays.
func TestClientFileTooLarge(t *testing.T) {
	for _, c := range clientCases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			path := c.path(t, h)
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := f.Truncate(clients.MaxFile + 1); err != nil { // sparse: no 4 MiB written
				t.Fatal(err)
			}
			f.Close()
			checkRefused(t, h, c, path, "client_config_too_large", "larger than 4 MiB")
			if fi, err := os.Stat(path); err != nil || fi.Size() != clients.MaxFile+1 {
				t.Errorf("file after apply: %v %v", fi, err)
			}
		})
	}
}

// TestClientFileIsADirectory: a directory at the file's path is a clear
// 409, not a 500.
func TestClientFileIsADirectory(t *testing.T) {
	for _, c := range clientCases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			path := c.path(t, h)
			if err := os.Mkdir(path, 0o700); err != nil {
				t.Fatal(err)
			}
			checkRefused(t, h, c, path, "client_config_not_a_file", "is a directory")
		})
	}
}

// TestClientFileIsALink: a link at the file's path is neither followed
// nor replaced.
func TestClientFileIsALink(t *testing.T) {
	for _, c := range clientCases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			path := c.path(t, h)
			target := filepath.Join(t.TempDir(), "real")
			writeFile(t, target, c.valid)
			if err := os.Symlink(target, path); err != nil {
				t.Fatal(err)
			}
			checkRefused(t, h, c, path, "client_config_symlink", "symbolic link")
			if got := readFile(t, target); got != c.valid {
				t.Errorf("the link's target holds %q", got)
			}
			if fi, err := os.Lstat(path); err != nil || fi.Mode()&os.ModeSymlink == 0 {
				t.Errorf("the link was replaced: %v %v", fi, err)
			}
		})
	}
}

// checkRefused: preview and apply are both 409 code, saying why.
func checkRefused(t *testing.T, h *harness, c clientCase, path, code, why string) {
	t.Helper()
	hash := strings.Repeat("0", 64)
	for _, r := range []resp{h.do("GET", c.route, ""), h.do("POST", c.route+"/apply", `{"hash":"`+hash+`"}`)} {
		if r.status != 409 || r.errCode() != code || !strings.Contains(string(r.body), why) || !strings.Contains(string(r.body), path) {
			t.Errorf("got %d %s, want 409 %s naming %s and saying %q", r.status, r.body, code, path, why)
		}
	}
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("files next to %s: %v, want none written", path, entries)
	}
}
