package proxy

import (
	"slices"
	"strings"
)

// Relays and gateways in front of older backends refuse parts of a request
// that today's clients send on every turn (Claude Code's
// context_management, tool flags, betas; OpenAI clients' stream_options
// and friends). A Drop names one such part that ccmesh may leave out: each
// costs at most a feature and never changes what is asked
// (docs/BEHAVIOUR.md#refused-fields). An endpoint that refused one gets the
// request again without it, and once that succeeds the endpoint keeps the
// Drop and has it applied before every request.
type Drop string

// DropPrefixBeta starts a Drop that removes one value of the
// anthropic-beta header: "beta:context-management-2025-06-27".
const DropPrefixBeta = "beta:"

const dropPrefixBeta = DropPrefixBeta

// droppablePart is one entry of the list of parts ccmesh may leave out.
type droppablePart struct {
	drop Drop
	// why it is safe to leave out: what the client loses.
	why string
}

// droppable is the one list of request parts ccmesh leaves out when an
// endpoint refuses them (besides anthropic-beta values, all of which are
// optional features). A path is a top-level member ("store"), a member of
// every tool ("tools[].defer_loading") or a member anywhere in the body
// ("cache_control.ttl": the ttl of any cache_control object). What is asked
// — model, messages, input, tools, system, max_tokens, stream — is never
// on it.
var droppable = []droppablePart{
	{"context_management", "server-side context editing: without it the whole conversation is sent, as before the feature"},
	{"output_config", "effort and output hints: the model answers at its default effort"},
	{"thinking.adaptive", "adaptive thinking becomes thinking with an explicit budget (dropped when max_tokens leaves no room)"},
	{"metadata", "a user id for abuse tracking: no effect on the answer"},
	{"service_tier", "a priority or flex tier: the endpoint's default tier answers"},
	{"prompt_cache_key", "a hint for cache routing: the cache may hit less often"},
	{"safety_identifier", "an end-user id for abuse tracking: no effect on the answer"},
	{"user", "an end-user id for abuse tracking: no effect on the answer"},
	{"store", "whether the provider keeps the answer: it keeps to its default"},
	{"include", "extra output such as encrypted reasoning: the client gets none back"},
	{"parallel_tool_calls", "permission for parallel tool calls: the endpoint's default applies"},
	{"stream_options", "a usage chunk at the end of a stream: usage is estimated if none comes"},
	{"reasoning_effort", "the reasoning effort: the model reasons at its default effort"},
	{"max_completion_tokens", "sent as max_tokens, the older name of the same limit"},
	{"client_metadata", "client details for the provider's logs: no effect on the answer"},
	{"tools[].defer_loading", "tool search: every tool is loaded up front"},
	{"tools[].eager_input_streaming", "streaming a tool's input before it is complete: it streams when complete"},
	{"tools[].cache_control", "a cache breakpoint on a tool: the prompt cache may hit less"},
	{"tools[].strict", "strict schema adherence for a tool's arguments: arguments are still validated by the client"},
	{"cache_control.ttl", "a longer cache lifetime: the default five minutes applies"},
	{"cache_control", "prompt caching hints: input is billed in full"},
}

// DroppablePart is one entry of the list, for the admin API.
type DroppablePart struct {
	Drop Drop
	Why  string
}

// DroppableParts is the list of parts ccmesh may leave out, besides
// anthropic-beta values, in the list's order.
func DroppableParts() []DroppablePart {
	out := make([]DroppablePart, len(droppable))
	for i, p := range droppable {
		out[i] = DroppablePart{Drop: p.drop, Why: p.why}
	}
	return out
}

// Why says why d is safe to leave out, and whether ccmesh may leave it out
// at all.
func (d Drop) Why() (string, bool) {
	if v, ok := strings.CutPrefix(string(d), dropPrefixBeta); ok {
		return "an optional beta feature of the Anthropic API", validBeta(v)
	}
	for _, p := range droppable {
		if p.drop == d {
			return p.why, true
		}
	}
	return "", false
}

// validBeta accepts what an anthropic-beta value looks like.
func validBeta(v string) bool {
	if v == "" || len(v) > 128 {
		return false
	}
	for _, c := range v {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// Drops is the set of parts left out of requests to one endpoint, learned
// or entered by hand. The zero value leaves out nothing.
type Drops []Drop

// Has reports whether d is among ds.
func (ds Drops) Has(d Drop) bool { return slices.Contains(ds, d) }

// betas are the anthropic-beta values ds leaves out.
func (ds Drops) betas() []string {
	var out []string
	for _, d := range ds {
		if v, ok := strings.CutPrefix(string(d), dropPrefixBeta); ok {
			out = append(out, v)
		}
	}
	return out
}

// bodyDrops reports whether any of ds changes the body (not only headers).
func (ds Drops) bodyDrops() bool {
	for _, d := range ds {
		if !strings.HasPrefix(string(d), dropPrefixBeta) {
			return true
		}
	}
	return false
}

// withoutBetas is an anthropic-beta header value without the values ds
// leaves out; "" when none remains.
func (ds Drops) withoutBetas(header string) string {
	drop := ds.betas()
	if len(drop) == 0 || header == "" {
		return header
	}
	var kept []string
	for v := range strings.SplitSeq(header, ",") {
		v = strings.TrimSpace(v)
		if v != "" && !slices.Contains(drop, v) {
			kept = append(kept, v)
		}
	}
	return strings.Join(kept, ",")
}
