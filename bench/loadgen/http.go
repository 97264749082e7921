package main

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
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
// Completions, Responses or Gemini request. A Gemini body names neither
// the model nor the stream: the path does (geminiURL).
func requestBody(c config, stream bool) []byte {
	var b bytes.Buffer
	tail := `"}]}`
	switch c.api {
	case "gemini":
		b.WriteString(`{"contents":[{"role":"user","parts":[{"text":"`)
		tail = `"}]}],"generationConfig":{"maxOutputTokens":1024}}`
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
	switch c.api {
	case "messages":
		req.Header.Set("anthropic-version", "2023-06-01")
		req.Header.Set("x-api-key", "bench-client-key")
	case "gemini":
		req.Header.Set("x-goog-api-key", "bench-client-key")
	default:
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

// geminiURL is the URL of a Gemini client's request for model under base
// (the URL up to the API version, http://host/v1beta): generateContent, or
// streamGenerateContent as SSE, the form Gemini CLI asks for.
func geminiURL(base, model string, stream bool) string {
	method := ":generateContent"
	if stream {
		method = ":streamGenerateContent?alt=sse"
	}
	return strings.TrimSuffix(base, "/") + "/models/" + url.PathEscape(model) + method
}

// answers recycles the buffers a Gemini answer is read into.
var answers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func roundTrip(ctx context.Context, client *http.Client, c config, body []byte) error {
	resp, err := post(ctx, client, c, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if c.api == "gemini" {
		buf := answers.Get().(*bytes.Buffer)
		defer func() { buf.Reset(); answers.Put(buf) }()
		if _, err := buf.ReadFrom(resp.Body); err != nil {
			return fmt.Errorf("read answer: %w", err)
		}
		return geminiAnswered(buf.Bytes())
	}
	n, err := io.Copy(io.Discard, resp.Body)
	if err != nil {
		return fmt.Errorf("read answer: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("empty answer")
	}
	return nil
}

// geminiAnswered checks a generateContent answer for a candidate with text.
// Substring tests, not a decode: the check runs inside the measured time,
// and must cost about what the other protocols' reading costs (bench/upstream
// answers them without a decode for the same reason).
func geminiAnswered(b []byte) error {
	i := bytes.Index(b, []byte(`"candidates":[{`))
	if i < 0 {
		return fmt.Errorf("answer has no candidates: %.200s", b)
	}
	rest := b[i:]
	j := bytes.Index(rest, []byte(`"text":"`))
	if j < 0 || j+len(`"text":"`) >= len(rest) || rest[j+len(`"text":"`)] == '"' {
		return fmt.Errorf("answer's candidate has no text: %.200s", b)
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
