package app

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/ccmesh/ccmesh/frontend"
	"github.com/ccmesh/ccmesh/internal/logcode"
	"github.com/ccmesh/ccmesh/proxy"
)

const (
	adminCookie    = "ccmesh_admin"
	adminTokenFile = "admin-token"
)

// Handler is everything served on the listening port: the proxy under /v1/,
// the admin API under /api/ (token required), and the UI under /ui/.
func (a *App) Handler() http.Handler {
	mux := http.NewServeMux()
	api := http.NewServeMux()
	a.api(api)
	mux.Handle("/api/", adminHeaders(a.adminGuard(a.recoverAdmin(api))))
	mux.Handle("/v1/", a.proxyHandler())
	mux.Handle("GET /metrics", adminHeaders(a.adminGuard(a.metricsHandler())))
	mux.Handle("/ui/", adminHeaders(a.uiHandler()))
	mux.Handle("GET /{$}", adminHeaders(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/ui/", http.StatusFound)
	})))
	// Browsers ask for it on every tab of the UI; it is not proxy traffic.
	// Drawn at the first ask: the PNG encoder's tables are 0.4 MB of
	// memory a headless ccmesh that nobody browses never touches.
	favicon := sync.OnceValue(func() []byte { return TrayIcon(HealthAll) })
	mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Header().Set("Cache-Control", "max-age=86400")
		w.Write(favicon())
	})
	mux.Handle("/", a.proxyHandler()) // unknown paths get the proxy's protocol-shaped 404
	return mux
}

// TrustedHandler serves the admin API without a token. It is only for the
// desktop window's in-process asset server, which nothing outside the
// window can reach (docs/DESKTOP.md: those requests carry Host "wails").
func (a *App) TrustedHandler() http.Handler {
	api := http.NewServeMux()
	a.api(api)
	// The window's asset server recovers nothing: a panic here would end
	// the app, so this recover is the only one between them.
	h := adminHeaders(a.recoverAdmin(api))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), inProcessKey{}, true)))
	})
}

// recoverAdmin turns an admin handler's panic into a 500 and a log line
// (code APP-003) instead of the end of the process (the desktop window) or
// of the connection (net/http, which recovers and drops it). The log names
// the panic only when it is the runtime's (a nil dereference, an index): a
// value of another kind may hold anything, a key or a body included.
func (a *App) recoverAdmin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			p := recover()
			if p == nil {
				return
			}
			if p == http.ErrAbortHandler && !inProcess(r) {
				panic(p) // net/http's own way to drop a connection
			}
			what := fmt.Sprintf("%T", p)
			if re, ok := p.(runtime.Error); ok {
				what = re.Error()
			}
			a.log.Error().Str(logcode.Field, logcode.HandlerPanic).Str("path", r.URL.Path).Str("panic", what).
				Str("stack", string(debug.Stack())).Msg("admin API handler panicked")
			a.writeErr(w, r, &apiError{Status: http.StatusInternalServerError, Code: "internal",
				Message: "ccmesh failed while answering this (logged as " + logcode.HandlerPanic + "); what it had done so far stays as it is"})
		}()
		next.ServeHTTP(w, r)
	})
}

// inProcessKey marks a request of the desktop window, served in-process:
// no connection between, so nothing to keep alive.
type inProcessKey struct{}

func inProcess(r *http.Request) bool { return r.Context().Value(inProcessKey{}) != nil }

// adminCSP is the UI's Content-Security-Policy: its own scripts, styles,
// images and API only, never framed, no <base> and no forms posting
// elsewhere (docs/BEHAVIOUR.md#safety). The built UI has no inline script
// or style element; React's style props are set through the CSSOM, which
// style-src does not govern.
const adminCSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

// adminHeaders sets the headers every UI and admin API answer carries, so
// that no other page can frame the UI or make it run foreign content.
func adminHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", adminCSP)
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		next.ServeHTTP(w, r)
	})
}

func (a *App) proxyHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.proxy.ServeHTTP(w, r)
	})
}

