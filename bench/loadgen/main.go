// Command loadgen drives one benchmark against one target and prints one
// JSON result line. Modes:
//
//	latency  N sequential requests over one connection (p50/p99)
//	rate     open-loop fixed rate over C connections for a duration; a
//	         request's latency counts from when it was due, so a stalled
//	         target cannot hide its queueing (no coordinated omission)
//	max      closed loop over C connections for a duration: throughput
//	wrk      the same with wrk (a C load generator), reported as max
//	sse      C concurrent streams, each R streams in a row: per-event delay
//	         (receive time − the upstream's send timestamp), time to first
//	         event, incomplete streams, events that did not arrive alone
//
// -api is the protocol the client speaks (the body it sends and how its
// stream ends): messages (Claude), chat (Chat Completions), responses or
// gemini. A Gemini client names the model and the stream in the path, not
// the body: with -api gemini, -url stops at the API version
// (http://host/v1beta) and loadgen appends /models/{-model}:generateContent,
// or :streamGenerateContent?alt=sse for -mode sse (geminiURL).
// -upstream is the protocol of the upstream behind the target, which
// decides which events carry the upstream's send time: every event of an
// Anthropic stream, only the content chunks of a Chat one (bench/upstream,
// chat.go), whatever protocol the target translates them into.
//
// With -pid it also samples the target processes: CPU time (utime+stime
// from /proc/<pid>/stat) across the run and VmRSS every 20 ms.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"github.com/ccmesh/ccmesh/bench/internal/stat"
	"log"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

type config struct {
	mode, url, label  string
	test              string // the result's test name, when not the default
	api, upstream     string // client and upstream protocol
	model             string
	round             int
	n, conns, perConn int
	warmup            int
	rate              int
	events            int // the upstream's events per stream
	duration          time.Duration
	interval          time.Duration // the upstream's SSE interval, for the alone check
	bodyBytes         int
	pids              []int
}

func parse(args []string) (config, error) {
	var c config
	var pids string
	fs := flag.NewFlagSet("loadgen", flag.ContinueOnError)
	fs.StringVar(&c.mode, "mode", "latency", "latency | rate | max | wrk | sse")
	fs.StringVar(&c.url, "url", "", "target URL (POST /v1/messages, /v1/chat/completions or /v1/responses, per -api); "+
		"for -api gemini the URL up to the version, http://host/v1beta, to which /models/{-model}:generateContent "+
		"(-mode sse: :streamGenerateContent?alt=sse) is appended")
	fs.StringVar(&c.label, "label", "", "target name copied into the result")
	fs.StringVar(&c.api, "api", "messages", "the client's protocol: messages | chat | responses | gemini")
	fs.StringVar(&c.upstream, "upstream", "anthropic", "sse: the upstream's protocol: anthropic | chat")
	fs.StringVar(&c.model, "model", "claude-sonnet-4-5", "model of the requests")
	fs.IntVar(&c.round, "round", 0, "round number copied into the result")
	fs.StringVar(&c.test, "test", "", "test name copied into the result (bench/report's default: the mode, for sse plus the stream count)")
	fs.IntVar(&c.n, "n", 2000, "latency: requests")
	fs.IntVar(&c.warmup, "warmup", 0, "latency: requests sent first and not counted")
	fs.IntVar(&c.conns, "c", 64, "rate, max, sse: connections (concurrent streams for sse)")
	fs.IntVar(&c.perConn, "r", 2, "sse: streams per connection, one after another")
	fs.IntVar(&c.rate, "rps", 1000, "rate: requests per second")
	fs.DurationVar(&c.duration, "d", 5*time.Second, "rate, max: duration")
	fs.IntVar(&c.events, "events", 16, "sse: the upstream's events per stream")
	fs.DurationVar(&c.interval, "interval", 20*time.Millisecond, "sse: the upstream's event interval")
	fs.IntVar(&c.bodyBytes, "body", 4096, "request body size in bytes (about)")
	fs.StringVar(&pids, "pid", "", "comma-separated pids of the target to sample")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if c.url == "" {
		return c, fmt.Errorf("-url is required")
	}
	if c.warmup < 0 || c.n < 1 || c.conns < 1 || c.perConn < 1 || c.rate < 1 || c.duration <= 0 {
		return c, fmt.Errorf("-n, -c, -r, -rps and -d must be positive")
	}
	switch c.api {
	case "messages", "chat", "responses":
	case "gemini":
		c.url = geminiURL(c.url, c.model, c.mode == "sse")
	default:
		return c, fmt.Errorf("-api %q: want messages, chat, responses or gemini", c.api)
	}
	if c.upstream != "anthropic" && c.upstream != "chat" {
		return c, fmt.Errorf("-upstream %q: want anthropic or chat", c.upstream)
	}
	if c.upstream == "chat" && c.events < 5 {
		return c, fmt.Errorf("-events %d: a chat stream has at least 5 chunks", c.events)
	}
	for _, p := range strings.FieldsFunc(pids, func(r rune) bool { return r == ',' }) {
		pid, err := strconv.Atoi(p)
		if err != nil {
			return c, fmt.Errorf("-pid %q: %w", p, err)
		}
		c.pids = append(c.pids, pid)
	}
	return c, nil
}

func main() {
	c, err := parse(os.Args[1:])
	if err != nil {
		log.Fatalf("loadgen: %v", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Every run is bounded even if the target hangs.
	ctx, cancel := context.WithTimeout(ctx, c.duration+2*time.Minute)
	defer cancel()
	res, err := run(ctx, c)
	if err != nil {
		log.Fatalf("loadgen: %s against %s: %v", c.mode, c.label, err)
	}
	if err := json.NewEncoder(os.Stdout).Encode(res); err != nil {
		log.Fatalf("loadgen: write result: %v", err)
	}
}

func run(ctx context.Context, c config) (*Result, error) {
	if c.mode == "latency" {
		c.conns = 1
	}
	client := newClient(c.conns)
	if c.mode != "sse" {
		// Connections and the target's upstream pool are opened before
		// anything is measured.
		warm(ctx, client, c, requestBody(c, false))
	}
	sampler, err := startSampler(ctx, c.pids, 20*time.Millisecond)
	if err != nil {
		return nil, err
	}
	res := &Result{Mode: c.mode, Test: c.test, Target: c.label, Round: c.round, Conns: c.conns}
	start := time.Now()
	switch c.mode {
	case "latency":
		err = runLatency(ctx, client, c, res)
	case "rate":
		err = runRate(ctx, client, c, res)
	case "max":
		err = runMax(ctx, client, c, res)
	case "sse":
		err = runSSE(ctx, client, c, res)
	case "wrk":
		err = runWrk(ctx, c, res)
	default:
		err = fmt.Errorf("unknown -mode %q", c.mode)
	}
	res.WallMs = stat.Ms(time.Since(start))
	if err != nil {
		return nil, err
	}
	if sampler != nil {
		sampler.finish(res)
	}
	return res, nil
}
