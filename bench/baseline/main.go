// Command baseline is the yardstick of the benchmarks: a bare
// httputil.ReverseProxy to one upstream, flushing at once
// (FlushInterval -1) so SSE passes through event by event. It has the same
// upstream pool size as ccmesh's transport (64 idle connections per host),
// so the comparison measures the proxies and not connection churn from
// net/http's default of 2.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on")
	upstream := flag.String("upstream", "", "upstream base URL, e.g. http://127.0.0.1:9000")
	portFile := flag.String("port-file", "", "if set, write the bound address here once listening")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *listen, *upstream, *portFile); err != nil {
		log.Fatalf("baseline: %v", err)
	}
}

// newProxy is the whole baseline: nothing but ReverseProxy's defaults, an
// immediate flush and a pool as large as ccmesh's.
func newProxy(upstream string) (*httputil.ReverseProxy, error) {
	target, err := url.Parse(upstream)
	if err != nil || target.Scheme == "" || target.Host == "" {
		return nil, fmt.Errorf("parse upstream %q: want an absolute http URL (%v)", upstream, err)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = 256
	tr.MaxIdleConnsPerHost = 64
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Host = target.Host
		},
		FlushInterval: -1,
		Transport:     tr,
	}, nil
}

func run(ctx context.Context, addr, upstream, portFile string) error {
	rp, err := newProxy(upstream)
	if err != nil {
		return err
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	if portFile != "" {
		if err := os.WriteFile(portFile, []byte(ln.Addr().String()), 0o600); err != nil {
			return fmt.Errorf("write port file: %w", err)
		}
	}
	srv := &http.Server{Handler: rp, ReadHeaderTimeout: 10 * time.Second}
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
