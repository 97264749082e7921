// Command upstream is the benchmarks' fake Anthropic API: as fast as a Go
// net/http server can answer, so that what a benchmark measures is the
// proxy in front of it. POST /v1/messages answers a fixed JSON message, or,
// when the body asks for "stream":true, an SSE stream of -events events
// -interval apart whose data carry their send time ("ts", unix ns) and
// position ("seq"), so a client can measure each event's delay through a
// proxy. POST /v1/chat/completions answers the same in the Chat Completions
// shape; its streamed content chunks carry "seq=N ts=UNIXNS" inside their
// text, so the times survive a proxy that translates the stream (chat.go).
package main

import (
	"context"
	"flag"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/ccmesh/ccmesh/bench/internal/serve"
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
	if err := serve.Serve(ctx, *listen, *portFile, &Handler{Events: *events, Interval: *interval}); err != nil {
		log.Fatalf("upstream: %v", err)
	}
}
