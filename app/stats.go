package app

import (
	"cmp"
	"encoding/csv"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/ccmesh/ccmesh/store"
)

// StatBucket is one bucket of GET /api/stats: the sums of one time bucket
// and one endpoint or model (docs/BEHAVIOUR.md#statistics). Requests counts
// client requests under the endpoint and model that answered them (Key ""
// for those that reached no endpoint, or named no model), Succeeded those
// that ended 2xx; Attempts counts what was sent to the endpoint or model,
// Errors the failed attempts. CostUSD sums the priced attempts, and
// Unpriced counts those whose model had no price (their cost is unknown,
// not 0).
type StatBucket struct {
	Start time.Time `json:"start"`
	Key   string    `json:"key"`
	store.Counts
}

// Add adds o's counts to b.
func (b *StatBucket) Add(o StatBucket) { b.Counts.Add(o.Counts) }

// noRule is the key, under group=rule, of the requests no routing rule
// decided; no rule may take the name (app/rules.go).
const noRule = "(no rule)"

// statsQuery is a parsed stats request.
type statsQuery struct {
	from, to time.Time
	bucket   string // minute, hour or day
	byModel  bool
	byKey    bool // group=key: the pool key buckets
	byRule   bool // group=rule: the routing rule buckets
}

// Stats ranges and their limits.
const (
	defaultStatsRange = 24 * time.Hour
	maxStatsRange     = store.HourBucketsKept
)

// parseStatsQuery reads from, to, bucket and group; minutes=N is short
// for the last N minutes in minute buckets per endpoint.
func parseStatsQuery(r *http.Request, now time.Time) (statsQuery, error) {
	q := r.URL.Query()
	s := statsQuery{to: now, bucket: "hour"}
	if q.Has("minutes") {
		n, err := queryInt(r, "minutes", 60, 1, 48*60)
		if err != nil {
			return s, err
		}
		s.from, s.bucket = now.Add(-time.Duration(n)*time.Minute), "minute"
	}
	for _, f := range []struct {
		name string
		dst  *time.Time
	}{{"from", &s.from}, {"to", &s.to}} {
		if v := q.Get(f.name); v != "" {
			t, err := time.Parse(time.RFC3339, v)
			if err != nil {
				return s, errBadRequest("bad_query", f.name, "query %s=%q must be an RFC 3339 time such as 2026-12-01T00:00:00Z", f.name, v)
			}
			*f.dst = t
		}
	}
	if s.from.IsZero() {
		s.from = s.to.Add(-defaultStatsRange)
	}
	if v := q.Get("bucket"); v != "" {
		if v != "minute" && v != "hour" && v != "day" {
			return s, errBadRequest("bad_query", "bucket", "query bucket=%q must be minute, hour or day", v)
		}
		s.bucket = v
	}
	switch g := q.Get("group"); g {
	case "", "endpoint":
	case "model":
		s.byModel = true
	case "key":
		s.byKey = true
	case "rule":
		s.byRule = true
	default:
		return s, errBadRequest("bad_query", "group", "query group=%q must be endpoint, model, key or rule", g)
	}
	switch {
	case !s.from.Before(s.to):
		return s, errBadRequest("bad_query", "from", "from must be before to")
	case s.to.Sub(s.from) > maxStatsRange:
		return s, errBadRequest("bad_query", "from", "statistics reach back %d days; ask for a shorter range", int(maxStatsRange.Hours()/24))
	case s.bucket == "minute" && s.from.Before(now.Add(-store.MinuteBucketsKept)):
		return s, errBadRequest("bad_query", "bucket", "minute buckets reach back %d hours; use hour or day buckets for older ranges", int(store.MinuteBucketsKept.Hours()))
	}
	return s, nil
}

// usageStats reads the buckets of q, summed per bucket start and key.
func (a *App) usageStats(r *http.Request, q statsQuery) ([]StatBucket, error) {
	// An hour bucket holds requests from its start on: widen the read to
	// the hours that overlap the range, and sum into the asked buckets.
	from := q.from
	if q.bucket != "minute" {
		from = from.Truncate(time.Hour)
	}
	read := a.db.UsageBuckets
	switch {
	case q.byKey:
		read = a.db.UsageKeyBuckets
	case q.byRule:
		read = a.db.UsageRuleBuckets
	}
	rows, err := read(r.Context(), from, q.to, q.bucket == "minute")
	if err != nil {
		return nil, err
	}
	type key struct {
		start time.Time
		key   string
	}
	sums := map[key]*StatBucket{}
	for i := range rows {
		b := &rows[i]
		k := key{start: b.Start, key: b.Endpoint}
		switch {
		case q.byModel:
			k.key = b.Model
		case q.byKey:
			// Its endpoint's name and the key's label and mask, never the key.
			k.key = b.Endpoint + " / " + b.Key
		case q.byRule:
			k.key = cmp.Or(b.Rule, noRule)
		}
		if q.bucket == "day" {
			t := b.Start.In(time.Local)
			k.start = time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.Local)
		}
		s := sums[k]
		if s == nil {
			s = &StatBucket{Start: k.start, Key: k.key}
			sums[k] = s
		}
		s.Counts.Add(b.Counts)
	}
	out := make([]StatBucket, 0, len(sums))
	for _, s := range sums {
		out = append(out, *s)
	}
	slices.SortFunc(out, func(x, y StatBucket) int {
		return cmp.Or(x.Start.Compare(y.Start), cmp.Compare(x.Key, y.Key))
	})
	return out, nil
}

// statsFor answers a stats request's query.
func (a *App) statsFor(r *http.Request) (statsQuery, []StatBucket, error) {
	q, err := parseStatsQuery(r, time.Now())
	if err != nil {
		return q, nil, err
	}
	buckets, err := a.usageStats(r, q)
	return q, buckets, err
}

// statsHandler is GET /api/stats.
func (a *App) statsHandler(w http.ResponseWriter, r *http.Request) error {
	_, buckets, err := a.statsFor(r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"buckets": buckets})
	return nil
}

// statsCSVHandler is GET /api/stats.csv: the same rows as CSV.
func (a *App) statsCSVHandler(w http.ResponseWriter, r *http.Request) error {
	q, buckets, err := a.statsFor(r)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="ccmesh-stats.csv"`)
	cw := csv.NewWriter(w)
	group := "endpoint"
	if q.byKey {
		group = "key"
	}
	if q.byRule {
		group = "rule"
	}
	if q.byModel {
		group = "model"
	}
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
