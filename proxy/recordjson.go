package proxy

import (
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// The request log stores every request's routing and failover history as
// JSON, written on the log writer's goroutine. encoding/json's reflection
// was ~3 µs of that writer's work per request on a core the requests keep
// cold (bench/NOTES.md, The log's CPU); these appenders write the same
// JSON as encoding/json with HTML left unescaped (recordjson_test.go holds
// them to it), and decline (ok false) what encoding/json would refuse, so
// that the caller can fall back to it and fail the same way.

// History is a request's attempts, oldest first, as the request log
// stores them; it marshals as the []Attempt it is.
type History []Attempt

// AppendJSON appends h as encoding/json writes a []Attempt.
func (h History) AppendJSON(dst []byte) ([]byte, bool) {
	// ~400 bytes an attempt with its usage and cost: one allocation.
	return conv.AppendArray(slices.Grow(dst, 2+400*len(h)), h, (*Attempt).appendJSON)
}

// AppendJSON appends r as encoding/json writes it.
func (r Routing) AppendJSON(dst []byte) ([]byte, bool) {
	start := len(dst)
	dst = slices.Grow(dst, 96+64*len(r.Candidates)+128*len(r.Excluded))
	dst = append(dst, `{"strategy":`...)
	dst = conv.AppendString(dst, string(r.Strategy))
	dst = append(dst, `,"candidates":`...)
	dst, _ = conv.AppendArray(dst, r.Candidates, (*Candidate).appendJSON)
	dst = append(dst, `,"excluded":`...)
	dst, ok := conv.AppendArray(dst, r.Excluded, (*Excluded).appendJSON)
	if !ok {
		return dst[:start], false
	}
	if r.WaitedMs != 0 {
		dst = appendInt(dst, `,"waited_ms":`, r.WaitedMs)
	}
	if r.Session != "" {
		dst = appendKeyString(dst, `,"session":`, r.Session)
	}
	if r.Affinity {
		dst = append(dst, `,"affinity":true`...)
	}
	return append(dst, '}'), true
}

func (c *Candidate) appendJSON(dst []byte) ([]byte, bool) {
	dst = appendKeyString(openEndpoint(dst, c.EndpointID, c.Endpoint), `,"state":`, c.State.String())
	return append(dst, '}'), true
}

func (x *Excluded) appendJSON(dst []byte) ([]byte, bool) {
	start := len(dst)
	dst = appendKeyString(openEndpoint(dst, x.EndpointID, x.Endpoint), `,"reason":`, string(x.Reason))
	if x.State != 0 {
		dst = appendKeyString(dst, `,"state":`, x.State.String())
	}
	if x.BreakerReason != 0 {
		dst = appendKeyString(dst, `,"breaker_reason":`, x.BreakerReason.String())
	}
	if x.ProbeInFlight {
		dst = append(dst, `,"probe_in_flight":true`...)
	}
	if !x.Until.IsZero() {
		var ok bool
		if dst, ok = appendTime(append(dst, `,"until":`...), x.Until); !ok {
			return dst[:start], false
		}
	}
	if x.Balance {
		dst = append(dst, `,"balance":true`...)
	}
	return append(dst, '}'), true
}

func (a *Attempt) appendJSON(dst []byte) ([]byte, bool) {
	start := len(dst)
	dst = appendKeyString(openEndpoint(dst, a.EndpointID, a.Endpoint), `,"error_type":`, string(a.ErrorType))
	dst = appendInt(dst, `,"status":`, int64(a.Status))
	dst = appendKeyString(dst, `,"message":`, a.Message)
	dst = appendKeyString(dst, `,"body_head":`, a.BodyHead)
	dst, ok := appendTime(append(dst, `,"started_at":`...), a.StartedAt)
	if !ok {
		return dst[:start], false
	}
	dst = appendInt(dst, `,"duration_ms":`, a.DurationMs)
	dst = strconv.AppendBool(append(dst, `,"breaker_counted":`...), a.BreakerCounted)
	dst = appendKeyString(dst, `,"outcome":`, a.Outcome.String())
	dst = appendKeyStringIf(dst, `,"translation":`, string(a.Translation))
	dst = appendKeyStringIf(dst, `,"model":`, a.Model)
	if u := a.Usage; u != nil {
		dst = appendInt(dst, `,"usage":{"input":`, u.Input)
		dst = appendInt(dst, `,"output":`, u.Output)
		dst = appendInt(dst, `,"cache_read":`, u.CacheRead)
		dst = appendInt(dst, `,"cache_write":`, u.CacheWrite)
		dst = appendInt(dst, `,"reasoning":`, u.Reasoning)
		dst = strconv.AppendBool(append(dst, `,"estimated":`...), u.Estimated)
		dst = append(dst, '}')
	}
	dst = appendKeyStringIf(dst, `,"hedge":`, string(a.Hedge))
	if a.KeyID != 0 {
		dst = appendInt(dst, `,"key_id":`, a.KeyID)
	}
	dst = appendKeyStringIf(dst, `,"key":`, a.Key)
	if a.KeyFault {
		dst = append(dst, `,"key_fault":true`...)
	}
	if c := a.Cost; c != nil {
		dst = append(dst, `,"cost_usd":`...)
		if !c.Priced {
			dst = append(dst, "null"...)
		} else if dst, ok = appendFloat(dst, c.USD); !ok {
			return dst[:start], false
		}
	}
	dst = appendKeyStringIf(dst, `,"adjusted":`, string(a.Adjusted))
	if len(a.Dropped) > 0 {
		dst, _ = conv.AppendArray(append(dst, `,"dropped":`...), a.Dropped, appendStringElem)
	}
	dst = appendKeyStringIf(dst, `,"refused":`, a.Refused)
	dst = appendKeyStringIf(dst, `,"model_answered":`, a.ModelAnswered)
	return append(dst, '}'), true
}

// openEndpoint opens the object of a candidate, an exclusion or an
// attempt, which all begin with the endpoint's id and name.
func openEndpoint(dst []byte, id int64, name string) []byte {
	return appendKeyString(appendInt(dst, `{"endpoint_id":`, id), `,"endpoint":`, name)
}

// appendStringElem writes a []string's element for conv.AppendArray.
func appendStringElem(s *string, dst []byte) ([]byte, bool) {
	return conv.AppendString(dst, *s), true
}

// appendInt appends key (with its punctuation) and n.
func appendInt(dst []byte, key string, n int64) []byte {
	return strconv.AppendInt(append(dst, key...), n, 10)
}

// appendKeyString appends key (with its punctuation) and s as a JSON string.
func appendKeyString(dst []byte, key, s string) []byte {
	return conv.AppendString(append(dst, key...), s)
}

// appendKeyStringIf is appendKeyString for an omitempty member.
func appendKeyStringIf(dst []byte, key, s string) []byte {
	if s == "" {
		return dst
	}
	return appendKeyString(dst, key, s)
}

// appendTime appends t as time.Time's MarshalJSON writes it; ok is false
// where MarshalJSON fails (a year outside 0–9999, a zone offset of a day
// or more).
func appendTime(dst []byte, t time.Time) ([]byte, bool) {
	if y := t.Year(); y < 0 || y > 9999 {
		return dst, false
	}
	if _, off := t.Zone(); off <= -24*3600 || off >= 24*3600 {
		return dst, false
	}
	dst = append(dst, '"')
	dst = t.AppendFormat(dst, time.RFC3339Nano)
	return append(dst, '"'), true
}

// appendFloat appends f as encoding/json writes a float64; ok is false for
// NaN and the infinities, which it refuses.
func appendFloat(dst []byte, f float64) ([]byte, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return dst, false
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// e-09 → e-9, as encoding/json cleans it up.
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst, true
}
