// Command upstream is the benchmarks' fake Anthropic API: as fast as a Go
// net/http server can answer, so that what a benchmark measures is the
// proxy in front of it. POST /v1/messages answers a fixed JSON message, or,
// when the body asks for "stream":true, an SSE stream of -events events
// -interval apart whose data carry their send time ("ts", unix ns) and
// position ("seq"), so a client can measure each event's delay through a
// proxy.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on (port 0 picks one)")
	events := flag.Int("events", 16, "events per SSE stream (at least 5: message_start … message_stop)")
	interval := flag.Duration("interval", 20*time.Millisecond, "time between SSE events")
	portFile := flag.String("port-file", "", "if set, write the bound address here once listening")
	flag.Parse()
	if *events < minEvents {
		log.Fatalf("upstream: -events %d: need at least %d", *events, minEvents)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *listen, *portFile, &Handler{Events: *events, Interval: *interval}); err != nil {
		log.Fatalf("upstream: %v", err)
	}
}

func run(ctx context.Context, addr, portFile string, h http.Handler) error {
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	if portFile != "" {
		// Written after Listen succeeded, so a script that sees the file
		// can connect at once.
		if err := os.WriteFile(portFile, []byte(ln.Addr().String()), 0o600); err != nil {
			return fmt.Errorf("write port file: %w", err)
		}
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}
