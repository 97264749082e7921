package faults

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// lockstepDeltas is how many text deltas the lockstep upstream sends, each
// only after the client has acknowledged the one before.
const lockstepDeltas = 5

// testEventByEvent checks docs/BEHAVIOUR.md#streaming's "each event is flushed to the client at
// once": the upstream sends the next delta only after the client has read
// the previous one through ccmesh, so any buffering in ccmesh stalls the
// exchange and the upstream reports which delta never arrived. No clock
// decides the result; the 5 s bound only ends a stalled exchange.
func testEventByEvent(t *testing.T, bin string) {
	c := startCCMesh(t, bin)
	c.setTimeouts(t, 10*time.Second, 10*time.Second) // buffering, not a timeout, must be what fails
	ack := make(chan int, lockstepDeltas)            // buffered: a late delta must not block the client
	missed := make(chan int, 1)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		io.WriteString(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_lock\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n")
		io.WriteString(w, "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")
		for i := range lockstepDeltas {
			fmt.Fprintf(w, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"d%d \"}}\n\n", i)
			rc.Flush()
			select {
			case <-ack:
			case <-time.After(5 * time.Second):
				missed <- i
				return
			case <-r.Context().Done():
				return
			}
		}
		io.WriteString(w, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	}))
	t.Cleanup(up.Close)
	c.addEndpoint(t, endpointSpec{Name: "lockstep", BaseURL: up.URL, Protocol: "anthropic", APIKey: "sk-ant-lock", Models: []string{"claude-e2e-lockstep"}})

	req, err := newMessageRequest(t.Context(), c.url(""), "claude-e2e-lockstep", true)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		t.Fatalf("request: %v", err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	got := 0
	for got < lockstepDeltas {
		line, err := br.ReadString('\n')
		if err != nil {
			select {
			case i := <-missed:
				t.Fatalf("delta %d did not reach the client within 5 s of its flush upstream: ccmesh buffered it (docs/BEHAVIOUR.md#streaming)", i)
			default:
				t.Fatalf("stream ended after %d of %d deltas: %v", got, lockstepDeltas, err)
			}
		}
		if strings.Contains(line, "text_delta") {
			got++
			ack <- got
		}
	}
}
