//go:build desktop

// Package desktop starts the real desktop binary under Xvfb with a D-Bus
// session and drives it the way a user does: the window, the tray menu
// (over D-Bus, as a panel would), a second launch, and Quit during a
// stream. Run with `make test-desktop` (inside dbus-run-session).
package desktop

import (
	"bufio"
	"encoding/json"
	"fmt"
	"image"
	_ "image/png"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

const token = "desktop-test-token"

// TestMain starts one Xvfb for the package.
func TestMain(m *testing.M) {
	if os.Getenv("DBUS_SESSION_BUS_ADDRESS") == "" {
		fmt.Fprintln(os.Stderr, "desktop tests need a D-Bus session: run them through `make test-desktop` (dbus-run-session)")
		os.Exit(1)
	}
	display := ":" + strconv.Itoa(90+os.Getpid()%9)
	xvfb := exec.Command("Xvfb", display, "-screen", "0", "1280x900x24", "-nolisten", "tcp")
	if err := xvfb.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "start Xvfb:", err)
		os.Exit(1)
	}
	os.Setenv("DISPLAY", display)
	deadline := time.Now().Add(10 * time.Second)
	for exec.Command("xdpyinfo").Run() != nil {
		if time.Now().After(deadline) {
			fmt.Fprintln(os.Stderr, "Xvfb did not come up")
			os.Exit(1)
		}
		time.Sleep(100 * time.Millisecond) // polling an external process, not test logic
	}
	code := m.Run()
	xvfb.Process.Kill()
	xvfb.Wait()
	os.Exit(code)
}

// binary is built once per run by the Makefile and named by CCMESH_DESKTOP_BIN.
func binary(t *testing.T) string {
	t.Helper()
	b := os.Getenv("CCMESH_DESKTOP_BIN")
	if b == "" {
		t.Fatal("CCMESH_DESKTOP_BIN is not set: run through `make test-desktop`")
	}
	return b
}

type instance struct {
	t      *testing.T
	cmd    *exec.Cmd
	addr   string
	data   string
	out    *strings.Builder
	exited chan error
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func start(t *testing.T, data, addr string, flags ...string) *instance {
	t.Helper()
	cmd := exec.Command(binary(t), append([]string{"--listen", addr, "--data", data, "--admin-token", token}, flags...)...)
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Env = append(os.Environ(), "WEBKIT_DISABLE_DMABUF_RENDERER=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	in := &instance{t: t, cmd: cmd, addr: addr, data: data, out: out, exited: make(chan error, 1)}
	go func() { in.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-in.exited
		}
		if t.Failed() {
			t.Logf("ccmesh output:\n%s", out.String())
		}
	})
	in.waitReady()
	return in
}

func (in *instance) waitReady() {
	in.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if st, _ := in.api("GET", "/api/info", ""); st == 200 {
			return
		}
		select {
		case err := <-in.exited:
			in.t.Fatalf("ccmesh exited during start-up: %v\n%s", err, in.out)
		case <-time.After(200 * time.Millisecond):
		}
	}
	in.t.Fatalf("ccmesh did not answer within 30s\n%s", in.out)
}

