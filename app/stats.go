package app

import (
	"net/http"
	"time"

	"github.com/ccmesh/ccmesh/app/stats"
	"github.com/ccmesh/ccmesh/store"
)

// The statistics' routes, GET /api/stats and GET /api/stats.csv
// (docs/BEHAVIOUR.md#statistics): the query's checks are here; reading and
// summing the buckets, their CSV and what a request adds to them are the
// package app/stats.

// StatBucket is one bucket of GET /api/stats (stats.Bucket). Declared here
// rather than aliased, so that the generated TypeScript names it as the
// app's (frontend/src/api/types.gen.ts).
type StatBucket stats.Bucket

// Add adds o's counts to b.
func (b *StatBucket) Add(o StatBucket) { b.Counts.Add(o.Counts) }

// noRule is the key, under group=rule, of the requests no routing rule
// decided; no rule may take the name (app/config's ValidateRules).
const noRule = stats.NoRule

// parseStatsQuery reads from, to, bucket and group; minutes=N is short
// for the last N minutes in minute buckets per endpoint.
func parseStatsQuery(r *http.Request, now time.Time) (stats.Query, error) {
	q := r.URL.Query()
	s := stats.Query{To: now, Bucket: "hour", Group: "endpoint"}
	if q.Has("minutes") {
		n, err := queryInt(r, "minutes", 60, 1, 48*60)
		if err != nil {
			return s, err
		}
		s.From, s.Bucket = now.Add(-time.Duration(n)*time.Minute), "minute"
	}
	for _, f := range []struct {
		name string
		dst  *time.Time
	}{{"from", &s.From}, {"to", &s.To}} {
		if v := q.Get(f.name); v != "" {
			t, err := time.Parse(time.RFC3339, v)
			if err != nil {
				return s, errBadRequest("bad_query", f.name, "query %s=%q must be an RFC 3339 time such as 2026-12-01T00:00:00Z", f.name, v)
			}
			*f.dst = t
		}
	}
	if s.From.IsZero() {
		s.From = s.To.Add(-stats.DefaultRange)
	}
	if v := q.Get("bucket"); v != "" {
		if v != "minute" && v != "hour" && v != "day" {
			return s, errBadRequest("bad_query", "bucket", "query bucket=%q must be minute, hour or day", v)
		}
		s.Bucket = v
	}
	switch g := q.Get("group"); g {
	case "", "endpoint":
	case "model", "key", "rule":
		s.Group = g
	default:
		return s, errBadRequest("bad_query", "group", "query group=%q must be endpoint, model, key or rule", g)
	}
	switch {
	case !s.From.Before(s.To):
		return s, errBadRequest("bad_query", "from", "from must be before to")
	case s.To.Sub(s.From) > stats.MaxRange:
		return s, errBadRequest("bad_query", "from", "statistics reach back %d days; ask for a shorter range", int(stats.MaxRange.Hours()/24))
	case s.Bucket == "minute" && s.From.Before(now.Add(-store.MinuteBucketsKept)):
		return s, errBadRequest("bad_query", "bucket", "minute buckets reach back %d hours; use hour or day buckets for older ranges", int(store.MinuteBucketsKept.Hours()))
	}
	return s, nil
}

// statsFor answers a stats request's query.
func (a *App) statsFor(r *http.Request) (stats.Query, []stats.Bucket, error) {
	q, err := parseStatsQuery(r, time.Now())
	if err != nil {
		return q, nil, err
	}
	buckets, err := stats.Read(r.Context(), a.db, q)
	return q, buckets, err
}

// statsHandler is GET /api/stats.
func (a *App) statsHandler(w http.ResponseWriter, r *http.Request) error {
	_, buckets, err := a.statsFor(r)
	if err != nil {
		return err
	}
	out := make([]StatBucket, len(buckets))
	for i, b := range buckets {
		out[i] = StatBucket(b)
	}
	writeJSON(w, http.StatusOK, map[string]any{"buckets": out})
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
	return stats.WriteCSV(w, q, buckets)
}
