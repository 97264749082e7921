// Reading a captured server-sent event stream (docs/BEHAVIOUR.md#capture-and-resend): the events as they were
// sent, and the message text they carried, whichever of the three protocols the client spoke.

export interface SSEEvent {
  /** The `event:` name; empty when the stream names none (OpenAI Chat). */
  event: string;
  /** The `data:` lines joined by newlines. */
  data: string;
}

/** The events of an SSE body, in order; comments and empty blocks are left out. */
export function parseSSE(body: string): SSEEvent[] {
  const out: SSEEvent[] = [];
  for (const block of body.replace(/\r\n?/g, '\n').split(/\n{2,}/)) {
    let event = '';
    const data: string[] = [];
    let seen = false;
    for (const line of block.split('\n')) {
      if (!line || line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const name = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (name === 'event') {
        event = value;
        seen = true;
      } else if (name === 'data') {
        data.push(value);
        seen = true;
      }
    }
    if (seen) out.push({ event, data: data.join('\n') });
  }
  return out;
}

/** Whether a captured response is an event stream: by its content type, or by its first bytes. */
export function isEventStream(headers: Record<string, string>, body: string): boolean {
  const type = headers['content-type'] ?? '';
  if (type) return type.toLowerCase().startsWith('text/event-stream');
  return /^(event|data):/m.test(body.slice(0, 200));
}

type Delta = Record<string, unknown>;

/** The text one event adds to the message: Anthropic, OpenAI Chat and OpenAI Responses text deltas. */
function textOf(ev: SSEEvent): string {
  if (!ev.data || ev.data === '[DONE]') return '';
  let v: unknown;
  try {
    v = JSON.parse(ev.data);
  } catch {
    return '';
  }
  if (!v || typeof v !== 'object') return '';
  const o = v as Delta;
  // Anthropic: content_block_delta with a text_delta.
  if (o.type === 'content_block_delta') {
    const d = o.delta as Delta | undefined;
    return d && d.type === 'text_delta' && typeof d.text === 'string' ? d.text : '';
  }
  // OpenAI Responses: response.output_text.delta.
  if (o.type === 'response.output_text.delta') return typeof o.delta === 'string' ? o.delta : '';
  // OpenAI Chat: choices[].delta.content.
  if (Array.isArray(o.choices)) {
    return o.choices
      .map((c: unknown) => {
        const d = c && typeof c === 'object' ? ((c as Delta).delta as Delta | undefined) : undefined;
        return d && typeof d.content === 'string' ? d.content : '';
      })
      .join('');
  }
  return '';
}

/** The message text a stream carried: its text deltas, concatenated in order. */
export function streamText(events: SSEEvent[]): string {
  return events.map(textOf).join('');
}
