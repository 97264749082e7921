// Command baseline is the yardstick of the benchmarks: a bare
// httputil.ReverseProxy to one upstream, flushing at once
// (FlushInterval -1) so SSE passes through event by event. It has the same
// upstream pool size as ccmesh's transport (64 idle connections per host),
// so the comparison measures the proxies and not connection churn from
// net/http's default of 2.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/signal"
	"syscall"

	"github.com/ccmesh/ccmesh/bench/internal/serve"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on")
	upstream := flag.String("upstream", "", "upstream base URL, e.g. http://127.0.0.1:9000")
	portFile := flag.String("port-file", "", "if set, write the bound address here once listening")
	hold := flag.Bool("hold-prelude", false, "hold a stream's first event and the header until its second event, as ccmesh does")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *listen, *upstream, *portFile, *hold); err != nil {
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

func run(ctx context.Context, addr, upstream, portFile string, hold bool) error {
	rp, err := newProxy(upstream)
	if err != nil {
		return err
	}
	var h http.Handler = rp
	if hold {
		h = holdPrelude(rp)
	}
	return serve.Serve(ctx, addr, portFile, h)
}