func (in *instance) api(method, path, body string) (int, string) {
	req, _ := http.NewRequest(method, "http://"+in.addr+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func (in *instance) message(stream bool) (*http.Response, error) {
	body := fmt.Sprintf(`{"model":"claude-sonnet-4-5","max_tokens":10,"stream":%v,"messages":[{"role":"user","content":"hi"}]}`, stream)
	req, _ := http.NewRequest("POST", "http://"+in.addr+"/v1/messages", strings.NewReader(body))
	req.Header.Set("anthropic-version", "2023-06-01")
	req.Header.Set("content-type", "application/json")
	return http.DefaultClient.Do(req)
}

// requestsInStats is today's requests by GET /api/stats, counted as the
// tray counts them (docs/BEHAVIOUR.md#statistics).
func (in *instance) requestsInStats(t *testing.T) int {
	t.Helper()
	now := time.Now()
	midnight := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.Local)
	q := url.Values{"from": {midnight.Format(time.RFC3339)}, "to": {now.Add(time.Hour).Format(time.RFC3339)}, "bucket": {"hour"}}
	st, body := in.api("GET", "/api/stats?"+q.Encode(), "")
	var stats struct {
		Buckets []struct {
			Requests int `json:"requests"`
		} `json:"buckets"`
	}
	if st != http.StatusOK || json.Unmarshal([]byte(body), &stats) != nil {
		t.Fatalf("GET /api/stats: %d %s", st, body)
	}
	n := 0
	for _, b := range stats.Buckets {
		n += b.Requests
	}
	return n
}

// busName finds the D-Bus connection of pid.
func busName(t *testing.T, pid int) string {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		out, err := exec.Command("gdbus", "call", "--session", "--dest", "org.freedesktop.DBus",
			"--object-path", "/org/freedesktop/DBus", "--method", "org.freedesktop.DBus.ListNames").Output()
		if err == nil {
			for _, name := range regexp.MustCompile(`':[0-9.]+'`).FindAllString(string(out), -1) {
				name = strings.Trim(name, "'")
				p, err := exec.Command("gdbus", "call", "-t", "3", "--session", "--dest", "org.freedesktop.DBus",
					"--object-path", "/org/freedesktop/DBus", "--method",
					"org.freedesktop.DBus.GetConnectionUnixProcessID", name).Output()
				if err == nil && strings.Contains(string(p), fmt.Sprintf("(uint32 %d,)", pid)) && hasMenu(name) {
					return name
				}
			}
		}
		time.Sleep(300 * time.Millisecond) // polling an external process
	}
	t.Fatalf("no D-Bus connection with a tray menu for pid %d", pid)
	return ""
}

const menuPath = "/org/ayatana/NotificationItem/systray/Menu"

func hasMenu(name string) bool {
	_, err := menuLayout(name)
	return err == nil
}

func menuLayout(name string) (string, error) {
	// "--" keeps gdbus from reading -1 as an option; -t keeps a busy
	// connection (the GTK one) from stalling the search.
	out, err := exec.Command("gdbus", "call", "-t", "3", "--session", "--dest", name, "--object-path", menuPath,
		"--method", "com.canonical.dbusmenu.GetLayout", "--", "0", "-1", "@as []").CombinedOutput()
	return string(out), err
}

var itemRe = regexp.MustCompile(`\((\d+), \{([^}]*)'label': <'([^']*)'>([^}]*)\}`)

// menu returns the tray's items, label → id.
func menu(t *testing.T, name string) map[string]string {
	t.Helper()
	out, err := menuLayout(name)
	if err != nil {
		t.Fatalf("GetLayout: %v: %s", err, out)
	}
	items := map[string]string{}
	for _, m := range itemRe.FindAllStringSubmatch(out, -1) {
		items[m[3]] = m[1]
	}
	return items
}

// trayItem is one item of the tray menu as a panel shows it.
type trayItem struct {
	label            string
	enabled, visible bool
}

// items returns the tray's items in menu order.
func items(t *testing.T, name string) []trayItem {
	t.Helper()
	out, err := menuLayout(name)
	if err != nil {
		t.Fatalf("GetLayout: %v: %s", err, out)
	}
	var list []trayItem
	for _, m := range itemRe.FindAllStringSubmatch(out, -1) {
		props := m[2] + m[4]
		list = append(list, trayItem{label: m[3],
			enabled: !strings.Contains(props, "'enabled': <false>"), visible: !strings.Contains(props, "'visible': <false>")})
	}
	return list
}

// shownLabel returns the label of a visible item that match accepts, or "".
func shownLabel(t *testing.T, name string, match func(string) bool) string {
	t.Helper()
	for _, it := range items(t, name) {
		if it.visible && match(it.label) {
			return it.label
		}
	}
	return ""
}

// statusRe reads the status line: address, healthy/all, today's requests.
var statusRe = regexp.MustCompile(`^(\S+) · (\d+)/(\d+) healthy · (\d+) requests?, \$\d+\.\d\d\+? today$`)

// requestsToday is the count the tray's status line shows.
func requestsToday(t *testing.T, name string) int {
	t.Helper()
	line := shownLabel(t, name, statusRe.MatchString)
	if line == "" {
		t.Fatalf("no status line in %v", items(t, name))
	}
	n, _ := strconv.Atoi(statusRe.FindStringSubmatch(line)[4])
	return n
}

