package app

import (
	"context"
	"net/http"
	"time"

	"github.com/ccmesh/ccmesh/app/health"
	"github.com/ccmesh/ccmesh/internal/logcode"
	"github.com/ccmesh/ccmesh/store"
)

// Health (docs/BEHAVIOUR.md#health): the rows of GET /api/health, put
// together from the breakers, the figures the request log feeds and the
// last Tests. The figures, the words for a breaker's view and the
// publisher of the live stream's health event are the package app/health;
// the rows are the app's types, so that the generated TypeScript names
// them as the app's (frontend/src/api/types.gen.ts).

// Health is one endpoint's row of GET /api/health (docs/BEHAVIOUR.md#health).
type Health struct {
	ID                  int64       `json:"id"`
	Name                string      `json:"name"`
	Status              string      `json:"status"` // healthy | unhealthy | recovering | disabled
	State               string      `json:"state"`
	Reason              string      `json:"reason"`
	ConsecutiveFailures int         `json:"consecutive_failures"`
	SuccessRate         *float64    `json:"success_rate"`
	P50Ms               *int64      `json:"p50_ms"`
	LastError           string      `json:"last_error"`
	LastFailureAt       *time.Time  `json:"last_failure_at"`
	RetryInMs           int64       `json:"retry_in_ms"`
	LastTest            *TestResult `json:"last_test"`
	// OtherModel24h counts the answers of the last 24 hours that named
	// another model than the one forwarded (docs/BEHAVIOUR.md#the-answers-model).
	OtherModel24h int64 `json:"other_model_24h"`
	// Keys is the health of each key of its pool (docs/BEHAVIOUR.md#key-pools).
	Keys []KeyHealth `json:"keys"`
}

// Health computes every endpoint's health now, in list order.
func (a *App) Health() []Health {
	now := time.Now()
	st := a.state.Load()
	out := make([]Health, 0, len(st.Endpoints))
	for _, e := range st.Endpoints {
		out = append(out, a.endpointHealth(e, now))
	}
	return out
}

func (a *App) getHealth(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, a.Health())
	return nil
}

// endpointHealth is e's health with its keys'.
func (a *App) endpointHealth(e store.Endpoint, now time.Time) Health {
	h := a.healthOf(e.ID, e.Name, e.Enabled, now)
	h.Keys = a.keyHealth(e, now)
	return h
}

// healthOf is an endpoint's health now, without its keys'. LastError and
// LastTest hold upstream text already masked where it was recorded (the
// proxy's attempt messages, Test before it keeps its result).
func (a *App) healthOf(id int64, name string, enabled bool, now time.Time) Health {
	v := a.breakers.Get(id).View(now)
	f := a.figures.Endpoint(id, now)
	return Health{
		ID: id, Name: name,
		Status:              health.Status(enabled, v),
		State:               v.State.String(),
		Reason:              v.Reason.String(),
		ConsecutiveFailures: v.Counts.ConsecutiveFailures,
		SuccessRate:         f.SuccessRate,
		P50Ms:               f.P50Ms,
		LastError:           f.LastError,
		LastFailureAt:       f.LastFailureAt,
		RetryInMs:           health.RetryIn(v, now),
		LastTest:            (*TestResult)(a.tests.Last(id)),
		OtherModel24h:       f.OtherModel24h,
	}
}

// healthHost is the app as the health publisher sees it (health.Host).
type healthHost struct{ a *App }

func (h healthHost) Health() any { return h.a.Health() }

func (h healthHost) Lost() [3]uint64 {
	w := h.a.logw
	return [3]uint64{w.Dropped(), w.Failed(), w.CapturesDropped()}
}

func (h healthHost) PublishInfo() { h.a.events.Publish("info", h.a.Info()) }

func (h healthHost) Subscribers() int { return h.a.events.Subscribers() }

func (h healthHost) Wake() { h.a.events.Wake() }

func (h healthHost) Send(data []byte) { h.a.events.Send(Event{Name: "health", Data: data}) }

// loadOtherModels counts the answers from another model of the last 24
// hours that the log holds (health.Stats.LoadOtherModels).
func (a *App) loadOtherModels(ctx context.Context, now time.Time) {
	some, err := a.figures.LoadOtherModels(ctx, a.db, now)
	if err != nil {
		if ctx.Err() == nil {
			a.log.Warn().Err(err).Str(logcode.Field, logcode.OtherModelsUncount).Msg("counting answers from another model failed; the figure starts at 0")
		}
		return
	}
	if some {
		a.health.Changed()
	}
}
