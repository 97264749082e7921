// Command hedge measures first-token hedging (docs/BEHAVIOUR.md#hedging):
// ccmesh's proxy (package proxy, over real loopback HTTP) in front of two
// fake Anthropic upstreams, the first of which holds its first content for
// 5 s on 10 % of requests, chosen at random. The same requests run with
// hedging off and at 300 ms; the program prints the time to the first
// content event (p50, p99) and the share of extra upstream requests the
// hedges cost. See bench/NOTES.md.
//
//	go run ./bench/hedge
package main

import (
	"bufio"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/ccmesh/ccmesh/breaker"
	"github.com/ccmesh/ccmesh/proxy"
	"github.com/ccmesh/ccmesh/proxy/translate/anthropic"
)

const (
	requests    = 400
	concurrency = 8
	stallShare  = 0.10
	stall       = 5 * time.Second
)

func main() {
	fmt.Printf("%d streamed requests, %d at a time; endpoint a holds its first content %s on %.0f %% of them\n\n",
		requests, concurrency, stall, stallShare*100)
	fmt.Println("| hedge_after_ms | first content p50 | p99 | extra upstream requests |")
	fmt.Println("|---:|---:|---:|---:|")
	for _, after := range []time.Duration{0, 300 * time.Millisecond} {
		p50, p99, extra, err := run(after)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("| %d | %s | %s | %.1f %% |\n", after.Milliseconds(), p50.Round(10*time.Microsecond), p99.Round(time.Millisecond), extra*100)
	}
}

// upstream answers a Messages stream; stalls says whether this request
// holds its first content for the stall.
func upstream(count *atomic.Int64, stalls func() bool) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		count.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		f := w.(http.Flusher)
		ev := func(name, data string) {
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, data)
			f.Flush()
		}
		ev("message_start", `{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"model":"x","usage":{"input_tokens":10,"output_tokens":1}}}`)
		if stalls() {
			select {
			case <-time.After(stall):
			case <-r.Context().Done():
				return
			}
		}
		ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
		ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}`)
		ev("content_block_stop", `{"type":"content_block_stop","index":0}`)
		ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}`)
		ev("message_stop", `{"type":"message_stop"}`)
	}))
}

func run(after time.Duration) (p50, p99 time.Duration, extra float64, err error) {
	var na, nb atomic.Int64
	rng := rand.New(rand.NewPCG(1, 2)) // the same stalls in both runs
	var mu sync.Mutex
	a := upstream(&na, func() bool { mu.Lock(); defer mu.Unlock(); return rng.Float64() < stallShare })
	defer a.Close()
	b := upstream(&nb, func() bool { return false })
	defer b.Close()
	srv := proxy.New(proxy.Options{Breakers: breaker.NewSet(breaker.Config{}, nil), Logger: zerolog.Nop()})
	srv.Update(proxy.Config{HedgeAfter: after, Endpoints: []proxy.Endpoint{
		{ID: 1, Name: "a", BaseURL: a.URL, APIKey: "k", Protocol: anthropic.Protocol, Enabled: true, SortOrder: 1, HedgeAfter: proxy.HedgeSetting},
		{ID: 2, Name: "b", BaseURL: b.URL, APIKey: "k", Protocol: anthropic.Protocol, Enabled: true, SortOrder: 2, HedgeAfter: proxy.HedgeSetting},
	}})
	front := httptest.NewServer(srv)
	defer front.Close()

	times := make([]time.Duration, requests)
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, concurrency)
	for range concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < requests; i = int(next.Add(1) - 1) {
				d, err := firstContent(front.URL)
				if err != nil {
					errs <- err
					return
				}
				times[i] = d
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return 0, 0, 0, err
	}
	slices.Sort(times)
	upstreamRequests := na.Load() + nb.Load()
	return times[requests/2], times[requests*99/100], float64(upstreamRequests-requests) / requests, nil
}

// firstContent sends one streamed request and times its first content
// event.
func firstContent(base string) (time.Duration, error) {
	body := `{"model":"claude-sonnet-4-5","stream":true,"max_tokens":64,"messages":[{"role":"user","content":"hi"}]}`
	req, err := http.NewRequest(http.MethodPost, base+"/v1/messages", strings.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("anthropic-version", "2023-06-01")
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	var first time.Duration
	for sc.Scan() {
		if first == 0 && strings.HasPrefix(sc.Text(), "event: content_block_start") {
			first = time.Since(start)
		}
	}
	if first == 0 {
		return 0, fmt.Errorf("status %d: no content", resp.StatusCode)
	}
	return first, sc.Err()
}
