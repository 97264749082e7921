// Command filldb fills a new ccmesh data dir with a database that looks
// used: four endpoints and, by default, 50 000 request log rows spread
// evenly over the last 30 days, written through store.LogWriter the way
// ccmesh logs requests (rows made by app.LogRow from proxy records, with
// the sums and statistics stats.FillUsage derives at a flat made-up price,
// so the statistics buckets fill too). bench/extra.sh times start-up, idle
// cost and the admin API on it. It prints one JSON line for bench/report.
//
//	go run ./bench/filldb -data /tmp/ccmesh-filled
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/ccmesh/ccmesh/app"
	"github.com/ccmesh/ccmesh/app/stats"
	"github.com/ccmesh/ccmesh/breaker"
	"github.com/ccmesh/ccmesh/proxy"
	"github.com/ccmesh/ccmesh/proxy/translate/anthropic"
	"github.com/ccmesh/ccmesh/proxy/translate/responses"
	"github.com/ccmesh/ccmesh/store"
)

type options struct {
	data string
	rows int
	days int
	seed uint64
}

// summary is the JSON line printed at the end, in bench/report's format.
type summary struct {
	Mode      string  `json:"mode"`
	Target    string  `json:"target"`
	Rows      int     `json:"rows"`
	Days      int     `json:"days"`
	Endpoints int     `json:"endpoints"`
	DBKB      int64   `json:"db_kb"`
	WallMs    float64 `json:"wall_ms"`
}

func main() {
	var o options
	flag.StringVar(&o.data, "data", "", "data dir to fill (created; must hold no request logs yet)")
	flag.IntVar(&o.rows, "rows", 50_000, "request log rows")
	flag.IntVar(&o.days, "days", 30, "days the rows span, ending now")
	flag.Uint64Var(&o.seed, "seed", 1, "seed of the random token counts and latencies")
	flag.Parse()
	if o.data == "" || o.rows <= 0 || o.days <= 0 {
		log.Fatal("usage: filldb -data DIR [-rows N] [-days N]")
	}
	s, err := fill(context.Background(), o)
	if err != nil {
		log.Fatalf("filldb: %v", err)
	}
	line, _ := json.Marshal(s)
	fmt.Println(string(line))
}

// endpoint is one of the endpoints made, with the share of requests that
// end on it (of 100) and the models it answers.
type endpoint struct {
	patch  store.EndpointPatch
	share  int
	models []string
	id     int64
}

func endpoints() []*endpoint {
	mk := func(name, protocol string, share int, models ...string) *endpoint {
		url := "http://127.0.0.1:9" // discard port: nothing is sent while the benchmarks run
		key := "sk-bench-" + name + "-0123456789"
		p := store.EndpointPatch{Name: &name, BaseURL: &url, Protocol: &protocol, APIKey: &key}
		return &endpoint{patch: p, share: share, models: models}
	}
	// The sticky strategy's shape: one endpoint takes most requests, a
	// backup the failovers and some, an OpenAI one the gpt models.
	return []*endpoint{
		mk("primary", "anthropic", 80, "claude-sonnet-4-5", "claude-haiku-4-5", "claude-opus-4-1"),
		mk("backup", "anthropic", 15, "claude-sonnet-4-5", "claude-haiku-4-5"),
		mk("openai", "openai-chat", 4, "gpt-5.5"),
		mk("spare", "anthropic", 1, "claude-sonnet-4-5"),
	}
}

func fill(ctx context.Context, o options) (summary, error) {
	started := time.Now()
	db, err := store.Open(ctx, filepath.Join(o.data, app.DBFile))
	if err != nil {
		return summary{}, err
	}
	defer db.Close()
	if rows, _, err := db.ListLogs(ctx, store.LogFilter{Limit: 1}); err != nil || len(rows) > 0 {
		return summary{}, errors.Join(err, fmt.Errorf("%s already holds request logs: give a new data dir", o.data))
	}
	// Retention that keeps every row: the default (14 days) would prune
	// half of them at ccmesh's first start.
	settings := app.DefaultSettings()
	settings.LogRetentionDays = o.days + 1
	settings.LogRetentionRows = max(settings.LogRetentionRows, o.rows)
	doc, err := json.Marshal(settings)
	if err != nil {
		return summary{}, fmt.Errorf("encode settings: %w", err)
	}
	if err := db.PutSettings(ctx, doc); err != nil {
		return summary{}, err
	}
	eps := endpoints()
	for _, e := range eps {
		created, err := db.CreateEndpoint(ctx, e.patch)
		if err != nil {
			return summary{}, err
		}
		e.id = created.ID
	}

	w := store.NewLogWriter(db, store.LogWriterOptions{QueueSize: o.rows})
	rng := rand.New(rand.NewPCG(o.seed, 0))
	span := time.Duration(o.days) * 24 * time.Hour
	start := started.Add(-span)
	step := span / time.Duration(o.rows)
	for n := range o.rows {
		at := start.Add(time.Duration(n)*step + time.Duration(rng.Int64N(int64(step))))
		if !w.Enqueue(row(rng, eps, n, at)) {
			_ = w.Close(ctx)
			return summary{}, fmt.Errorf("log writer refused row %d", n)
		}
	}
	if err := w.Close(ctx); err != nil {
		return summary{}, err
	}
	if w.Failed() > 0 {
		return summary{}, fmt.Errorf("%d rows could not be written (see the log above)", w.Failed())
	}
	// What a running ccmesh does a minute after a write: minute buckets
	// past their reach go (store.MinuteBucketsKept).
	if _, err := db.Prune(ctx, settings.LogRetentionRows, time.Duration(settings.LogRetentionDays)*24*time.Hour); err != nil {
		return summary{}, err
	}
	if err := db.Close(); err != nil {
		return summary{}, err
	}
	var kb int64
	for _, suffix := range []string{"", "-wal"} {
		if fi, err := os.Stat(filepath.Join(o.data, app.DBFile+suffix)); err == nil {
			kb += fi.Size() / 1024
		}
	}
	return summary{Mode: "filldb", Target: "filled", Rows: o.rows, Days: o.days, Endpoints: len(eps), DBKB: kb,
		WallMs: float64(time.Since(started)) / float64(time.Millisecond)}, nil
}

