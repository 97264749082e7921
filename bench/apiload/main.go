// Command apiload times the admin API calls the UI makes on opening the
// dashboard, the Stats tab and the Logs tab (frontend/src/components/
// Dashboard.tsx, StatsPanel.tsx, LogsPanel.tsx, with the queries
// frontend/src/stats.ts builds) against a running ccmesh: each call kind
// -n times, one call at a time on one keep-alive connection, the kinds
// interleaved. It prints one JSON line per kind for bench/report; latency
// runs from sending the request to reading the whole answer.
//
//	go run ./bench/apiload -url http://127.0.0.1:3457 -token TOKEN
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/ccmesh/ccmesh/bench/internal/stat"
	"io"
	"log"
	"net/http"
	"net/url"
	"os"
	"slices"
	"time"
)

// kind is one call the UI makes.
type kind struct {
	name  string
	path  string
	items string // the JSON field whose length is the answer's size
}

// result is one kind's line, in bench/report's format.
type result struct {
	Mode    string  `json:"mode"`
	Target  string  `json:"target"`
	Seq     int     `json:"seq"` // the kind's place in the list, for the report's order
	Path    string  `json:"path"`
	Calls   int     `json:"calls"`
	Errors  int     `json:"errors"`
	ErrorEg string  `json:"error_example,omitempty"`
	P50Us   float64 `json:"p50_us"`
	P99Us   float64 `json:"p99_us"`
	MaxUs   float64 `json:"max_us"`
	Bytes   int     `json:"bytes"`
	Items   int     `json:"items"`
}

func main() {
	base := flag.String("url", "", "ccmesh's address, http://host:port")
	token := flag.String("token", "", "admin token")
	n := flag.Int("n", 100, "calls of each kind")
	endpoint := flag.String("endpoint", "", "endpoint name for the filtered log page (default: the first endpoint)")
	flag.Parse()
	if *base == "" || *token == "" || *n <= 0 {
		log.Fatal("usage: apiload -url http://127.0.0.1:PORT -token TOKEN [-n 100] [-endpoint NAME]")
	}
	c := &client{base: *base, token: *token, http: &http.Client{Timeout: 30 * time.Second}}
	if *endpoint == "" {
		name, err := c.firstEndpoint()
		if err != nil {
			log.Fatalf("apiload: %v", err)
		}
		*endpoint = name
	}
	enc := json.NewEncoder(os.Stdout)
	for _, r := range run(c, kinds(time.Now(), *endpoint), *n) {
		if err := enc.Encode(r); err != nil {
			log.Fatalf("apiload: %v", err)
		}
	}
}

// kinds are the UI's calls as of now, in local time like the browser's.
func kinds(now time.Time, endpoint string) []kind {
	midnight := func(daysBack int) string {
		return time.Date(now.Year(), now.Month(), now.Day()-daysBack, 0, 0, 0, 0, time.Local).Format(time.RFC3339)
	}
	q := func(kv ...string) string {
		v := url.Values{}
		for i := 0; i < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v.Encode()
	}
	return []kind{
		// Dashboard: the last hour per endpoint, and today's totals.
		{"stats last hour by minute", "/api/stats?" + q("minutes", "60"), "buckets"},
		{"stats today by day", "/api/stats?" + q("from", midnight(0), "bucket", "day"), "buckets"},
		// Stats tab: last 24 hours by hour, last 30 days by day (per
		// endpoint and per model).
		{"stats last 24 h by hour", "/api/stats?" + q("from", now.Add(-24*time.Hour).Format(time.RFC3339), "bucket", "hour", "group", "endpoint"), "buckets"},
		{"stats last 30 days by day", "/api/stats?" + q("from", midnight(29), "bucket", "day", "group", "endpoint"), "buckets"},
		{"stats last 30 days by day, per model", "/api/stats?" + q("from", midnight(29), "bucket", "day", "group", "model"), "buckets"},
		// Not a UI call: the widest hour-bucket read over this data (the
		// CSV export of a 30-day range in hours), as in store's
		// BenchmarkUsageBuckets30Days.
		{"stats last 30 days by hour", "/api/stats?" + q("from", now.Add(-30*24*time.Hour).Format(time.RFC3339), "bucket", "hour"), "buckets"},
		// Dashboard's recent rows, the Logs tab's first page and a page
		// filtered by endpoint.
		{"logs, 100 newest", "/api/logs?" + q("limit", "100"), "items"},
		{"logs, first page", "/api/logs?" + q("limit", "50"), "items"},
		{"logs, first page of one endpoint", "/api/logs?" + q("limit", "50", "endpoint", endpoint), "items"},
	}
}

// run calls each kind n times, rotating the order every pass so that drift
// in the machine's speed hits every kind alike.
func run(c *client, ks []kind, n int) []result {
	lat := make([][]time.Duration, len(ks))
	out := make([]result, len(ks))
	for i, k := range ks {
		out[i] = result{Mode: "api", Target: k.name, Seq: i + 1, Path: k.path}
	}
	for pass := range n {
		for j := range ks {
			i := (j + pass) % len(ks)
			r := &out[i]
			r.Calls++
			d, body, err := c.get(ks[i].path)
			if err != nil {
				r.Errors++
				if r.ErrorEg == "" {
					r.ErrorEg = err.Error()
				}
				continue
			}
			lat[i] = append(lat[i], d)
			if r.Bytes == 0 {
				r.Bytes = len(body)
				r.Items = count(body, ks[i].items)
			}
		}
	}
	for i := range out {
		ds := lat[i]
		slices.Sort(ds)
		out[i].P50Us, out[i].P99Us = stat.Us(stat.Percentile(ds, 50)), stat.Us(stat.Percentile(ds, 99))
		if len(ds) > 0 {
			out[i].MaxUs = stat.Us(ds[len(ds)-1])
		}
	}
	return out
}

type client struct {
	base, token string
	http        *http.Client
}

// get returns how long path took to answer in full, and the answer.
func (c *client) get(path string) (time.Duration, []byte, error) {
	req, err := http.NewRequest(http.MethodGet, c.base+path, nil)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	t0 := time.Now()
	res, err := c.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	body, err := io.ReadAll(res.Body)
	d := time.Since(t0)
	res.Body.Close()
	if err != nil {
		return 0, nil, fmt.Errorf("read %s: %w", path, err)
	}
	if res.StatusCode != http.StatusOK {
		return 0, nil, fmt.Errorf("GET %s: %d %.200s", path, res.StatusCode, body)
	}
	return d, body, nil
}

func (c *client) firstEndpoint() (string, error) {
	_, body, err := c.get("/api/endpoints")
	if err != nil {
		return "", err
	}
	var eps []struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(body, &eps); err != nil {
		return "", fmt.Errorf("decode /api/endpoints: %w", err)
	}
	if len(eps) == 0 {
		return "", errors.New("ccmesh has no endpoints: fill its data dir first (bench/filldb)")
	}
	return eps[0].Name, nil
}

// count is the length of the array field of a JSON object, -1 when absent.
func count(body []byte, field string) int {
	var m map[string]json.RawMessage
	var items []json.RawMessage
	if json.Unmarshal(body, &m) != nil || json.Unmarshal(m[field], &items) != nil {
		return -1
	}
	return len(items)
}
