import { describe, expect, it } from 'vitest';
import { isEventStream, parseSSE, streamText } from './sse';

const anthropic = [
  'event: message_start',
  'data: {"type":"message_start","message":{"id":"m","content":[]}}',
  '',
  'event: content_block_start',
  'data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}',
  '',
  ': a comment',
  'event: content_block_delta',
  'data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}',
  '',
  'event: content_block_delta',
  'data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\\"a\\""}}',
  '',
  'event: content_block_delta',
  'data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"lo"}}',
  '',
  'event: message_stop',
  'data: {"type":"message_stop"}',
  '',
  '',
].join('\n');

describe('captured streams', () => {
  it('reads Anthropic events and joins their text deltas only', () => {
    const events = parseSSE(anthropic);
    expect(events.map((e) => e.event)).toEqual(['message_start', 'content_block_start', 'content_block_delta', 'content_block_delta', 'content_block_delta', 'message_stop']);
    expect(streamText(events)).toBe('Hello');
  });

  it('reads OpenAI Chat chunks (no event names, CRLF, [DONE])', () => {
    const body = [
      'data: {"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}',
      'data: {"choices":[{"index":0,"delta":{"content":"po"}}]}',
      'data: {"choices":[{"index":0,"delta":{"content":"ng"}}]}',
      'data: {"choices":[],"usage":{"prompt_tokens":3}}',
      'data: [DONE]',
      '',
    ].join('\r\n\r\n');
    const events = parseSSE(body);
    expect(events).toHaveLength(5);
    expect(events[0].event).toBe('');
    expect(streamText(events)).toBe('pong');
  });

  it('reads OpenAI Responses text deltas', () => {
    const body = [
      'event: response.created\ndata: {"type":"response.created"}',
      'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":"Hi "}',
      'event: response.reasoning_summary_text.delta\ndata: {"type":"response.reasoning_summary_text.delta","delta":"thinking"}',
      'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":"there"}',
      'event: response.completed\ndata: {"type":"response.completed"}',
    ].join('\n\n');
    expect(streamText(parseSSE(body))).toBe('Hi there');
  });

  it('joins multi-line data and survives data that is not JSON', () => {
    const events = parseSSE('event: x\ndata: a\ndata: b\n\ndata: {broken\n\n');
    expect(events).toEqual([{ event: 'x', data: 'a\nb' }, { event: '', data: '{broken' }]);
    expect(streamText(events)).toBe('');
  });

  it('knows a stream by its content type, or by its first bytes when there is none', () => {
    expect(isEventStream({ 'content-type': 'text/event-stream; charset=utf-8' }, '')).toBe(true);
    expect(isEventStream({ 'content-type': 'application/json' }, 'data: x')).toBe(false);
    expect(isEventStream({}, 'event: message_start\ndata: {}')).toBe(true);
    expect(isEventStream({}, '{"type":"message"}')).toBe(false);
  });
});