// row is request n: on the endpoint its share falls on, streamed two times
// in three; every tenth fails over from primary to backup (overloaded),
// every 97th ends in an error with no endpoint left to try.
func row(rng *rand.Rand, eps []*endpoint, n int, at time.Time) store.RequestLog {
	e := eps[0]
	for i, pick := 0, n%100; i < len(eps); i++ {
		if pick < eps[i].share {
			e = eps[i]
			break
		}
		pick -= eps[i].share
	}
	model := e.models[n%len(e.models)]
	protocol := anthropic.Protocol
	path := "/v1/messages"
	if model == "gpt-5.5" {
		protocol, path = responses.Protocol, "/v1/responses"
	}
	stream := n%3 != 0
	rec := &proxy.Record{Time: at, Protocol: protocol, Path: path, ModelAsked: model, ModelForwarded: model,
		Status: 200, Stream: stream, SentUpstream: true,
		Routing: proxy.Routing{Strategy: proxy.StrategySticky}}
	for _, c := range eps {
		rec.Routing.Candidates = append(rec.Routing.Candidates, proxy.Candidate{EndpointID: c.id, Endpoint: *c.patch.Name, State: breaker.Closed})
	}
	if n%10 == 0 && e == eps[0] {
		rec.Attempts = append(rec.Attempts, proxy.Attempt{EndpointID: e.id, Endpoint: *e.patch.Name, ErrorType: proxy.ErrStatus,
			Status: 529, Message: "upstream overloaded", BodyHead: `{"type":"error","error":{"type":"overloaded_error"}}`,
			StartedAt: at, DurationMs: 300 + rng.Int64N(900), BreakerCounted: true, Outcome: breaker.Failure, Model: model})
		e = eps[1]
	}
	dur := 800 + rng.Int64N(30_000)
	u := proxy.Usage{Input: 20 + rng.Int64N(4000), Output: 50 + rng.Int64N(3000), CacheRead: rng.Int64N(120_000), CacheWrite: rng.Int64N(8000)}
	final := proxy.Attempt{EndpointID: e.id, Endpoint: *e.patch.Name, Status: 200, StartedAt: at, DurationMs: dur,
		Outcome: breaker.Success, Model: model, Usage: &u}
	if n%97 == 0 {
		final.ErrorType, final.Status, final.Message, final.Outcome, final.Usage = proxy.ErrStatus, 500, "internal server error", breaker.Failure, nil
		rec.Status, rec.Error, rec.Stream = 500, "all endpoints failed", false
	}
	rec.Attempts = append(rec.Attempts, final)
	rec.EndpointID, rec.Endpoint, rec.AttemptCount = e.id, *e.patch.Name, len(rec.Attempts)
	rec.DurationMs, rec.TTFBMs = dur, min(dur, 400+rng.Int64N(2000))
	if rec.Stream {
		rec.StreamEnd = proxy.StreamComplete
	}
	if final.Usage != nil {
		rec.TokensIn, rec.TokensOut = u.PromptTotal(), u.Output
	}
	r := app.LogRow(rec)
	stats.FillUsage(&r, rec, flatPrice)
	return r
}

// flatPrice prices every model at one made-up rate.
func flatPrice(_ string, _ int64, u proxy.Usage) proxy.Cost {
	return proxy.Cost{USD: (3*float64(u.Input) + 15*float64(u.Output) + 0.3*float64(u.CacheRead) + 3.75*float64(u.CacheWrite)) / 1e6, Priced: true}
}
