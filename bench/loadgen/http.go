package main

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// newClient keeps exactly conns connections to the target.
func newClient(conns int) *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy:               nil,
		MaxIdleConnsPerHost: conns,
		MaxConnsPerHost:     conns,
		DisableCompression:  true,
		IdleConnTimeout:     time.Minute,
	}}
}

// requestBody is a request of about c.bodyBytes bytes in c.api's shape: a
// Claude Code–like Messages request, or the same user turn as a Chat
// Completions or Responses request.
func requestBody(c config, stream bool) []byte {
	var b bytes.Buffer
	tail := `"}]}`
	switch c.api {
	case "chat":
		opts := ""
		if stream {
			opts = `"stream_options":{"include_usage":true},`
		}
		fmt.Fprintf(&b, `{"model":%q,"max_tokens":1024,"stream":%t,%s"messages":[{"role":"user","content":"`, c.model, stream, opts)
	case "responses":
		fmt.Fprintf(&b, `{"model":%q,"max_output_tokens":1024,"stream":%t,"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"`, c.model, stream)
		tail = `"}]}]}`
	default:
		fmt.Fprintf(&b, `{"model":%q,"max_tokens":1024,"stream":%t,"messages":[{"role":"user","content":"`, c.model, stream)
	}
	filler := max(0, c.bodyBytes-b.Len()-len(tail))
	b.WriteString(strings.Repeat("lorem ipsum ", filler/12+1)[:filler])
	b.WriteString(tail)
	return b.Bytes()
}

// post sends one request and reads the whole answer; anything but a 200
// is an error.
func post(ctx context.Context, client *http.Client, c config, body []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("new request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.api == "messages" {
		req.Header.Set("anthropic-version", "2023-06-01")
		req.Header.Set("x-api-key", "bench-client-key")
	} else {
		req.Header.Set("Authorization", "Bearer bench-client-key")
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("post: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
		resp.Body.Close()
		return nil, fmt.Errorf("status %d: %s", resp.StatusCode, msg)
	}
	return resp, nil
}

func roundTrip(ctx context.Context, client *http.Client, c config, body []byte) error {
	resp, err := post(ctx, client, c, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if err != nil {
		return fmt.Errorf("read answer: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("empty answer")
	}
	return nil
}

// warm opens the connections and warms the target's pools before
// measuring: 2 requests per connection, not counted.
func warm(ctx context.Context, client *http.Client, c config, body []byte) {
	var wg sync.WaitGroup
	for range c.conns {
		wg.Go(func() {
			for range 2 {
				_ = roundTrip(ctx, client, c, body)
			}
		})
	}
	wg.Wait()
}

func runLatency(ctx context.Context, client *http.Client, c config, res *Result) error {
	body := requestBody(c, false)
	for range c.warmup {
		if err := roundTrip(ctx, client, c, body); err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
	}
	lat := make([]time.Duration, 0, c.n)
	for range c.n {
		t0 := time.Now()
		if err := roundTrip(ctx, client, c, body); err != nil {
			res.noteError(err)
			if ctx.Err() != nil {
				break
			}
			continue
		}
		lat = append(lat, time.Since(t0))
	}
	res.Requests = len(lat) + res.Errors
	res.SlowestAt = slowest(lat, len(lat)/100)
	res.fillLatency(lat)
	return nil
}

// slowest returns the positions (0-based, in order) of the n longest of
// ds, which keeps its order: a pattern in them (every 32nd request, say)
// points at what delays them.
func slowest(ds []time.Duration, n int) []int {
	idx := make([]int, len(ds))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(ds[b], ds[a]) })
	idx = idx[:min(n, len(idx))]
	slices.Sort(idx)
	return idx
}

// runRate releases requests on a fixed schedule to c.conns workers. A
// request's latency counts from its due time, so time spent queued behind
// a slow target counts too.
func runRate(ctx context.Context, client *http.Client, c config, res *Result) error {
	body := requestBody(c, false)
	total := int(float64(c.rate) * c.duration.Seconds())
	due := make(chan time.Time, total)
	var mu sync.Mutex
	lat := make([]time.Duration, 0, total)
	var wg sync.WaitGroup
	for range c.conns {
		wg.Go(func() {
			for at := range due {
				err := roundTrip(ctx, client, c, body)
				d := time.Since(at)
				mu.Lock()
				if err != nil {
					res.noteError(err)
				} else {
					lat = append(lat, d)
				}
				mu.Unlock()
			}
		})
	}
	start := time.Now()
	period := time.Second / time.Duration(c.rate)
	for i := range total {
		at := start.Add(time.Duration(i) * period)
		if wait := time.Until(at); wait > 0 {
			select {
			case <-time.After(wait):
			case <-ctx.Done():
			}
		}
		if ctx.Err() != nil {
			break
		}
		due <- at
	}
	close(due)
	wg.Wait()
	elapsed := time.Since(start)
	res.Requests = len(lat) + res.Errors
	res.RPS = float64(len(lat)) / elapsed.Seconds()
	res.fillLatency(lat)
	return nil
}

// runMax is a closed loop: every worker sends its next request as soon as
// the last one is answered, for c.duration.
func runMax(ctx context.Context, client *http.Client, c config, res *Result) error {
	body := requestBody(c, false)
	ctx, cancel := context.WithTimeout(ctx, c.duration)
	defer cancel()
	var mu sync.Mutex
	var lat []time.Duration
	var wg sync.WaitGroup
	start := time.Now()
	for range c.conns {
		wg.Go(func() {
			var mine []time.Duration
			for ctx.Err() == nil {
				t0 := time.Now()
				err := roundTrip(ctx, client, c, body)
				switch {
				case err == nil:
					mine = append(mine, time.Since(t0))
				case ctx.Err() == nil: // the deadline cutting a request is no error
					mu.Lock()
					res.noteError(err)
					mu.Unlock()
				}
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	res.Requests = len(lat) + res.Errors
	res.RPS = float64(len(lat)) / time.Since(start).Seconds()
	res.fillLatency(lat)
	return nil
}
