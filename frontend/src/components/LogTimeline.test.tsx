import { cleanup, render, screen, within } from '@testing-library/react';
import { I18nextProvider } from 'react-i18next';
import { describe, expect, it } from 'vitest';
import type { Attempt, LogDetail } from '../api/types';
import { createI18n, type Language } from '../i18n';
import { endpoint } from '../test/utils';
import { LogTimeline } from './LogTimeline';

const attempt = (over: Partial<Attempt>): Attempt => ({
  endpoint_id: 1,
  endpoint: 'gpt',
  outcome: 'success',
  error_type: '',
  status: 200,
  message: '',
  body_head: '',
  started_at: '2026-11-30T08:01:00Z',
  duration_ms: 10,
  breaker_counted: false,
  ...over,
});

const log: LogDetail = {
  id: 9,
  at: '2026-11-30T08:01:00Z',
  protocol: 'anthropic',
  path: '/v1/messages',
  model_asked: 'claude-sonnet-4-5',
  model_forwarded: 'gpt-5',
  explicit: false,
  endpoint_id: 1,
  endpoint: 'gpt',
  status: 200,
  attempts: 2,
  duration_ms: 40,
  ttfb_ms: 30,
  stream: false,
  stream_end: '',
  tokens_in: 0,
  tokens_out: 0,
  sent_upstream: true,
  client_gone: false,
  error: '',
  usage: null,
  cost_usd: null,
  rule: '',
  routing: {
    strategy: 'sticky',
    candidates: [
      { endpoint_id: 2, endpoint: 'codex', state: 'closed' },
      { endpoint_id: 1, endpoint: 'gpt', state: 'half_open' },
    ],
    excluded: [
      { endpoint_id: 3, endpoint: 'chat', reason: 'protocol' },
      { endpoint_id: 99, endpoint: 'gone', reason: 'protocol' },
      { endpoint_id: 4, endpoint: 'haiku', reason: 'model' },
      { endpoint_id: 5, endpoint: 'busy', reason: 'breaker', state: 'half_open', probe_in_flight: true },
      { endpoint_id: 6, endpoint: 'slow', reason: 'breaker', state: 'open', breaker_reason: 'rate_limited', until: '2026-11-30T08:02:00Z' },
    ],
  },
  history: [
    attempt({ endpoint_id: 2, endpoint: 'codex', outcome: 'neutral', error_type: 'translation', status: 0, message: 'previous_response_id cannot be carried', translation: 'anthropic→openai-responses' }),
    attempt({ translation: 'anthropic→openai-chat' }),
  ],
};

const endpoints = [endpoint({ id: 3, name: 'chat', protocol: 'openai-chat' }), endpoint({ id: 1, name: 'gpt', protocol: 'openai-chat' })];

function show(l: LogDetail, lang: Language = 'en') {
  render(
    <I18nextProvider i18n={createI18n(lang)}>
      <LogTimeline log={l} endpoints={endpoints} />
    </I18nextProvider>,
  );
}

const reasons = () => within(screen.getByTestId('routing-excluded')).getAllByRole('listitem').map((li) => li.textContent);

