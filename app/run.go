package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/ccmesh/ccmesh/app/platform"
	"github.com/ccmesh/ccmesh/internal/logcode"
)

// ShutdownGrace is how long in-flight requests (streams included) may run
// on after a stop is asked for.
const ShutdownGrace = 30 * time.Second

// Listen opens the proxy's port, refusing a non-loopback address unless a
// client token is set (docs/BEHAVIOUR.md#safety), and the metrics port
// when --metrics-listen names one; Serve serves both.
func (a *App) Listen() (net.Listener, error) {
	if !ListenerIsLoopback(a.opts.Listen) && a.state.Load().Settings.ClientToken == "" {
		return nil, fmt.Errorf("refusing to listen on %s: a non-loopback address needs a client token "+
			"(set client_token in the settings while running on 127.0.0.1 first)", a.opts.Listen)
	}
	ln, err := net.Listen("tcp", a.opts.Listen)
	if err != nil {
		return nil, fmt.Errorf("listen on %s (is another ccmesh or program using the port? choose another with --listen): %w", a.opts.Listen, err)
	}
	if a.metLn, err = a.listenMetrics(); err != nil {
		ln.Close()
		return nil, err
	}
	return ln, nil
}

// Serve serves Handler on ln until ctx ends, then shuts down gracefully:
// new connections are refused and requests in flight get ShutdownGrace.
func (a *App) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           a.Handler(),
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       5 * time.Minute,
		ErrorLog:          nil,
	}
	// Event streams never end on their own: without this, every open UI
	// would hold the shutdown for the whole grace period.
	srv.RegisterOnShutdown(a.endStreams)
	if a.metLn != nil {
		defer a.serveMetrics(a.metLn)()
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	go a.checkHistory(ctx)
	select {
	case err := <-errc:
		return fmt.Errorf("serve %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	a.log.Info().Dur("grace", ShutdownGrace).Msg("shutting down: letting requests in flight finish")
	sctx, cancel := context.WithTimeout(context.Background(), ShutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		a.log.Warn().Err(err).Msg("grace period over; closing remaining connections")
		srv.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// startServing opens the app and its port and prints the start-up line.
func startServing(ctx context.Context, opts Options, inst *platform.Instance) (*App, net.Listener, error) {
	a, err := New(ctx, opts)
	if err != nil {
		return nil, nil, err
	}
	ln, err := a.Listen()
	if err != nil {
		a.Close(context.Background())
		return nil, nil, err
	}
	if err := inst.SetAddress(ln.Addr().String()); err != nil {
		a.log.Warn().Err(err).Msg("could not record the address in the lock file")
	}
	fmt.Printf("ccmesh %s listening on %s — UI: %s/ui/?token=%s\n", Version, a.ProxyURL(), a.ProxyURL(), url.QueryEscape(a.AdminToken()))
	return a, ln, nil
}

// checkHistory checks the request log's tables once ccmesh serves (start-up
// checks only the configuration's, to start fast); damage there is logged
// for the user to act on, and ccmesh keeps serving.
func (a *App) checkHistory(ctx context.Context) {
	err := a.db.CheckHistory(ctx)
	switch {
	case err == nil:
		a.log.Debug().Msg("request log tables checked")
	case ctx.Err() == nil:
		a.log.Error().Err(err).Str(logcode.Field, logcode.LogTablesDamaged).Msg("request log tables damaged")
	}
}

// RunHeadless serves the proxy, the admin API and the UI until ctx ends.
func RunHeadless(ctx context.Context, opts Options) error {
	opts.Headless = true
	inst, running, err := platform.AcquireInstance(opts.DataDir)
	if errors.Is(err, platform.ErrAlreadyRunning) {
		return fmt.Errorf("%w (data dir %s, listening on %s); stop it or use another --data", err, opts.DataDir, running)
	}
	if err != nil {
		return err
	}
	defer inst.Release()
	a, ln, err := startServing(ctx, opts, inst)
	if err != nil {
		return err
	}
	return errors.Join(a.Serve(ctx, ln), a.Close(context.Background()))
}