// adminGuard applies docs/BEHAVIOUR.md#safety to the admin API: a loopback Host (DNS
// rebinding), no foreign browser Origin (a web page must not drive the
// API), and the admin token as a Bearer header or the UI's cookie.
func (a *App) adminGuard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !a.allowedHost(r.Host) {
			a.writeErr(w, r, &apiError{Status: http.StatusForbidden, Code: "forbidden_host",
				Message: fmt.Sprintf("Host %q is not this machine's loopback address; ccmesh refuses it to prevent DNS rebinding", r.Host)})
			return
		}
		if o := r.Header.Get("Origin"); o != "" && o != "http://"+r.Host {
			a.writeErr(w, r, &apiError{Status: http.StatusForbidden, Code: "forbidden_origin",
				Message: fmt.Sprintf("requests from the web page at %q may not use the ccmesh admin API", o)})
			return
		}
		if !a.validToken(r) {
			a.writeErr(w, r, &apiError{Status: http.StatusUnauthorized, Code: "unauthorized",
				Message: "admin token missing or wrong: open the /ui/?token=… link ccmesh printed at start-up, or send Authorization: Bearer <token>"})
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (a *App) allowedHost(host string) bool {
	if proxy.IsLoopbackHost(host) {
		return true
	}
	// Listening on another address (with a client token, docs/BEHAVIOUR.md#safety) means
	// that address is how this server is reached.
	return host == a.opts.Listen
}

func (a *App) validToken(r *http.Request) bool {
	got := proxy.BearerToken(r.Header)
	if got == "" {
		if c, err := r.Cookie(adminCookie); err == nil {
			got = c.Value
		}
	}
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(a.token)) == 1
}

// uiHandler serves the built UI. /ui/?token=… with the right token sets the
// admin cookie and redirects to a clean URL so the token leaves the
// address bar and the history.
func (a *App) uiHandler() http.Handler {
	dist, err := fs.Sub(frontend.Dist, "dist")
	if err != nil {
		panic(err) // "dist" is a literal embedded directory
	}
	files := http.StripPrefix("/ui/", http.FileServerFS(dist))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if tok := r.URL.Query().Get("token"); tok != "" {
			if subtle.ConstantTimeCompare([]byte(tok), []byte(a.token)) == 1 {
				http.SetCookie(w, &http.Cookie{Name: adminCookie, Value: a.token, Path: "/",
					HttpOnly: true, SameSite: http.SameSiteStrictMode})
			}
			http.Redirect(w, r, "/ui/", http.StatusFound)
			return
		}
		if _, err := fs.Stat(dist, "index.html"); err != nil {
			http.Error(w, "The ccmesh UI was not built into this binary: run `make ui` and rebuild.", http.StatusServiceUnavailable)
			return
		}
		name := strings.TrimPrefix(r.URL.Path, "/ui/")
		if name != "" {
			if _, err := fs.Stat(dist, name); errors.Is(err, fs.ErrNotExist) {
				r.URL.Path = "/ui/" // client-side routes load the app
			}
		}
		files.ServeHTTP(w, r)
	})
}

// loadAdminToken returns the given token, or the one kept in the data dir,
// or makes one there (0600) at first start.
func loadAdminToken(dir, given string) (string, error) {
	if given != "" {
		if why := adminTokenProblem(given); why != "" {
			return "", fmt.Errorf("--admin-token (or CCMESH_ADMIN_TOKEN): %s", why)
		}
		return given, nil
	}
	path := filepath.Join(dir, adminTokenFile)
	if b, err := os.ReadFile(path); err == nil {
		if t := strings.TrimSpace(string(b)); t != "" {
			if why := adminTokenProblem(t); why != "" {
				return "", fmt.Errorf("admin token in %s: %s; delete the file to have a new one made", path, why)
			}
			return t, nil
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("read admin token %s: %w", path, err)
	}
	buf := make([]byte, 24)
	if _, err := rand.Read(buf); err != nil {
		return "", fmt.Errorf("make admin token: %w", err)
	}
	t := hex.EncodeToString(buf)
	if err := os.WriteFile(path, []byte(t+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("write admin token %s: %w", path, err)
	}
	return t, nil
}

// adminTokenProblem says why t cannot be the admin token, or "": it must be
// 16–256 printable ASCII characters without spaces: long enough not to be
// guessed, and one word in a header.
func adminTokenProblem(t string) string {
	if n := len(t); n < 16 || n > 256 {
		return fmt.Sprintf("must be 16 to 256 characters long, not %d", n)
	}
	for i := 0; i < len(t); i++ {
		if t[i] <= ' ' || t[i] > '~' {
			return fmt.Sprintf("must be printable ASCII without spaces; character %d is not", i+1)
		}
	}
	return ""
}

// ListenerIsLoopback reports whether addr (host:port) names a loopback host.
func ListenerIsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	return proxy.IsLoopbackHost(host)
}