func click(t *testing.T, name, label string) {
	t.Helper()
	var id string
	deadline := time.Now().Add(5 * time.Second)
	for id == "" && time.Now().Before(deadline) {
		id = menu(t, name)[label]
		if id == "" {
			time.Sleep(100 * time.Millisecond) // the label may be about to change
		}
	}
	if id == "" {
		t.Fatalf("no tray item %q in %v", label, menu(t, name))
	}
	out, err := exec.Command("gdbus", "call", "-t", "3", "--session", "--dest", name, "--object-path", menuPath,
		"--method", "com.canonical.dbusmenu.Event", "--", id, "clicked", "<int32 0>", "0").CombinedOutput()
	if err != nil {
		t.Fatalf("click %q: %v: %s", label, err, out)
	}
}

// eventually polls an external observation until it holds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond) // polling another process
	}
}

// syncBuilder is a strings.Builder safe for a writer goroutine and a reader.
type syncBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuilder) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuilder) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func (s *syncBuilder) Len() int { return len(s.String()) }

// hideWindow unmaps the window, as closing it does (HideWindowOnClose).
func hideWindow(t *testing.T) {
	t.Helper()
	out, err := exec.Command("xdotool", "search", "--name", "^ccmesh$").Output()
	if err != nil {
		t.Fatalf("find window: %v", err)
	}
	for _, w := range strings.Fields(string(out)) {
		exec.Command("xdotool", "windowunmap", w).Run()
	}
	eventually(t, "the window to hide", func() bool { return !windowVisible() })
}

// iconColour reads the tray icon the indicator exports (a PNG file named
// by its IconName property) and returns the colour at its centre.
func iconColour(t *testing.T, name string) string {
	t.Helper()
	out, err := exec.Command("gdbus", "call", "-t", "3", "--session", "--dest", name, "--object-path",
		"/org/ayatana/NotificationItem/systray", "--method", "org.freedesktop.DBus.Properties.Get",
		"org.kde.StatusNotifierItem", "IconName").CombinedOutput()
	if err != nil {
		t.Fatalf("IconName: %v %s", err, out)
	}
	m := regexp.MustCompile(`'([^']+)'`).FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("IconName: %s", out)
	}
	f, err := os.Open(m[1])
	if err != nil {
		return "" // replaced between the call and the open: ask again
	}
	defer f.Close()
	img, _, err := image.Decode(f)
	if err != nil {
		return ""
	}
	b := img.Bounds()
	r, g, bl, _ := img.At((b.Min.X+b.Max.X)/2, (b.Min.Y+b.Max.Y)/2).RGBA()
	return fmt.Sprintf("#%02x%02x%02x", r>>8, g>>8, bl>>8)
}

// Tray icon colours (app/desktop/view.go).
const (
	green = "#2ea043"
	red   = "#d03030"
	grey  = "#888888"
)

func windowVisible() bool {
	return exec.Command("xdotool", "search", "--onlyvisible", "--name", "^ccmesh$").Run() == nil
}

