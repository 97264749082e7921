// Package clients points other programs at ccmesh: the shell lines that
// set a client's variables, and Connect — the previewed change to a
// client's own configuration file, written only as shown
// (docs/BEHAVIOUR.md#admin-api). Each client is one Client value; the app
// serves each as GET <route> (the preview) and POST <route>/apply, and
// gives what a client needs through Host.
package clients

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"
)

// Host is what the clients need from the app.
type Host interface {
	// ProxyURL is the address clients reach ccmesh at (http://host:port).
	ProxyURL() string
	// ClientToken is the token clients must send; "" when none is set.
	ClientToken() string
	// Home is the user's home directory, where the clients' files are.
	Home() (string, error)
	// Getenv is the environment variable a client's own path may come
	// from (CODEX_HOME); "" when the app's home is not the user's (tests).
	Getenv(name string) string
}

// Client is one client whose configuration files Connect changes.
type Client struct {
	// Preview is the route that shows the change, for messages
	// ("GET /api/claude-code").
	Preview string
	// Changed is the error code of a file changed since the preview.
	Changed string
	// AlsoWritten: the apply reply also names the (one) file "written"
	// and its backup "backup".
	AlsoWritten bool
	// Plan computes the reply to show and the file changes it describes.
	Plan func(h Host) (shown any, p Plan, err error)
}

// Plan is a previewed change to one or more files, named by one hash over
// all of them: Apply writes all of them or, when it can tell beforehand
// that one cannot be written, none.
type Plan struct {
	Files []FilePlan
	Hash  string
}

// FilePlan is a previewed change to one file: its path, its text now, the
// text the change writes, and the apply reply's keys naming the file and
// its backup.
type FilePlan struct{ Path, Current, Proposed, PathKey, BackupKey string }

// onePlan is the Plan of a client with a single file.
func onePlan(f FilePlan) Plan {
	return Plan{Files: []FilePlan{f}, Hash: planHash(f.Current, f.Proposed)}
}

// Conflict is a file ccmesh will not read or change as it is (409): the
// error code, the request's field at fault if one is, and what to do, for
// the user.
type Conflict struct {
	Code, Field, Message string
}

func (e *Conflict) Error() string { return e.Message }

func conflict(code, format string, args ...any) *Conflict {
	return &Conflict{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Show is the preview of c's change.
func (c Client) Show(h Host) (any, error) {
	shown, _, err := c.Plan(h)
	return shown, err
}

// Apply writes the proposed texts, keeping a backup of each old file,
// through a temporary file and a rename so a crash never leaves half a
// file. It writes only the change the preview showed, the one named hash:
// a file (or proxy address) changed since is a Conflict rather than a
// change the user never saw. The reply names each file and its backup.
func (c Client) Apply(h Host, hash string) (map[string]string, error) {
	_, p, err := c.Plan(h)
	if err != nil {
		return nil, err
	}
	if p.Hash != hash {
		paths := make([]string, len(p.Files))
		for i, f := range p.Files {
			paths[i] = f.Path
		}
		return nil, &Conflict{Code: c.Changed, Field: "hash",
			Message: fmt.Sprintf("%s (or ccmesh's address) changed since the preview: nothing was written; look at the change again, then apply it", strings.Join(paths, " or "))}
	}
	backups, err := writePlans(p.Files)
	if err != nil {
		return nil, err
	}
	reply := map[string]string{}
	for i, f := range p.Files {
		reply[f.PathKey], reply[f.BackupKey] = f.Path, backups[i]
	}
	if c.AlsoWritten {
		reply["written"], reply["backup"] = p.Files[0].Path, backups[0]
	}
	return reply, nil
}

// planHash names a preview: SHA-256 over each text (a file's current
// text, then its proposed one, file after file), each after its length, so
// no two previews share a name.
func planHash(texts ...string) string {
	h := sha256.New()
	for _, t := range texts {
		fmt.Fprintf(h, "%d:%s", len(t), t)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// inHome is a path under the host's home directory.
func inHome(h Host, parts ...string) (string, error) {
	home, err := h.Home()
	if err != nil {
		return "", fmt.Errorf("find the home directory: %w", err)
	}
	return filepath.Join(append([]string{home}, parts...)...), nil
}

// ShellQuote makes s one word of a POSIX shell line that nothing in it can
// break out of: s inside single quotes, where nothing is special, with each
// single quote of s written as quote, backslash, quote, quote (end the
// quoted part, an escaped quote, start another). Every value the UI or the
// tray puts into a line meant for a shell goes through it.
func ShellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
