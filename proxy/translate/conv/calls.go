package conv

import "strings"

// ClientCall is how a tool call an upstream made reaches the client that
// sent r (docs/BEHAVIOUR.md#translation): under the name the client
// declared, or not at all (ok false) when the call is the upstream's own.
//
//   - A custom_tool_call of a tool the client did not declare as custom is
//     a tool the upstream runs itself (xAI streams its search tools so,
//     already completed): the client has nothing to run, and a call it
//     never declared would stop its turn on an unknown tool.
//   - A namespaced call keeps its flat name when the client declared it
//     (a Responses client's namespace tool, mapped back by its encoder);
//     otherwise the client knows the function by its own name.
func (r *Request) ClientCall(p Part) (name string, ok bool) {
	if r == nil || (!p.Custom && p.Namespace == "") {
		return p.Name, true
	}
	t, declared := r.tool(p.Name)
	if p.Custom && (!declared || t.Kind != ToolCustom) {
		return "", false
	}
	if p.Namespace != "" && !declared {
		return strings.TrimPrefix(p.Name, NamespacedName(p.Namespace, "")), true
	}
	return p.Name, true
}

// tool is the declared tool of that flat name.
func (r *Request) tool(name string) (Tool, bool) {
	for _, t := range r.Tools {
		if t.Name == name {
			return t, true
		}
	}
	return Tool{}, false
}

// ClientStop is the stop reason a client is given when calls of the
// upstream's own were left out: a tool_use stop with no call left for the
// client follows the text instead.
func ClientStop(s StopReason, calledClient bool) StopReason {
	if s == StopToolUse && !calledClient {
		return StopEnd
	}
	return s
}

// ClientResponse is resp as the client that sent r gets it: the
// upstream's own calls left out, the others under the client's names, and
// the stop reason that follows (ClientCall, ClientStop).
func (r *Request) ClientResponse(resp *Response) *Response {
	if r == nil || resp == nil {
		return resp
	}
	out := *resp
	out.Parts = make([]Part, 0, len(resp.Parts))
	called := false
	for _, p := range resp.Parts {
		if p.Kind == PartToolCall {
			name, ok := r.ClientCall(p)
			if !ok {
				continue
			}
			p.Name, called = name, true
		}
		out.Parts = append(out.Parts, p)
	}
	out.Stop = ClientStop(out.Stop, called)
	return &out
}

// ClientStream wraps a client's stream encoder so that it writes what
// ClientResponse keeps: the blocks of the upstream's own calls are left
// out whole, the other calls renamed, and the finish's stop reason follows.
func ClientStream(r *Request, enc StreamEncoder) StreamEncoder {
	if r == nil {
		return enc
	}
	return &clientStream{StreamEncoder: enc, req: r, skip: -1}
}

type clientStream struct {
	StreamEncoder
	req    *Request
	skip   int  // the index of the block left out, -1 when none
	called bool // a call reached the client
}

// Encode passes ev on unless it belongs to a block left out.
func (c *clientStream) Encode(dst []byte, ev Event) []byte {
	switch ev.Type {
	case EvBlockStart:
		c.skip = -1
		if ev.Part.Kind == PartToolCall {
			name, ok := c.req.ClientCall(ev.Part)
			if !ok {
				c.skip = ev.Index
				return dst
			}
			ev.Part.Name, c.called = name, true
		}
	case EvDelta, EvBlockStop:
		if ev.Index == c.skip {
			return dst
		}
	case EvFinish:
		ev.Stop = ClientStop(ev.Stop, c.called)
	}
	return c.StreamEncoder.Encode(dst, ev)
}
