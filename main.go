// Command ccmesh is a local proxy that spreads Claude Code and OpenAI-style
// clients over several upstream endpoints, with a circuit breaker per
// endpoint. A plain build is headless; `-tags desktop,production,webkit2_41`
// adds the window and the tray (see README).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"

	"github.com/rs/zerolog"
	"gopkg.in/natefinch/lumberjack.v2"

	"github.com/ccmesh/ccmesh/app"
)

type config struct {
	listen, data, adminToken, logLevel string
	metricsListen                      string
	headless, listenIsFlag             bool
	minimized, version                 bool
}

func parseFlags(args []string) (config, error) {
	var c config
	fs := flag.NewFlagSet("ccmesh", flag.ContinueOnError)
	fs.StringVar(&c.listen, "listen", "127.0.0.1:3457", "address of the proxy, the admin API and the UI (wins over the listen setting)")
	fs.StringVar(&c.data, "data", defaultDataDir(), "data directory (database, admin token, logs)")
	fs.StringVar(&c.adminToken, "admin-token", os.Getenv("CCMESH_ADMIN_TOKEN"), "admin token for the API and UI (env CCMESH_ADMIN_TOKEN; default: made once and kept in the data dir)")
	fs.BoolVar(&c.headless, "headless", false, "run without window and tray (always so in a build without the desktop tag)")
	fs.StringVar(&c.metricsListen, "metrics-listen", "", "loopback address (127.0.0.1:PORT) serving /metrics without the admin token; default: only /metrics on --listen, with the token")
	fs.StringVar(&c.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.BoolVar(&c.minimized, "minimized", false, "desktop build: start in the tray with no window until its Open (what start at login runs)")
	fs.BoolVar(&c.version, "version", false, "print the version, commit and build date, and exit")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	fs.Visit(func(f *flag.Flag) { c.listenIsFlag = c.listenIsFlag || f.Name == "listen" })
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q (flags start with --)", fs.Arg(0))
	}
	return c, nil
}

func defaultDataDir() string {
	if d, err := os.UserConfigDir(); err == nil {
		return filepath.Join(d, "ccmesh")
	}
	return ".ccmesh"
}

// newLogger logs to stderr and to a rotating file in the data dir.
func newLogger(c config) (zerolog.Logger, io.Closer, error) {
	lvl, err := zerolog.ParseLevel(strings.ToLower(c.logLevel))
	if err != nil || lvl == zerolog.NoLevel {
		return zerolog.Logger{}, nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", c.logLevel)
	}
	if err := os.MkdirAll(c.data, 0o700); err != nil {
		return zerolog.Logger{}, nil, fmt.Errorf("create data dir %s: %w", c.data, err)
	}
	file := &lumberjack.Logger{Filename: filepath.Join(c.data, "ccmesh.log"), MaxSize: 20, MaxBackups: 3}
	console := zerolog.ConsoleWriter{Out: os.Stderr, TimeFormat: "15:04:05"}
	l := zerolog.New(zerolog.MultiLevelWriter(console, file)).Level(lvl).With().Timestamp().Logger()
	return l, file, nil
}

// hasDisplay: on Linux the window needs an X11 or Wayland display; without
// one ccmesh runs headless, as on a server.
func hasDisplay() bool {
	if runtime.GOOS != "linux" {
		return true
	}
	return os.Getenv("DISPLAY") != "" || os.Getenv("WAYLAND_DISPLAY") != ""
}

func main() {
	c, err := parseFlags(os.Args[1:])
	if err != nil {
		if err == flag.ErrHelp {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "ccmesh:", err)
		os.Exit(2)
	}
	if c.version {
		fmt.Println(app.VersionLine())
		return
	}
	log, closer, err := newLogger(c)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ccmesh:", err)
		os.Exit(2)
	}
	defer closer.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	opts := app.Options{DataDir: c.data, Listen: c.listen, ListenIsFlag: c.listenIsFlag, AdminToken: c.adminToken, Logger: log, Minimized: c.minimized,
		MetricsListen: c.metricsListen}
	if !c.headless && app.DesktopAvailable && hasDisplay() {
		err = app.RunDesktop(ctx, opts)
	} else {
		err = app.RunHeadless(ctx, opts)
	}
	if err != nil {
		log.Error().Err(err).Msg("ccmesh stopped")
		closer.Close()
		os.Exit(1)
	}
}