// fakeUpstream answers Anthropic Messages; a streamed answer takes ~2 s.
func fakeUpstream(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !strings.Contains(string(body), `"stream":true`) {
			w.Header().Set("content-type", "application/json")
			io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"hello"}],"stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":1}}`)
			return
		}
		w.Header().Set("content-type", "text/event-stream")
		fl := http.NewResponseController(w)
		send := func(ev, data string) {
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev, data)
			fl.Flush()
		}
		send("message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5","usage":{"input_tokens":3,"output_tokens":0}}}`)
		send("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
		for i := 0; i < 10; i++ {
			send("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"w%d "}}`, i))
			time.Sleep(200 * time.Millisecond) // the upstream's pacing, not a test wait
		}
		send("content_block_stop", `{"type":"content_block_stop","index":0}`)
		send("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":10}}`)
		send("message_stop", `{"type":"message_stop"}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func screenshot(t *testing.T, path string) image.Image {
	t.Helper()
	if out, err := exec.Command("import", "-window", "root", path).CombinedOutput(); err != nil {
		t.Fatalf("screenshot: %v: %s", err, out)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, _, err := image.Decode(f)
	if err != nil {
		t.Fatalf("decode %s: %v", path, err)
	}
	return img
}

// distinctColours counts colours on a grid of samples: a rendered page has
// many, a blank or black screen one or two.
func distinctColours(img image.Image) int {
	seen := map[[3]uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 7 {
		for x := b.Min.X; x < b.Max.X; x += 7 {
			r, g, bl, _ := img.At(x, y).RGBA()
			seen[[3]uint32{r >> 8, g >> 8, bl >> 8}] = true
		}
	}
	return len(seen)
}

func artifactsDir(t *testing.T) string {
	dir := os.Getenv("CCMESH_ARTIFACTS")
	if dir == "" {
		dir = t.TempDir()
	}
	os.MkdirAll(dir, 0o755)
	return dir
}

func TestDesktop(t *testing.T) {
	up := fakeUpstream(t)
	data := t.TempDir()
	addr := freeAddr(t)
	in := start(t, data, addr)
	if st, body := in.api("POST", "/api/endpoints", `{"name":"upstream-a","base_url":"`+up.URL+`","protocol":"anthropic","api_key":"sk-test-0000000000"}`); st != 201 {
		t.Fatalf("add endpoint: %d %s", st, body)
	}

	t.Run("window renders the endpoints screen", func(t *testing.T) {
		eventually(t, "the window to be visible", windowVisible)
		var img image.Image
		path := filepath.Join(artifactsDir(t), "desktop-window.png")
		eventually(t, "the UI to render", func() bool {
			img = screenshot(t, path)
			return distinctColours(img) > 20
		})
		t.Logf("screenshot: %s (%d colours sampled)", path, distinctColours(img))
	})

	name := busName(t, in.cmd.Process.Pid)

	t.Run("tray pause and resume", func(t *testing.T) {
		eventually(t, "a green icon", func() bool { return iconColour(t, name) == green })
		click(t, name, "Pause proxy")
		eventually(t, "a grey icon", func() bool { return iconColour(t, name) == grey })
		eventually(t, "the proxy to answer 503", func() bool {
			res, err := in.message(false)
			if err != nil {
				return false
			}
			res.Body.Close()
			return res.StatusCode == http.StatusServiceUnavailable
		})
		if _, ok := menu(t, name)["Resume proxy"]; !ok {
			eventually(t, "the item to read Resume proxy", func() bool { _, ok := menu(t, name)["Resume proxy"]; return ok })
		}
		click(t, name, "Resume proxy")
		eventually(t, "the proxy to answer 200", func() bool {
			res, err := in.message(false)
			if err != nil {
				return false
			}
			res.Body.Close()
			return res.StatusCode == http.StatusOK
		})
		eventually(t, "a green icon", func() bool { return iconColour(t, name) == green })
	})

	t.Run("tray status line", func(t *testing.T) {
		// docs/BEHAVIOUR.md#tray: address, healthy/all, today's requests and cost.
		eventually(t, "the status line", func() bool {
			m := statusRe.FindStringSubmatch(shownLabel(t, name, statusRe.MatchString))
			return m != nil && m[1] == addr && m[2] == "1" && m[3] == "1"
		})
	})

	t.Run("tray counts a request as it is logged", func(t *testing.T) {
		// The earlier steps' requests first reach the statistics and the tray.
		var before int
		eventually(t, "the tray to count what the statistics hold", func() bool {
			before = requestsToday(t, name)
			return before == in.requestsInStats(t)
		})
		res, err := in.message(false)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		// No timer of ours redraws the tray: the request's log event does.
		eventually(t, "the status line to count the request", func() bool { return requestsToday(t, name) == before+1 })
		eventually(t, "the statistics to count it too", func() bool { return in.requestsInStats(t) == before+1 })
	})

	t.Run("tray pause for 15 minutes", func(t *testing.T) {
		start := time.Now()
		click(t, name, "Pause for 15 minutes")
		var info struct {
			Paused      bool       `json:"paused"`
			PausedUntil *time.Time `json:"paused_until"`
		}
		eventually(t, "GET /api/info to say paused", func() bool {
			_, body := in.api("GET", "/api/info", "")
			return json.Unmarshal([]byte(body), &info) == nil && info.Paused
		})
		if info.PausedUntil == nil || info.PausedUntil.Before(start.Add(15*time.Minute-time.Second)) ||
			info.PausedUntil.After(time.Now().Add(15*time.Minute+time.Second)) {
			t.Errorf("paused until %v, want 15 minutes from %v", info.PausedUntil, start)
		}
		resume := "Resume proxy (paused until " + info.PausedUntil.Local().Format("15:04") + ")"
		eventually(t, "the pause item to read "+resume, func() bool { return shownLabel(t, name, func(l string) bool { return l == resume }) != "" })
		for _, it := range items(t, name) {
			if it.label == "Pause for 15 minutes" && it.enabled {
				t.Error("Pause for 15 minutes is offered while paused")
			}
		}
		eventually(t, "a grey icon", func() bool { return iconColour(t, name) == grey })

		click(t, name, resume)
		eventually(t, "GET /api/info to say resumed", func() bool {
			_, body := in.api("GET", "/api/info", "")
			return strings.Contains(body, `"paused":false,"paused_until":null`)
		})
		eventually(t, "the pause item to read Pause proxy", func() bool { _, ok := menu(t, name)["Pause proxy"]; return ok })
		eventually(t, "a green icon", func() bool { return iconColour(t, name) == green })
	})

	t.Run("tray open shows the hidden window", func(t *testing.T) {
		hideWindow(t)
		click(t, name, "Open ccmesh")
		eventually(t, "the window to show", windowVisible)
	})

	t.Run("second instance shows the first window, exits, and the first stays", func(t *testing.T) {
		hideWindow(t)
		second := exec.Command(binary(t), "--listen", freeAddr(t), "--data", data, "--admin-token", token)
		out, err := second.CombinedOutput()
		if err != nil {
			t.Fatalf("second instance: %v\n%s", err, out)
		}
		if !strings.Contains(string(out), "already running") {
			t.Errorf("second instance said %q, want it to say ccmesh is already running", out)
		}
		if st, _ := in.api("GET", "/api/info", ""); st != 200 {
			t.Errorf("first instance stopped answering after the second launch: %d", st)
		}
		eventually(t, "the first instance's window to show", windowVisible)
	})

	t.Run("notification when a breaker opens", func(t *testing.T) {
		mon := exec.Command("dbus-monitor", "--session", "interface='org.freedesktop.Notifications',member='Notify'")
		var seen syncBuilder
		mon.Stdout = &seen
		if err := mon.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { mon.Process.Kill(); mon.Wait() }()
		eventually(t, "dbus-monitor to start", func() bool { return strings.Contains(seen.String(), "NameAcquired") || seen.Len() > 0 })
		st, body := in.api("POST", "/api/endpoints", `{"name":"dead","base_url":"http://127.0.0.1:1","protocol":"anthropic","breaker_overrides":{"failure_threshold":1}}`)
		if st != 201 {
			t.Fatalf("add endpoint: %d %s", st, body)
		}
		req, _ := http.NewRequest("POST", "http://"+in.addr+"/v1/messages", strings.NewReader(`{"model":"claude-sonnet-4-5","max_tokens":5,"messages":[]}`))
		req.Header.Set("anthropic-version", "2023-06-01")
		req.Header.Set("x-ccmesh-endpoint", "dead")
		if res, err := http.DefaultClient.Do(req); err == nil {
			res.Body.Close()
		}
		eventually(t, "a Notify call about the dead endpoint", func() bool {
			return strings.Contains(seen.String(), "ccmesh: dead is unhealthy")
		})
		// The tray lists the change in words, from the request's events.
		eventually(t, "the tray to list the breaker change", func() bool {
			return shownLabel(t, name, func(l string) bool { return strings.HasSuffix(l, " dead: closed → open (broken)") }) != ""
		})
	})

	t.Run("idle with the window hidden: no timer, little CPU", func(t *testing.T) {
		hideWindow(t)
		idle(t, in, name)
		click(t, name, "Open ccmesh")
		eventually(t, "the window to show", windowVisible)
	})

	t.Run("quit lets a stream finish, keeps breaker state and window size", func(t *testing.T) {
		win, err := exec.Command("xdotool", "search", "--onlyvisible", "--name", "^ccmesh$").Output()
		if err != nil {
			t.Fatalf("find window: %v", err)
		}
		w := strings.Fields(string(win))[0]
		if out, err := exec.Command("xdotool", "windowsize", "--sync", w, "900", "700").CombinedOutput(); err != nil {
			t.Fatalf("resize: %v %s", err, out)
		}
		res, err := in.message(true)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		if !sc.Scan() {
			t.Fatal("stream ended before its first line")
		}
		if st, body := in.api("POST", "/api/endpoints/1/force-open", ""); st != 200 {
			t.Fatalf("force-open: %d %s", st, body)
		}
		eventually(t, "a red icon (no endpoint healthy)", func() bool { return iconColour(t, name) == red })
		click(t, name, "Quit")
		var rest strings.Builder
		for sc.Scan() {
			rest.WriteString(sc.Text() + "\n")
		}
		if !strings.Contains(rest.String(), "message_stop") {
			t.Errorf("stream cut by quit; got:\n%s", rest.String())
		}
		select {
		case err := <-in.exited:
			if err != nil {
				t.Errorf("exit after quit: %v", err)
			}
		case <-time.After(40 * time.Second):
			t.Fatal("ccmesh did not exit within the grace period after Quit")
		}

		again := start(t, data, addr)
		_, body := again.api("GET", "/api/health", "")
		if !strings.Contains(body, `"name":"upstream-a","status":"unhealthy","state":"open","reason":"manual"`) {
			t.Errorf("after restart, health = %s; want upstream-a forced open", body)
		}
		eventually(t, "the window to come back", windowVisible)
		var geom string
		eventually(t, "the window at its remembered size", func() bool {
			win, err := exec.Command("xdotool", "search", "--onlyvisible", "--name", "^ccmesh$").Output()
			if err != nil {
				return false
			}
			out, _ := exec.Command("xdotool", "getwindowgeometry", strings.Fields(string(win))[0]).Output()
			geom = string(out)
			return strings.Contains(geom, "Geometry: 900x700")
		})
	})
}

// cpu is what a process has used: CPU in clock ticks (utime+stime of
// /proc/PID/stat, every thread's, exited ones too), and per thread its
// on-CPU time in ns (/proc/PID/task/TID/schedstat, finer than ticks) and
// context switches (voluntary and not, /proc/PID/task/TID/status).
type cpu struct {
	ticks   int64
	threads map[string]thread
}

type thread struct{ ns, switches int64 }

// used is what c used since before: a thread that started meanwhile counts
// whole; one that ended meanwhile is missing from ns and switches.
func (c cpu) used(before cpu) (ticks, ns, switches int64) {
	for tid, th := range c.threads {
		ns += th.ns - before.threads[tid].ns
		switches += th.switches - before.threads[tid].switches
	}
	return c.ticks - before.ticks, ns, switches
}

func cpuOf(pid int) (cpu, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return cpu{}, err
	}
	// Fields after the command's closing parenthesis start at field 3;
	// utime and stime are fields 14 and 15.
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	c := cpu{ticks: ut + st, threads: map[string]thread{}}
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", pid))
	for _, task := range tasks {
		var th thread
		if b, err := os.ReadFile(task + "/schedstat"); err == nil {
			th.ns, _ = strconv.ParseInt(strings.Fields(string(b))[0], 10, 64)
		}
		b, err := os.ReadFile(task + "/status")
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.HasSuffix(k, "ctxt_switches") {
				n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				th.switches += n
			}
		}
		c.threads[filepath.Base(task)] = th
	}
	return c, nil
}

// descendants are pid's child processes and theirs (WebKitGTK's web and
// network processes).
func descendants(pid int) []int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	parent := map[int]int{}
	for _, s := range stats {
		b, err := os.ReadFile(s)
		if err != nil {
			continue
		}
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		p, _ := strconv.Atoi(f[1])
		c, _ := strconv.Atoi(filepath.Base(filepath.Dir(s)))
		parent[c] = p
	}
	var out []int
	for c := range parent {
		for p := parent[c]; p > 1; p = parent[p] {
			if p == pid {
				out = append(out, c)
				break
			}
		}
	}
	return out
}

