package app

import (
	"github.com/ccmesh/ccmesh/app/capture"
	"github.com/ccmesh/ccmesh/app/stats"
	"github.com/ccmesh/ccmesh/proxy"
	"github.com/ccmesh/ccmesh/store"
)

// logSink receives the proxy's per-request records: it updates the
// in-memory health figures and queues the row for the batch writer. Both
// are cheap and never wait (docs/BEHAVIOUR.md#request-log).
type logSink struct{ a *App }

func (s logSink) Log(rec *proxy.Record) {
	s.a.keyFails.Observe(rec)
	s.a.figures.Observe(rec)
	row := LogRow(rec)
	stats.FillUsage(&row, rec, s.a.price)
	s.a.metrics.observe(rec)
	s.a.today.Add(rec.Time, row.Deltas)
	if rec.Capture != nil {
		row.Capture = capture.Source{Proxy: rec.Capture, AdminToken: s.a.token}
	}
	if w, ok := rec.Tag.(*capture.Wait); ok {
		row.Done = w.Logged
	}
	s.a.logw.Enqueue(row)
	s.a.health.Changed()
}

// LogRow is the request log row of a proxy record. Routing and the attempts
// stay Go values: the log writer marshals them off the request path.
func LogRow(rec *proxy.Record) store.RequestLog {
	return store.RequestLog{
		At:             rec.Time,
		Protocol:       string(rec.Protocol),
		Path:           rec.Path,
		ModelAsked:     rec.ModelAsked,
		ModelForwarded: rec.ModelForwarded,
		ModelAnswered:  rec.ModelAnswered,
		Explicit:       rec.Explicit,
		EndpointID:     rec.EndpointID,
		Endpoint:       rec.Endpoint,
		Status:         rec.Status,
		Attempts:       rec.AttemptCount,
		DurationMs:     rec.DurationMs,
		TTFBMs:         rec.TTFBMs,
		Stream:         rec.Stream,
		StreamEnd:      string(rec.StreamEnd),
		TokensIn:       rec.TokensIn,
		TokensOut:      rec.TokensOut,
		SentUpstream:   rec.SentUpstream,
		ClientGone:     rec.ClientGone,
		Error:          rec.Error,
		Routing:        rec.Routing,
		History:        proxy.History(rec.Attempts),
		ResentFrom:     rec.ResentFrom,
		Rule:           rec.Rule,
	}
}

// onLogsWritten runs on the log writer's goroutine after each batch: the
// new rows go to the UI's live stream as written, without reading them back.
func (a *App) onLogsWritten(rows []store.RequestLog) {
	if a.events.Subscribers() == 0 {
		a.events.Wake() // the tray counts today's requests: one signal for the batch
		return
	}
	for _, row := range rows {
		a.events.Publish("log", row)
	}
}

// DroppedLogs is how many request log rows were dropped because the
// writer's queue was full.
func (a *App) DroppedLogs() uint64 { return a.logw.Dropped() }