describe('log timeline', () => {
  it('names the pool key of an attempt, and an endpoint left out for its keys', () => {
    show({
      ...log,
      routing: { ...log.routing!, excluded: [{ endpoint_id: 8, endpoint: 'pool', reason: 'keys' }] },
      history: [attempt({ key_id: 12, key: 'spare (sk-…6789)', key_fault: true, outcome: 'failure', status: 401 }), attempt({ endpoint: 'claude', endpoint_id: 7 })],
    });
    const [first, second] = screen.getAllByTestId('attempt');
    expect(within(first).getByTestId('attempt-key')).toHaveTextContent('spare (sk-…6789)');
    expect(within(second).queryByTestId('attempt-key')).toBeNull();
    expect(reasons()).toEqual(['pool no key of its pool available']);
  });

  it('marks an attempt answered by another model than the one sent', () => {
    show({ ...log, history: [attempt({ model: 'claude-sonnet-4-5', model_answered: 'glm-4.5-air' }), attempt({ endpoint: 'claude', endpoint_id: 7 })] });
    const [first, second] = screen.getAllByTestId('attempt');
    expect(within(first).getByTestId('attempt-other-model')).toHaveTextContent('answered by glm-4.5-air');
    expect(within(second).queryByTestId('attempt-other-model')).toBeNull();
  });

  it('shows what an attempt went without, and the refusal of its first try', () => {
    show({ ...log, history: [attempt({ dropped: ['context_management', 'beta:context-management-2025-06-27'], refused: '400: context_management: Extra inputs are not permitted' }), attempt({ endpoint: 'claude', endpoint_id: 7 })] });
    const [first, second] = screen.getAllByTestId('attempt');
    expect(within(first).getByTestId('attempt-dropped')).toHaveTextContent('without context_management, beta:context-management-2025-06-27');
    expect(within(first).getByTestId('attempt-refused')).toHaveTextContent('First try refused: 400: context_management: Extra inputs are not permitted');
    expect(within(second).queryByTestId('attempt-dropped')).toBeNull();
    expect(within(second).queryByTestId('attempt-refused')).toBeNull();
  });

  it('tags each translated attempt with its translation, and none on a pass-through', () => {
    show({ ...log, history: [...log.history!, attempt({ endpoint: 'claude', endpoint_id: 7 })] });
    const attempts = screen.getAllByTestId('attempt');
    expect(within(attempts[0]).getByTestId('attempt-translation')).toHaveTextContent('Anthropic → OpenAI Responses');
    expect(within(attempts[1]).getByTestId('attempt-translation')).toHaveTextContent('Anthropic → OpenAI Chat');
    expect(document.body).not.toHaveTextContent('openai-');
    expect(within(attempts[1]).getByTestId('attempt-translation')).toHaveAttribute('title', 'Translated from the client’s protocol to the endpoint’s');
    expect(within(attempts[2]).queryByTestId('attempt-translation')).toBeNull();
  });

  it('says in words that a request could not be carried in the endpoint’s protocol', () => {
    show(log);
    const first = screen.getAllByTestId('attempt')[0];
    expect(within(first).getByTestId('attempt-error')).toHaveTextContent('cannot be carried in this endpoint’s protocol');
    expect(first).toHaveTextContent('neutral');
    expect(first).toHaveTextContent('previous_response_id cannot be carried');
  });

  it('gives every exclusion reason in words, naming the protocol an endpoint speaks', () => {
    show(log);
    expect(reasons()).toEqual([
      'chat speaks OpenAI Chat; model not named',
      'gone speaks another protocol; model not named',
      'haiku model not in its list',
      'busy half-open (probe in flight)',
      'slow open (rate limited)',
    ]);
    expect(screen.getByTestId('routing-candidates')).toHaveTextContent('codex closedgpt half-open');
    // No identifier of the API's closed sets reaches the screen as it came.
    const words = [screen.getByTestId('routing-excluded'), screen.getByTestId('routing-candidates'), ...screen.getAllByTestId('attempt-error')].map((el) => el.textContent).join(' ');
    for (const raw of ['half_open', 'rate_limited', 'breaker', 'translation', 'openai-chat']) expect(words).not.toContain(raw);
  });

  it('says in words how a retried request was adjusted', () => {
    show({ ...log, history: [attempt({ adjusted: 'strip_thinking' }), attempt({ adjusted: 'lower_max_tokens' }), attempt({})] });
    const attempts = screen.getAllByTestId('attempt');
    expect(within(attempts[0]).getByTestId('attempt-adjusted')).toHaveTextContent('retried without thinking');
    expect(within(attempts[1]).getByTestId('attempt-adjusted')).toHaveTextContent('retried without the output limit');
    expect(within(attempts[2]).queryByTestId('attempt-adjusted')).toBeNull();
    expect(document.body).not.toHaveTextContent('strip_thinking');
  });

  it('says each attempt’s part in a race in words, in both languages (item 3)', () => {
    const raced = { ...log, history: [attempt({ hedge: 'cancelled', error_type: 'hedge_cancelled', outcome: 'neutral' }), attempt({ hedge: 'won' }), attempt({ hedge: 'failed' }), attempt({})] };
    for (const [lang, want] of [['en', ['race lost', 'race won', 'failed during a race']], ['zh-CN', ['竞速落败', '竞速胜出', '竞速中失败']]] as const) {
      show(raced, lang);
      const attempts = screen.getAllByTestId('attempt');
      expect(attempts.slice(0, 3).map((a) => within(a).getByTestId('attempt-hedge').textContent)).toEqual(want);
      expect(within(attempts[3]).queryByTestId('attempt-hedge')).toBeNull();
      expect(within(attempts[0]).getByTestId('attempt-error')).not.toHaveTextContent('hedge_cancelled');
      cleanup();
    }
  });

  it('says it in Chinese too', () => {
    show(log, 'zh-CN');
    expect(reasons()).toEqual([
      'chat 使用 OpenAI Chat 协议，且未列出该模型',
      'gone 使用其他协议，且未列出该模型',
      'haiku 模型不在其列表中',
      'busy 半开（探测进行中）',
      'slow 熔断（限流）',
    ]);
    expect(within(screen.getAllByTestId('attempt')[0]).getByTestId('attempt-error')).toHaveTextContent('无法用此端点的协议表达该请求');
    expect(screen.getAllByTestId('attempt-translation')[1]).toHaveTextContent('Anthropic → OpenAI Chat');
  });

  // docs/BEHAVIOUR.md#usage and #cost
  it('shows each attempt’s usage and cost, "no price" for null and never $0, and the totals of the row', () => {
    const usage = (input: number, output: number, over: Partial<NonNullable<Attempt['usage']>> = {}) => ({
      input, output, cache_read: 0, cache_write: 0, reasoning: 0, estimated: false, ...over,
    });
    show({
      ...log,
      history: [
        attempt({ outcome: 'failure', status: 529, usage: usage(100, 0), cost_usd: null }),
        attempt({ usage: usage(1200, 340, { cache_read: 8000, cache_write: 500, reasoning: 40 }), cost_usd: 0.0012 }),
        attempt({ outcome: 'failure', status: 503 }),
        attempt({ usage: usage(3, 4, { estimated: true }), cost_usd: 0 }),
      ],
    });
    const attempts = screen.getAllByTestId('attempt');
    expect(within(attempts[0]).getByTestId('attempt-cost')).toHaveTextContent(/^no price$/);
    expect(within(attempts[0]).getByTestId('attempt-usage')).toHaveTextContent('100 in · 0 out');
    expect(within(attempts[1]).getByTestId('attempt-usage')).toHaveTextContent('1,200 in · 340 out · 8,000 cache read · 500 cache write · 40 reasoning');
    expect(within(attempts[1]).getByTestId('attempt-cost')).toHaveTextContent(/^\$0\.0012$/);
    expect(within(attempts[2]).queryByTestId('attempt-usage')).toBeNull();
    expect(within(attempts[3]).getByTestId('attempt-cost')).toHaveTextContent(/^\$0\.00$/); // a price of 0 is $0
    expect(within(attempts[3]).getByTestId('attempt-usage')).toHaveTextContent('estimated');

    const totals = screen.getByTestId('log-totals');
    expect(totals).toHaveTextContent('All attempts: 1,303 in · 344 out · 8,000 cache read · 500 cache write · 40 reasoning');
    expect(screen.getByTestId('log-cost')).toHaveTextContent('$0.0012 + 1 attempt without a price');
  });

  it('says "no price" for a row whose attempts have none', () => {
    show({ ...log, history: [attempt({ usage: { input: 5, output: 1, cache_read: 0, cache_write: 0, reasoning: 0, estimated: false }, cost_usd: null })] });
    expect(screen.getByTestId('log-cost')).toHaveTextContent(/^· no price$/);
    expect(screen.getByTestId('log-cost')).not.toHaveTextContent('$');
  });

  it('shows no cost at all for an attempt logged before prices (no cost_usd)', () => {
    show({ ...log, history: [attempt({ usage: { input: 5, output: 1, cache_read: 0, cache_write: 0, reasoning: 0, estimated: false } })] });
    expect(screen.getByTestId('attempt-usage')).toHaveTextContent('5 in · 1 out');
    expect(screen.queryByTestId('attempt-cost')).toBeNull();
    expect(screen.queryByTestId('log-cost')).toBeNull();
  });

  it('says the cost in Chinese too', () => {
    show({ ...log, history: [attempt({ usage: { input: 5, output: 1, cache_read: 0, cache_write: 0, reasoning: 0, estimated: false }, cost_usd: null })] }, 'zh-CN');
    expect(screen.getByTestId('attempt-cost')).toHaveTextContent('无价格');
    expect(screen.getByTestId('attempt-usage')).toHaveTextContent('输入 5 · 输出 1');
  });
});
