// Package app joins the store, the breakers and the proxy: it owns the
// immutable configuration snapshot, persists breaker transitions, serves the
// admin API and the UI, and fans change events out to the UI's live stream.
package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/ccmesh/ccmesh/app/balance"
	"github.com/ccmesh/ccmesh/app/desktop"
	"github.com/ccmesh/ccmesh/app/health"
	"github.com/ccmesh/ccmesh/app/pause"
	"github.com/ccmesh/ccmesh/app/persist"
	"github.com/ccmesh/ccmesh/app/probe"
	"github.com/ccmesh/ccmesh/app/stats"
	"github.com/ccmesh/ccmesh/app/update"
	"github.com/ccmesh/ccmesh/breaker"
	"github.com/ccmesh/ccmesh/proxy"
	"github.com/ccmesh/ccmesh/store"
)

// Options configure an App. The zero value of each optional field works.
type Options struct {
	DataDir string // required: where ccmesh.db, the admin token and logs live
	Listen  string // the proxy's address, shown in the UI and the export lines
	// ListenIsFlag: Listen came from --listen and wins over the listen
	// setting; otherwise a saved setting replaces it at start.
	ListenIsFlag bool
	AdminToken   string // empty: read from DataDir/admin-token, or made there once
	Logger       zerolog.Logger
	Headless     bool
	// Minimized starts the desktop build with no window until the tray's
	// Open (--minimized; what the start-at-login entry runs).
	Minimized bool
	// HomeDir is where ~/.claude/settings.json lives; empty = os.UserHomeDir().
	HomeDir string
	// Transport reaches the upstreams (proxy, Test, Fetch models); nil = default.
	Transport http.RoundTripper
	// MetricsListen is a loopback address serving GET /metrics without the
	// admin token (--metrics-listen); empty: only the main listener's
	// /metrics, behind the token (docs/BEHAVIOUR.md#metrics).
	MetricsListen string
}

// State is the immutable configuration snapshot. Readers load it atomically
// and never touch the database; every change publishes a new one.
type State struct {
	Endpoints []store.Endpoint // in list order
	Settings  Settings
	Prices    *Prices // the user's price rows, then the shipped ones (docs/BEHAVIOUR.md#cost)
}

// App is the application service.
type App struct {
	opts     Options
	log      zerolog.Logger
	db       *store.DB
	breakers *breaker.Set
	// keyBreakers are the breakers of pool keys, by key id (keys.go);
	// knownKeys the ids configured by the last reload.
	keyBreakers *breaker.Set
	knownKeys   map[int64]bool
	keyFails    health.KeyFailures // each key's last failure, for health
	proxy       *proxy.Server
	logw        *store.LogWriter
	events      *Hub
	figures     *health.Stats     // the request log's figures, for health
	upstream    http.RoundTripper // the admin side's upstream calls (Test, Fetch models)
	token       string

	today   stats.Today    // today's requests and cost, for the tray
	recent  desktop.Recent // the latest breaker changes, for the tray
	state   atomic.Pointer[State]
	writeMu sync.Mutex   // serialises store writes with the snapshot that follows them
	pause   *pause.State // paused, and a timed pause's timer (app/pause)

	persist *persist.Breakers // breaker transitions, saved off the request path (app/persist)
	learn   *persist.Drops    // what the proxy learns endpoints refuse (app/persist)
	bal     *balance.Book     // balance readings and their schedule (app/balance)
	upd     *update.Checker   // the opt-in update check (app/update)
	health  *health.Publisher
	metrics *metrics     // GET /metrics (metrics.go)
	metLn   net.Listener // the --metrics-listen listener, opened by Listen

	tests *probe.Results // the last Test of each endpoint and key (upstream.go)

	// Set by the desktop shell; nil when headless.
	showWindow atomic.Pointer[func()]
	notifier   atomic.Pointer[func(title, body string) error]

	closing    chan struct{} // closed when the server shuts down: ends event streams
	closingOne sync.Once

	stop     context.CancelFunc
	loops    sync.WaitGroup
	closeOne sync.Once
}

// DBFile is the database file name inside the data dir.
const DBFile = "ccmesh.db"

