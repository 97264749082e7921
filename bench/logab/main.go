// Command logab serves ccmesh's proxy (package proxy, the code ccmesh runs)
// with request logging off or on, so the benchmarks can measure what the
// request log costs: ccmesh itself has no switch to turn it off.
//
//	-log off  the proxy's sink is nil: records are made and dropped
//	-log on   every record goes, as in ccmesh, to a store.LogWriter that
//	          writes batches into a SQLite database in -data
//
// The rest of app's sink (the in-memory health figures) is left out of both;
// the difference between the two modes is the log writer alone.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/ccmesh/ccmesh/app"
	"github.com/ccmesh/ccmesh/bench/internal/serve"
	"github.com/ccmesh/ccmesh/breaker"
	"github.com/ccmesh/ccmesh/proxy"
	"github.com/ccmesh/ccmesh/proxy/translate/anthropic"
	"github.com/ccmesh/ccmesh/store"
)

type config struct {
	listen, upstream, mode, data, portFile string
	batch                                  int
}

func main() {
	var c config
	flag.StringVar(&c.listen, "listen", "127.0.0.1:0", "address to listen on")
	flag.StringVar(&c.upstream, "upstream", "", "upstream base URL (an Anthropic endpoint)")
	flag.StringVar(&c.mode, "log", "on", "request logging: on or off")
	flag.StringVar(&c.data, "data", "", "directory for the log database (required with -log on)")
	flag.StringVar(&c.portFile, "port-file", "", "if set, write the bound address here once listening")
	flag.IntVar(&c.batch, "batch", 0, "log writer batch size (0: store's default), to try smaller write bursts")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, c); err != nil {
		log.Fatalf("logab: %v", err)
	}
}

func run(ctx context.Context, c config) error {
	if c.upstream == "" {
		return errors.New("-upstream is required")
	}
	var sink proxy.LogSink
	switch c.mode {
	case "off":
	case "on":
		if c.data == "" {
			return errors.New("-log on needs -data")
		}
		db, err := store.Open(ctx, filepath.Join(c.data, "logab.db"))
		if err != nil {
			return fmt.Errorf("open log database: %w", err)
		}
		defer db.Close()
		w := store.NewLogWriter(db, store.LogWriterOptions{BatchSize: c.batch})
		defer func() {
			closeCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = w.Close(closeCtx)
		}()
		sink = writerSink{w}
	default:
		return fmt.Errorf("-log %q: want on or off", c.mode)
	}
	srv := proxy.New(proxy.Options{Breakers: breaker.NewSet(breaker.Config{}, nil), Sink: sink, Logger: zerolog.Nop()})
	srv.Update(proxy.Config{Endpoints: []proxy.Endpoint{{
		ID: 1, Name: "up", BaseURL: c.upstream, APIKey: "k-123456789",
		Protocol: anthropic.Protocol, Auth: proxy.AuthAuto, Enabled: true,
	}}})
	return serve.Serve(ctx, c.listen, c.portFile, srv)
}

// writerSink turns a proxy record into the row ccmesh's app would queue.
type writerSink struct{ w *store.LogWriter }

func (s writerSink) Log(r *proxy.Record) { s.w.Enqueue(app.LogRow(r)) }
