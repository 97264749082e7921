package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
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

// requestBody is a Claude Code–like Messages request of about size bytes.
func requestBody(size int, stream bool) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"model":"claude-sonnet-4-5","max_tokens":1024,"stream":%t,"messages":[{"role":"user","content":"`, stream)
	filler := max(0, size-b.Len()-4)
	b.WriteString(strings.Repeat("lorem ipsum ", filler/12+1)[:filler])
	b.WriteString(`"}]}`)
	return b.Bytes()
}

// post sends one request and reads the whole answer; anything but a 200
// is an error.
func post(ctx context.Context, client *http.Client, url string, body []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("new request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("anthropic-version", "2023-06-01")
	req.Header.Set("x-api-key", "bench-client-key")
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

func roundTrip(ctx context.Context, client *http.Client, url string, body []byte) error {
	resp, err := post(ctx, client, url, body)
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
				_ = roundTrip(ctx, client, c.url, body)
			}
		})
	}
	wg.Wait()
}

func runLatency(ctx context.Context, client *http.Client, c config, res *Result) error {
	body := requestBody(c.bodyBytes, false)
	lat := make([]time.Duration, 0, c.n)
	for range c.n {
		t0 := time.Now()
		if err := roundTrip(ctx, client, c.url, body); err != nil {
			res.noteError(err)
			if ctx.Err() != nil {
				break
			}
			continue
		}
		lat = append(lat, time.Since(t0))
	}
	res.Requests = len(lat) + res.Errors
	res.fillLatency(lat)
	return nil
}

// runRate releases requests on a fixed schedule to c.conns workers. A
// request's latency counts from its due time, so time spent queued behind
// a slow target counts too.
func runRate(ctx context.Context, client *http.Client, c config, res *Result) error {
	body := requestBody(c.bodyBytes, false)
	total := int(float64(c.rate) * c.duration.Seconds())
	due := make(chan time.Time, total)
	var mu sync.Mutex
	lat := make([]time.Duration, 0, total)
	var wg sync.WaitGroup
	for range c.conns {
		wg.Go(func() {
			for at := range due {
				err := roundTrip(ctx, client, c.url, body)
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
	body := requestBody(c.bodyBytes, false)
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
				err := roundTrip(ctx, client, c.url, body)
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