// New opens the database in opts.DataDir, restores breaker state and builds
// the proxy. Call Close when done.
func New(ctx context.Context, opts Options) (*App, error) {
	if opts.DataDir == "" {
		return nil, errors.New("app: no data dir")
	}
	if err := os.MkdirAll(opts.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("create data dir %s: %w", opts.DataDir, err)
	}
	if err := checkMetricsListen(opts.MetricsListen); err != nil {
		return nil, err
	}
	token, err := loadAdminToken(opts.DataDir, opts.AdminToken)
	if err != nil {
		return nil, err
	}
	db, err := store.Open(ctx, filepath.Join(opts.DataDir, DBFile))
	if err != nil {
		return nil, err
	}
	a := &App{
		opts:    opts,
		log:     opts.Logger,
		db:      db,
		events:  NewHub(),
		figures: health.NewStats(),
		token:   token,
		closing: make(chan struct{}),
	}
	a.upstream = opts.Transport
	if a.upstream == nil {
		// As the proxy's own: no proxy taken from the environment.
		a.upstream = proxy.NewTransport()
	}
	// Before the breakers: restoring them at start already reports transitions.
	a.persist = persist.NewBreakers(db, a.log, breakerSource{a})
	a.tests = probe.NewResults(db, a.log)
	a.health = health.NewPublisher(healthHost{a})
	a.pause = pause.New(pauseHost{a})
	a.learn = persist.NewDrops(dropsHost{a}, db, a.log)
	a.bal = newBalances(a, a.upstream)
	a.metrics = newMetrics(a)
	a.upd = newUpdater(a, a.upstream)
	if err := a.start(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return a, nil
}

func (a *App) start(ctx context.Context) error {
	settings, err := a.loadSettings(ctx)
	if err != nil {
		return fmt.Errorf("load settings: %w", err)
	}
	if !a.opts.ListenIsFlag && settings.Listen != "" {
		a.opts.Listen = settings.Listen
	}
	a.breakers = breaker.NewSet(breakerConfig(settings), a.onTransition)
	a.keyBreakers = breaker.NewSet(breakerConfig(settings), a.onKeyTransition)
	rows, err := a.db.LoadBreakerStates(ctx)
	if err != nil {
		return fmt.Errorf("load breaker states: %w", err)
	}
	for _, r := range rows {
		snap, err := persist.SnapshotFrom(r)
		if err != nil {
			a.log.Warn().Err(err).Int64("endpoint", r.EndpointID).Msg("skipping unreadable breaker state")
			continue
		}
		a.breakers.Get(r.EndpointID).Restore(snap)
	}
	if err := a.tests.Load(ctx); err != nil {
		return fmt.Errorf("load test results: %w", err)
	}
	if err := a.bal.Load(ctx); err != nil {
		return fmt.Errorf("load balance readings: %w", err)
	}
	a.logw = store.NewLogWriter(a.db, store.LogWriterOptions{
		OnWrite:      a.onLogsWritten,
		OnFail:       func(int) { a.health.Changed() },
		Retention:    a.retention,
		CaptureTotal: a.captureTotal,
		Logger:       a.log,
	})
	if err := a.today.Load(ctx, a.db, time.Now()); err != nil {
		return fmt.Errorf("load today's cost: %w", err)
	}
	if err := a.recent.Load(ctx, a.db); err != nil {
		return fmt.Errorf("load the latest breaker changes: %w", err)
	}
	a.proxy = proxy.New(proxy.Options{
		Breakers:    a.breakers,
		KeyBreakers: a.keyBreakers,
		Sink:        logSink{a},
		Logger:      a.log.With().Str("component", "proxy").Logger(),
		Transport:   a.opts.Transport,
		OnLearn:     a.learn.Queue,
	})
	if err := a.reload(ctx); err != nil {
		return err
	}
	loopCtx, cancel := context.WithCancel(context.Background())
	a.stop = cancel
	a.loops.Add(6)
	go func() { defer a.loops.Done(); a.persist.Run(loopCtx) }()
	go func() { defer a.loops.Done(); a.learn.Run(loopCtx) }()
	// Off the start-up path, as the request log's other reads are.
	go func() { defer a.loops.Done(); a.loadOtherModels(loopCtx, time.Now()) }()
	go func() { defer a.loops.Done(); a.bal.Run(loopCtx) }()
	go func() { defer a.loops.Done(); a.bal.Schedule().Run(loopCtx) }()
	// Its first check, when on, runs here: off the start-up path.
	go func() { defer a.loops.Done(); a.upd.Schedule().Run(loopCtx) }()
	if st := a.state.Load(); st.Settings.BalanceRefreshMinutes > 0 {
		a.bal.Ask(0) // what is left now, rather than in one interval
	}
	return nil
}

// Close flushes the request log and breaker state and closes the database.
// In-flight requests should be drained (http.Server.Shutdown) before.
func (a *App) Close(ctx context.Context) error {
	var err error
	a.closeOne.Do(func() {
		a.stop()
		a.pause.Stop()
		a.loops.Wait()
		a.health.Close()
		err = errors.Join(a.logw.Close(ctx), a.persist.Flush(ctx), a.db.Close())
	})
	return err
}

// Snapshot returns the current configuration; callers must not modify it.
func (a *App) Snapshot() *State { return a.state.Load() }

// AdminToken is the token the admin API and the UI link require.
func (a *App) AdminToken() string { return a.token }

// Breakers is the shared breaker set.
func (a *App) Breakers() *breaker.Set { return a.breakers }

// Events is the change-event hub (the UI's live stream).
func (a *App) Events() *Hub { return a.events }

// reload reads endpoints and settings and publishes them to the breakers,
// the proxy and the UI. Callers hold writeMu (or are starting up).
func (a *App) reload(ctx context.Context) error {
	eps, err := a.db.ListEndpoints(ctx)
	if err != nil {
		return fmt.Errorf("load endpoints: %w", err)
	}
	overrides := make([]breaker.Overrides, len(eps))
	for i, e := range eps {
		if overrides[i], err = endpointOverrides(e); err != nil {
			return fmt.Errorf("load endpoints: %w", err)
		}
	}
	settings, err := a.loadSettings(ctx)
	if err != nil {
		return fmt.Errorf("load settings: %w", err)
	}
	st := &State{Endpoints: eps, Settings: settings, Prices: NewPrices(settings.Prices)}
	a.breakers.SetConfig(breakerConfig(settings))
	for i, e := range eps {
		a.breakers.SetOverrides(e.ID, overrides[i])
	}
	a.configureKeyBreakers(eps, overrides, breakerConfig(settings))
	a.proxy.Update(proxyConfig(eps, settings, a.opts.Listen))
	a.state.Store(st)
	a.tests.Forget(eps)
	a.bal.Configure(st.Endpoints, st.Settings.BalanceRefreshMinutes)
	a.upd.Configure(st.Settings.UpdateCheck)
	return nil
}

func (a *App) retention() (int, time.Duration) {
	s := a.state.Load()
	if s == nil {
		d := DefaultSettings()
		return d.LogRetentionRows, time.Duration(d.LogRetentionDays) * 24 * time.Hour
	}
	return s.Settings.LogRetentionRows, time.Duration(s.Settings.LogRetentionDays) * 24 * time.Hour
}

// captureTotal is the capture_total_bytes setting, for the log writer.
func (a *App) captureTotal() int64 {
	if s := a.state.Load(); s != nil {
		return s.Settings.CaptureTotalBytes
	}
	return DefaultSettings().CaptureTotalBytes
}

// onTransition runs on whatever goroutine reported the outcome, often a
// request's: neither the write nor the notification may happen on it.
func (a *App) onTransition(t breaker.Transition) {
	a.persist.Queue(t)
	a.noteTransition(t)
	a.notifyTransition(t)
	a.noteQuotaError(t)
	if t.Cause != breaker.CauseRestore { // restoring happens before the App is whole
		a.health.Changed()
	}
}

func (a *App) endpointName(id int64) string {
	if s := a.state.Load(); s != nil {
		for _, e := range s.Endpoints {
			if e.ID == id {
				return e.Name
			}
		}
	}
	return ""
}

func (a *App) endpointByID(id int64) (store.Endpoint, bool) {
	for _, e := range a.state.Load().Endpoints {
		if e.ID == id {
			return e, true
		}
	}
	return store.Endpoint{}, false
}
