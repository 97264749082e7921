// Command affinity measures what each routing strategy does to prompt
// caches and to load: ccmesh's proxy (package proxy, over real loopback
// HTTP) in front of 4 fake upstreams that each simulate a prompt cache,
// driven by 20 conversations of 10 turns, Claude Code style (each turn
// resends the whole conversation so far, with its session header).
//
// A fake upstream reports cache_read_input_tokens for the part of a
// request it has seen before: the turns of that conversation it served up
// to the previous one. Per strategy the program prints the cache-hit ratio
// (cached ÷ input tokens over all requests) and the busiest endpoint's
// share of requests against an even share. See bench/NOTES.md.
//
//	go run ./bench/affinity
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	"github.com/rs/zerolog"

	"github.com/ccmesh/ccmesh/breaker"
	"github.com/ccmesh/ccmesh/proxy"
	"github.com/ccmesh/ccmesh/proxy/translate/anthropic"
)

const (
	endpoints     = 4
	conversations = 20
	turns         = 10
	turnTokens    = 1000 // tokens each turn adds (the fake counts 4 bytes a token)
)

func main() {
	fmt.Printf("%d conversations × %d turns over %d endpoints\n\n", conversations, turns, endpoints)
	fmt.Println("| strategy | cache-hit ratio | busiest endpoint ÷ even share |")
	fmt.Println("|---|---:|---:|")
	for _, s := range proxy.Strategies {
		hit, busiest, err := run(s)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("| `%s` | %.3f | %.2f |\n", s, hit, busiest)
	}
}

// cachingUpstream is one endpoint with a prompt cache: per conversation,
// the number of turns it has seen.
type cachingUpstream struct {
	mu       sync.Mutex
	seen     map[string]int
	requests int
}

func (u *cachingUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
		Metadata struct {
			Conversation string `json:"conversation"`
		} `json:"metadata"`
	}
	body, _ := io.ReadAll(r.Body) // a short read only makes the request count as uncached
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	conv, n := req.Metadata.Conversation, len(req.Messages)
	u.mu.Lock()
	u.requests++
	cachedTurns := min(u.seen[conv], n-1)
	u.seen[conv] = max(u.seen[conv], n)
	u.mu.Unlock()
	input := 0
	for _, m := range req.Messages {
		input += len(m.Content) / 4
	}
	cached := cachedTurns * turnTokens
	w.Header().Set("Content-Type", "application/json")
	// Anthropic's input_tokens leaves cache reads out.
	fmt.Fprintf(w, `{"type":"message","role":"assistant","content":[{"type":"text","text":"ok"}],`+
		`"usage":{"input_tokens":%d,"cache_read_input_tokens":%d,"output_tokens":1}}`, input-cached, cached)
}

func run(strategy proxy.Strategy) (hitRatio, busiest float64, err error) {
	ups := make([]*cachingUpstream, endpoints)
	var eps []proxy.Endpoint
	for i := range ups {
		ups[i] = &cachingUpstream{seen: map[string]int{}}
		srv := httptest.NewServer(ups[i])
		defer srv.Close()
		eps = append(eps, proxy.Endpoint{ID: int64(i + 1), Name: fmt.Sprintf("e%d", i+1), BaseURL: srv.URL,
			APIKey: "sk-bench-key-0123456789", Protocol: anthropic.Protocol, Enabled: true, SortOrder: i})
	}
	p := proxy.New(proxy.Options{Breakers: breaker.NewSet(breaker.Config{}, nil), Logger: zerolog.Nop()})
	p.Update(proxy.Config{Endpoints: eps, Strategy: strategy})
	front := httptest.NewServer(p)
	defer front.Close()

	var cached, input int
	turn := strings.Repeat("x", turnTokens*4)
	// Conversations interleave turn by turn, as several Claude Code windows
	// do, in an order shuffled every turn (a fixed order would let
	// round-robin hand each conversation the same endpoint every turn).
	rng := rand.New(rand.NewPCG(20261201, 1))
	for t := 1; t <= turns; t++ {
		for _, c := range rng.Perm(conversations) {
			conv := fmt.Sprintf("conversation-%02d", c)
			msgs := make([]map[string]string, t)
			for i := range msgs {
				msgs[i] = map[string]string{"role": "user", "content": turn}
			}
			body, _ := json.Marshal(map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 1,
				"messages": msgs, "metadata": map[string]string{"conversation": conv}})
			req, err := http.NewRequest(http.MethodPost, front.URL+"/v1/messages", strings.NewReader(string(body)))
			if err != nil {
				return 0, 0, err
			}
			req.Header.Set("anthropic-version", "2023-06-01")
			req.Header.Set("x-claude-code-session-id", conv)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return 0, 0, err
			}
			var out struct {
				Usage struct {
					Input  int `json:"input_tokens"`
					Cached int `json:"cache_read_input_tokens"`
				} `json:"usage"`
			}
			err = json.NewDecoder(resp.Body).Decode(&out)
			resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusOK {
				return 0, 0, fmt.Errorf("%s turn %d: status %d: %v", conv, t, resp.StatusCode, err)
			}
			cached += out.Usage.Cached
			input += out.Usage.Input + out.Usage.Cached
		}
	}
	most := 0
	for _, u := range ups {
		most = max(most, u.requests)
	}
	even := float64(conversations*turns) / endpoints
	return float64(cached) / float64(input), float64(most) / even, nil
}