// usage is the CPU of pid and, separately, of each of its descendants.
func usage(pid int) (cpu, map[int]cpu) {
	own, _ := cpuOf(pid)
	kids := map[int]cpu{}
	for _, c := range descendants(pid) {
		if u, err := cpuOf(c); err == nil {
			kids[c] = u
		}
	}
	return own, kids
}

// threadNames are the names (comm) of pid's threads.
func threadNames(pid int) []string {
	dirs, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/comm", pid))
	var names []string
	for _, d := range dirs {
		if b, err := os.ReadFile(d); err == nil {
			names = append(names, strings.TrimSpace(string(b)))
		}
	}
	return names
}

func clockTicks(t *testing.T) int64 {
	out, err := exec.Command("getconf", "CLK_TCK").Output()
	if err != nil {
		t.Fatalf("getconf CLK_TCK: %v", err)
	}
	hz, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil || hz <= 0 {
		t.Fatalf("CLK_TCK %q", out)
	}
	return hz
}

// idleFor is how long idle measures; CCMESH_IDLE_SECONDS changes it.
func idleFor() time.Duration {
	if s, err := strconv.Atoi(os.Getenv("CCMESH_IDLE_SECONDS")); err == nil && s > 0 {
		return time.Duration(s) * time.Second
	}
	return 60 * time.Second
}

