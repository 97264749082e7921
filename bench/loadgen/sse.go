package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/ccmesh/ccmesh/bench/internal/stat"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// received is one SSE event as the client saw it.
type received struct {
	name   string
	finish bool // a Gemini chunk with a finishReason: its stream's last
	seq    int
	ts     time.Time // the upstream's send time
	at     time.Time // when the read that completed it returned
	read   int       // index of that read
}

// streamStats is what one stream contributes.
type streamStats struct {
	delays          []time.Duration // seq ≥ 1; seq 0 is judged by first
	first           time.Duration   // first event, from request start
	content         time.Duration   // content_block_start, from its send time
	notAlone        int
	preludeNotAlone int
}

func runSSE(ctx context.Context, client *http.Client, c config, res *Result) error {
	body := requestBody(c, true)
	var mu sync.Mutex
	var delays, firsts, contents []time.Duration
	var wg sync.WaitGroup
	for range c.conns {
		wg.Go(func() {
			for range c.perConn {
				st, err := oneStream(ctx, client, c, body)
				mu.Lock()
				res.Streams++
				if err != nil {
					res.Incomplete++
					res.noteError(err)
				}
				if st != nil {
					delays = append(delays, st.delays...)
					firsts = append(firsts, st.first)
					contents = append(contents, st.content)
					res.NotAlone += st.notAlone
					res.PreludeNotAlone += st.preludeNotAlone
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	res.Events = len(delays)
	slices.Sort(delays)
	slices.Sort(firsts)
	slices.Sort(contents)
	res.EventP50Us, res.EventP99Us = stat.Us(stat.Percentile(delays, 50)), stat.Us(stat.Percentile(delays, 99))
	res.FirstP50Us, res.FirstP99Us = stat.Us(stat.Percentile(firsts, 50)), stat.Us(stat.Percentile(firsts, 99))
	res.ContentP50Us = stat.Us(stat.Percentile(contents, 50))
	return nil
}

// oneStream runs one streamed request. It returns the stats of what
// arrived, and an error when the stream was not complete: a non-200, a
// broken read, or events missing or out of order.
func oneStream(ctx context.Context, client *http.Client, c config, body []byte) (*streamStats, error) {
	t0 := time.Now()
	resp, err := post(ctx, client, c, body)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	evs, readErr := readEvents(resp.Body)
	st := judge(evs, t0, c.interval)
	if readErr != nil {
		return st, fmt.Errorf("read stream after %d events: %w", len(evs), readErr)
	}
	return st, checkComplete(evs, c)
}

// readEvents reads SSE events until EOF, stamping each with the time of the
// read that completed it.
func readEvents(r io.Reader) ([]received, error) {
	var evs []received
	buf := make([]byte, 32<<10)
	var pending []byte
	for reads := 0; ; reads++ {
		n, err := r.Read(buf)
		now := time.Now()
		pending = append(pending, buf[:n]...)
		for {
			end := bytes.Index(pending, []byte("\n\n"))
			if end < 0 {
				break
			}
			ev := parseEvent(pending[:end])
			ev.at, ev.read = now, reads
			evs = append(evs, ev)
			pending = pending[end+2:]
		}
		if errors.Is(err, io.EOF) {
			if len(bytes.TrimSpace(pending)) > 0 {
				return evs, fmt.Errorf("stream ended inside an event: %q", pending)
			}
			return evs, nil
		}
		if err != nil {
			return evs, err
		}
	}
}

// parseEvent reads the event name and the upstream's "seq" and "ts" fields
// without a JSON decode: an Anthropic upstream's event has them as JSON
// fields, a Chat upstream's content chunk as "seq=N ts=UNIXNS" in its text,
// which survives translation into any protocol. seq is -1 when absent (an
// event the proxy made itself: an error, or every event but the text ones
// of a translated stream). A Chat stream's events have no name; its end
// is named "[DONE]". A Gemini stream's events have no name either, and it
// ends with the chunk that carries a finishReason (Chat's is finish_reason).
func parseEvent(b []byte) received {
	ev := received{seq: -1}
	if rest, ok := bytes.CutPrefix(b, []byte("event: ")); ok {
		name, _, _ := bytes.Cut(rest, []byte("\n"))
		ev.name = string(name)
	} else if bytes.Equal(bytes.TrimSpace(b), []byte("data: [DONE]")) {
		ev.name = "[DONE]"
	} else {
		ev.finish = bytes.Contains(b, []byte(`"finishReason"`))
	}
	seqKey, tsKey := `"seq":`, `"ts":`
	if !bytes.Contains(b, []byte(seqKey)) {
		// In text, only a delta's counts: the done and completed events
		// of a Responses stream repeat the whole text.
		if ev.name != "" && !strings.HasSuffix(ev.name, "delta") {
			return ev
		}
		seqKey, tsKey = "seq=", "ts="
	}
	if v, ok := intField(b, seqKey); ok {
		ev.seq = int(v)
	}
	if v, ok := intField(b, tsKey); ok {
		ev.ts = time.Unix(0, v)
	}
	return ev
}

func intField(b []byte, key string) (int64, bool) {
	i := bytes.Index(b, []byte(key))
	if i < 0 {
		return 0, false
	}
	rest := b[i+len(key):]
	j := 0
	for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
		j++
	}
	v, err := strconv.ParseInt(string(rest[:j]), 10, 64)
	return v, err == nil
}

// judge computes a stream's figures. An event is "not alone" when it
// arrived in the same read as the timed event before it although the
// upstream sent it at least half an interval later: a proxy held or
// coalesced it. Events without a send time (seq < 0) are not judged.
func judge(evs []received, t0 time.Time, interval time.Duration) *streamStats {
	st := &streamStats{}
	prev := -1 // the last event with a send time
	for i, ev := range evs {
		if i == 0 {
			st.first = ev.at.Sub(t0)
		}
		if ev.seq < 0 {
			continue
		}
		if ev.seq == 1 {
			st.content = ev.at.Sub(ev.ts)
		}
		if ev.seq >= 1 {
			st.delays = append(st.delays, ev.at.Sub(ev.ts))
		}
		if prev >= 0 && ev.read == evs[prev].read && ev.ts.Sub(evs[prev].ts) >= interval/2 {
			st.notAlone++
			if evs[prev].seq == 0 {
				st.preludeNotAlone++
			}
		}
		prev = i
	}
	return st
}

// checkComplete: every timed event the upstream sent, in order, nothing
// missing or extra, and the stream ends the way the client's protocol
// ends one. From an Anthropic upstream every event is timed (seq 0, 1, 2,
// …, c.events in all); from a Chat upstream the content chunks 1 … events−4
// are, and the proxy may add untimed events of its own around them.
func checkComplete(evs []received, c config) error {
	if c.upstream == "anthropic" && len(evs) != c.events {
		return fmt.Errorf("got %d events, want %d", len(evs), c.events)
	}
	next, last := 0, c.events-1
	if c.upstream == "chat" {
		next, last = 1, c.events-4
	}
	for i, ev := range evs {
		if ev.seq < 0 && c.upstream == "chat" {
			continue
		}
		if ev.seq != next {
			return fmt.Errorf("event %d is %s with seq %d, want seq %d: missing, extra or out of order", i, ev.name, ev.seq, next)
		}
		next++
	}
	if next != last+1 {
		return fmt.Errorf("stream ended after seq %d, want %d", next-1, last)
	}
	if c.api == "gemini" {
		if len(evs) == 0 || !evs[len(evs)-1].finish {
			return fmt.Errorf("stream of %d events does not end with a finishReason chunk", len(evs))
		}
		return nil
	}
	end := map[string]string{"messages": "message_stop", "chat": "[DONE]", "responses": "response.completed"}[c.api]
	if len(evs) == 0 || evs[len(evs)-1].name != end {
		return fmt.Errorf("stream of %d events does not end with %s", len(evs), end)
	}
	return nil
}
