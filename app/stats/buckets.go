package stats

import (
	"cmp"
	"context"
	"encoding/csv"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/ccmesh/ccmesh/store"
)

// Bucket is one bucket of GET /api/stats: the sums of one time bucket
// and one endpoint or model (docs/BEHAVIOUR.md#statistics). Requests counts
// client requests under the endpoint and model that answered them (Key ""
// for those that reached no endpoint, or named no model), Succeeded those
// that ended 2xx; Attempts counts what was sent to the endpoint or model,
// Errors the failed attempts. CostUSD sums the priced attempts, and
// Unpriced counts those whose model had no price (their cost is unknown,
// not 0).
type Bucket struct {
	Start time.Time `json:"start"`
	Key   string    `json:"key"`
	store.Counts
}

// NoRule is the key, under group=rule, of the requests no routing rule
// decided; no rule may take the name (app/config/rules.go refuses it).
const NoRule = "(no rule)"

// Query is a stats request: the range, the bucket and what the buckets are
// per.
type Query struct {
	From, To time.Time
	Bucket   string // minute, hour or day
	Group    string // endpoint, model, key (the pool key buckets) or rule (the routing rule buckets)
}

// Stats ranges and their limits.
const (
	DefaultRange = 24 * time.Hour
	MaxRange     = store.HourBucketsKept
)

// Reader is the store's bucket reads, as Read and Today need them.
type Reader interface {
	UsageBuckets(ctx context.Context, from, to time.Time, minutes bool) ([]store.UsageBucket, error)
	UsageKeyBuckets(ctx context.Context, from, to time.Time, minutes bool) ([]store.UsageBucket, error)
	UsageRuleBuckets(ctx context.Context, from, to time.Time, minutes bool) ([]store.UsageBucket, error)
}

// Read reads the buckets of q, summed per bucket start and key.
func Read(ctx context.Context, db Reader, q Query) ([]Bucket, error) {
	// An hour bucket holds requests from its start on: widen the read to
	// the hours that overlap the range, and sum into the asked buckets.
	from := q.From
	if q.Bucket != "minute" {
		from = from.Truncate(time.Hour)
	}
	read := db.UsageBuckets
	switch q.Group {
	case "key":
		read = db.UsageKeyBuckets
	case "rule":
		read = db.UsageRuleBuckets
	}
	rows, err := read(ctx, from, q.To, q.Bucket == "minute")
	if err != nil {
		return nil, err
	}
	type key struct {
		start time.Time
		key   string
	}
	sums := map[key]*Bucket{}
	for i := range rows {
		b := &rows[i]
		k := key{start: b.Start, key: b.Endpoint}
		switch q.Group {
		case "model":
			k.key = b.Model
		case "key":
			// Its endpoint's name and the key's label and mask, never the key.
			k.key = b.Endpoint + " / " + b.Key
		case "rule":
			k.key = cmp.Or(b.Rule, NoRule)
		}
		if q.Bucket == "day" {
			t := b.Start.In(time.Local)
			k.start = time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.Local)
		}
		s := sums[k]
		if s == nil {
			s = &Bucket{Start: k.start, Key: k.key}
			sums[k] = s
		}
		s.Counts.Add(b.Counts)
	}
	out := make([]Bucket, 0, len(sums))
	for _, s := range sums {
		out = append(out, *s)
	}
	slices.SortFunc(out, func(x, y Bucket) int {
		return cmp.Or(x.Start.Compare(y.Start), cmp.Compare(x.Key, y.Key))
	})
	return out, nil
}

// WriteCSV writes the buckets of q as GET /api/stats.csv's rows, under a
// header that names q's group.
func WriteCSV(w io.Writer, q Query, buckets []Bucket) error {
	cw := csv.NewWriter(w)
	group := q.Group
	_ = cw.Write([]string{"start", group, "requests", "succeeded", "attempts", "errors", "input", "output", "cache_read", "cache_write",
		"reasoning", "cost_usd", "unpriced", "hedges"})
	for _, b := range buckets {
		i := func(v int64) string { return strconv.FormatInt(v, 10) }
		_ = cw.Write([]string{b.Start.Format(time.RFC3339), csvKey(b.Key, group), i(b.Requests), i(b.Succeeded), i(b.Attempts), i(b.Errors),
			i(b.Input), i(b.Output),
			i(b.CacheRead), i(b.CacheWrite), i(b.Reasoning), strconv.FormatFloat(b.CostUSD, 'f', -1, 64), i(b.Unpriced), i(b.Hedges)})
	}
	cw.Flush()
	return cw.Error()
}

// csvKey is a bucket's key as the CSV writes it: the blank key of traffic
// that reached no endpoint, or named no model, gets a name a spreadsheet
// shows ("(no endpoint)", "(no model)"). Neither can be an endpoint's name
// (store/validate.go allows no parentheses or spaces).
func csvKey(key, group string) string {
	if key == "" {
		return "(no " + group + ")"
	}
	return key
}