// idle leaves the app alone for idleFor and reports what it cost: the
// ccmesh process's CPU and context switches, and its WebKit processes'.
// Nothing of ours ticks (docs/BEHAVIOUR.md#tray), so the tray sends no
// D-Bus signal meanwhile; a pause after it must send some, which shows
// the watch was listening.
func idle(t *testing.T, in *instance, name string) {
	t.Helper()
	mon := exec.Command("dbus-monitor", "--session", "type='signal',sender='"+name+"'")
	var seen syncBuilder
	mon.Stdout = &seen
	if err := mon.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { mon.Process.Kill(); mon.Wait() }()
	eventually(t, "dbus-monitor to start", func() bool { return seen.Len() > 0 })
	// Let what the last steps started settle: the health event's debounce,
	// the log writer's batch, WebKit after the window hid.
	time.Sleep(3 * time.Second) // the measured process's own pace, not a test wait
	signalsBefore := strings.Count(seen.String(), "sender="+name)

	pid := in.cmd.Process.Pid
	hz := clockTicks(t)
	own0, kids0 := usage(pid)
	began := time.Now()
	time.Sleep(idleFor()) // the measurement itself
	own1, kids1 := usage(pid)
	took := time.Since(began)
	signals := strings.Count(seen.String(), "sender="+name) - signalsBefore

	ticks, ns, switches := own1.used(own0)
	var kTicks, kNs, kSwitches int64
	for c, u := range kids1 {
		dt, dn, ds := u.used(kids0[c]) // a process that started meanwhile counts whole
		kTicks, kNs, kSwitches = kTicks+dt, kNs+dn, kSwitches+ds
	}
	words := func(ticks, ns, switches int64) string {
		return fmt.Sprintf("%d ms CPU (utime+stime; %.1f ms on-CPU by schedstat), %d context switches",
			ticks*1000/hz, float64(ns)/1e6, switches)
	}
	t.Logf("idle %.0f s with the window hidden: ccmesh (pid %d) %s; its %d WebKit processes %s; %d D-Bus signals from the tray",
		took.Seconds(), pid, words(ticks, ns, switches), len(kids1), words(kTicks, kNs, kSwitches), signals)
	if signals != 0 {
		t.Errorf("the tray sent %d D-Bus signals while idle:\n%s", signals, seen.String())
	}
	// WebKit's memory pressure monitor, a thread polling /proc every few
	// seconds, is off (app/desktop/desktop.go).
	if names := threadNames(pid); slices.Contains(names, "PressureMonitor") {
		t.Errorf("ccmesh runs WebKit's memory pressure monitor; its threads: %v", names)
	}
	// An idle ccmesh wakes for the Go runtime's own chores only: a ticker
	// of ours, even one a second, would show here.
	if perSec := float64(max(ticks*1000/hz, ns/1e6)) / took.Seconds(); perSec > 5 {
		t.Errorf("ccmesh used %.1f ms of CPU a second while idle", perSec)
	}

	click(t, name, "Pause proxy")
	eventually(t, "the pause to go out over D-Bus", func() bool {
		return strings.Count(seen.String(), "sender="+name) > signalsBefore+signals
	})
	click(t, name, "Resume proxy")
	eventually(t, "the item to read Pause proxy", func() bool { _, ok := menu(t, name)["Pause proxy"]; return ok })
}

// --minimized (what the start-at-login entry runs) starts with the tray
// and no window until the tray's Open.
func TestMinimized(t *testing.T) {
	in := start(t, t.TempDir(), freeAddr(t), "--minimized")
	pid := in.cmd.Process.Pid
	name := busName(t, pid) // the tray is registered
	if _, ok := menu(t, name)["Open ccmesh"]; !ok {
		t.Fatalf("tray menu without Open ccmesh: %v", menu(t, name))
	}
	mapped := func() bool {
		return exec.Command("xdotool", "search", "--onlyvisible", "--pid", strconv.Itoa(pid)).Run() == nil
	}
	// A normal start maps the window within a second or two of the tray
	// (TestDesktop); this one must not in that time.
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		if mapped() || windowVisible() {
			t.Fatal("a window is mapped with --minimized")
		}
	}
	click(t, name, "Open ccmesh")
	eventually(t, "the window to show after Open", mapped)
}
