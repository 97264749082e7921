package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/ccmesh/ccmesh/breaker"
	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// An answer names the model that wrote it; relays sometimes serve another
// one than the one asked for (docs/BEHAVIOUR.md#the-answers-model). Names
// that differ only in how a provider spells the same model are the same
// model: a date or version suffix (claude-sonnet-4-5-20250929,
// gpt-4o-2024-08-06, -latest, @20250929), a provider prefix
// (anthropic/claude-sonnet-4-5), case, and dots for dashes in version
// numbers (claude-sonnet-4.5).

var modelSuffix = regexp.MustCompile(`(?:[-@_](?:\d{8}|\d{4}-\d{2}-\d{2}|\d{4}|latest|v\d+(?:[.:]\d+)*|preview))+$`)

// canonicalModel is name as sameModel compares it.
func canonicalModel(name string) string {
	m := strings.ToLower(strings.TrimSpace(name))
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	m = strings.ReplaceAll(m, ".", "-")
	m = strings.ReplaceAll(m, "_", "-")
	if s := modelSuffix.ReplaceAllString(m, ""); s != "" {
		m = s
	}
	return m
}

// sameModel reports whether an answer that names answered came from the
// model forwarded; an answer that names none is taken as the model asked.
func sameModel(forwarded, answered string) bool {
	if answered == "" || forwarded == "" || forwarded == answered {
		return true
	}
	return canonicalModel(forwarded) == canonicalModel(answered)
}

var modelKey = []byte(`"model"`)

// modelOf is the model a body or an event names: top-level "model"
// (Chat, a Messages or Responses body), message.model (Anthropic's
// message_start) or response.model (Responses' events); "" when none.
func modelOf(b []byte) string {
	if !bytes.Contains(b, modelKey) {
		return ""
	}
	vals, ok := conv.Lookup(b, modelPaths...)
	if !ok {
		return ""
	}
	for _, occurrences := range vals {
		var s string
		for _, v := range occurrences {
			if json.Unmarshal(v, &s) != nil {
				return "" // a model that is no string: the answer names none
			}
		}
		if s != "" {
			return s
		}
	}
	return ""
}

// modelPaths are where an answer or an event names its model: the
// top-level model (a body, a Chat chunk), message.model (Anthropic's
// message_start), response.model (Responses' events).
var modelPaths = [][]string{{"model"}, {"message", "model"}, {"response", "model"}}

// OnModelMismatch is what an endpoint does with an answer that names
// another model than the one forwarded.
type OnModelMismatch string

const (
	MismatchRecord OnModelMismatch = "record" // the log row says so (the default, "")
	MismatchFail   OnModelMismatch = "fail"   // the attempt fails, Broken, and the loop goes on
)

// MismatchModes are the values an endpoint's on_model_mismatch takes.
var MismatchModes = []OnModelMismatch{MismatchRecord, MismatchFail}

// Valid reports whether m is one of MismatchModes.
func (m OnModelMismatch) Valid() bool { return m == MismatchRecord || m == MismatchFail }

// answeredOther is the model the attempt's answer names when it is
// another than forwarded, "" when it is the same or names none.
func (q *request) answeredOther(forwarded string) string {
	if m := q.meter.model; !sameModel(forwarded, m) {
		return m
	}
	return ""
}

// answeringModel is the other model the answering attempt's answer named,
// "" when none answered or it named the one forwarded.
func answeringModel(atts []Attempt) string {
	for i := len(atts) - 1; i >= 0; i-- {
		if atts[i].Outcome == breaker.Success {
			return atts[i].ModelAnswered
		}
	}
	return ""
}

// mismatchFailure is the result of an answer from another model than the
// one forwarded, on an endpoint whose on_model_mismatch is fail: the
// attempt fails, Broken, before anything reaches the client.
func (q *request) mismatchFailure(e *endpoint, status int) (result, bool) {
	if e.OnModelMismatch != MismatchFail {
		return result{}, false
	}
	other := q.answeredOther(q.rec.ModelForwarded)
	if other == "" {
		return result{}, false
	}
	return result{
		verdict: verdict{act: actNext, outcome: failure(breaker.Broken), errType: ErrModelMismatch},
		status:  status,
		msg:     fmt.Sprintf("answered by %s, not %s (on_model_mismatch is fail)", other, q.rec.ModelForwarded),
	}, true
}
