import { act, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import type { Explanation } from '../api/types';
import { baseRoutes, endpoint, health, renderApp, stubEventSource, stubFetch } from '../test/utils';
import { RoutingPanel } from './RoutingPanel';

const endpoints = [
  endpoint({ id: 1, name: 'claude', sort_order: 0 }),
  endpoint({ id: 2, name: 'glm', sort_order: 1, protocol: 'openai-chat', model_map: { 'claude-*': 'glm-4.5' } }),
  endpoint({ id: 3, name: 'codex', sort_order: 2, protocol: 'openai-responses', models: ['gpt-5'] }),
  endpoint({ id: 4, name: 'haiku-only', sort_order: 3, models: ['claude-haiku-4-5'] }),
  endpoint({ id: 5, name: 'limited', sort_order: 4 }),
  endpoint({ id: 6, name: 'off', sort_order: 5, enabled: false }),
];

const explanation: Explanation = {
  protocol: 'anthropic',
  model: 'claude-sonnet-4-5',
  strategy: 'sticky',
  candidates: [
    { endpoint_id: 1, endpoint: 'claude', state: 'closed', translated: false, load_ms: 212.4 },
    { endpoint_id: 2, endpoint: 'glm', state: 'half_open', translated: true, load_ms: 0 },
  ],
  excluded: [
    { endpoint_id: 3, endpoint: 'codex', reason: 'protocol' },
    { endpoint_id: 4, endpoint: 'haiku-only', reason: 'model' },
    { endpoint_id: 5, endpoint: 'limited', reason: 'breaker', state: 'open', breaker_reason: 'rate_limited', until: '2026-11-30T08:02:00Z' },
  ],
  translated: { glm: 'anthropic→openai-chat' },
  outcome: '',
  rule: '',
  rules: [],
};

const texts = (el: HTMLElement) => within(el).getAllByRole('listitem').map((li) => li.textContent);

describe('routing', () => {
  it('shows which models each enabled endpoint serves to each client', async () => {
    stubEventSource();
    stubFetch(baseRoutes(endpoints));
    renderApp(<RoutingPanel />);
    const matrix = await screen.findByTestId('routing-matrix');
    expect(within(matrix).getAllByRole('columnheader').map((h) => h.textContent)).toEqual(['Endpoint', 'Claude Code / Anthropic', 'OpenAI Chat', 'Codex / OpenAI Responses', 'Gemini CLI / Gemini']);
    expect(screen.getByTestId('matrix-row-claude')).toHaveTextContent('claude Anthropic');
    expect(screen.getByTestId('matrix-claude-anthropic')).toHaveTextContent('all models');
    expect(screen.getByTestId('matrix-claude-openai-chat')).toHaveTextContent('—');
    expect(screen.getByTestId('matrix-glm-anthropic')).toHaveTextContent('claude-* translated');
    expect(screen.getByTestId('matrix-glm-openai-chat')).toHaveTextContent('all models');
    expect(screen.getByTestId('matrix-codex-openai-chat')).toHaveTextContent('gpt-5 translated');
    expect(screen.getByTestId('matrix-haiku-only-anthropic')).toHaveTextContent('claude-haiku-4-5');
    expect(screen.queryByTestId('matrix-row-off')).toBeNull();
    expect(screen.getByText(/^Type a model and pick a client/)).toBeInTheDocument();
  });

  it('explains a route: candidates in order with their translation, and why each other endpoint is left out', async () => {
    stubEventSource();
    const calls = stubFetch({ ...baseRoutes(endpoints), 'GET /api/route': { body: explanation } });
    const user = userEvent.setup();
    renderApp(<RoutingPanel />);
    await screen.findByTestId('routing-matrix');
    await user.selectOptions(screen.getByLabelText('Client'), 'anthropic');
    await user.type(screen.getByLabelText('Model'), ' claude-sonnet-4-5 ');
    await user.click(screen.getByRole('button', { name: 'Explain' }));

    const cands = await screen.findByTestId('route-candidates');
    expect(calls.find((c) => c.path.startsWith('/api/route'))?.path).toBe('/api/route?protocol=anthropic&model=claude-sonnet-4-5');
    expect(texts(cands)).toEqual(['claude closed', 'glm half-open translated: Anthropic → OpenAI Chat']);
    expect(texts(screen.getByTestId('route-excluded'))).toEqual([
      'codex speaks OpenAI Responses; model not named',
      'haiku-only model not in its list',
      'limited open (rate limited)',
    ]);
    expect(screen.getByTestId('route-result')).toHaveTextContent('Strategy: sticky (keep prompt caches warm)');
    expect(screen.queryByTestId('route-outcome')).toBeNull();
    for (const raw of ['half_open', 'rate_limited', 'openai-chat', 'anthropic→']) expect(screen.getByTestId('route-why')).not.toHaveTextContent(raw);
  });

  it('shows each candidate’s first-byte figure under the fastest strategy', async () => {
    stubEventSource();
    stubFetch({ ...baseRoutes(endpoints), 'GET /api/route': { body: { ...explanation, strategy: 'fastest' } } });
    const user = userEvent.setup();
    renderApp(<RoutingPanel />);
    await screen.findByTestId('routing-matrix');
    await user.selectOptions(screen.getByLabelText('Client'), 'anthropic');
    await user.type(screen.getByLabelText('Model'), 'claude-sonnet-4-5');
    await user.click(screen.getByRole('button', { name: 'Explain' }));
    await screen.findByTestId('route-candidates');
    expect(screen.getAllByTestId('route-load').map((el) => el.textContent)).toEqual(['first byte ≈ 212 ms', 'no answer measured yet']);
    expect(screen.getByTestId('route-result')).toHaveTextContent('Strategy: fastest (quickest first byte)');
  });

  it('says what the request would get when no endpoint takes it, and asks again when health changes', async () => {
    const es = stubEventSource();
    let n = 0;
    stubFetch({
      ...baseRoutes(endpoints),
      'GET /api/route': () => {
        n++;
        return { body: { ...explanation, candidates: [], translated: {}, outcome: 'no enabled openai-chat endpoint serves model "nope"' } };
      },
    });
    const user = userEvent.setup();
    renderApp(<RoutingPanel />, 'zh-CN');
    await screen.findByTestId('routing-matrix');
    await user.selectOptions(screen.getByLabelText('客户端'), 'openai-chat');
    await user.type(screen.getByLabelText('模型'), 'nope');
    await user.click(screen.getByRole('button', { name: '解释' }));
    expect(await screen.findByTestId('route-outcome')).toHaveTextContent('没有端点会接收此请求：no enabled openai-chat endpoint serves model "nope"');
    expect(texts(screen.getByTestId('route-excluded'))[2]).toBe('limited 熔断（限流）');
    const before = n;
    act(() => es.instances[0].emit('health', [health({ id: 1, name: 'claude', status: 'unhealthy', state: 'open', reason: 'broken' })]));
    await waitFor(() => expect(n).toBe(before + 1));
  });

  it('asks the dry run with a sample request and names the rule it matches and why each earlier one did not', async () => {
    stubEventSource();
    const calls = stubFetch({
      ...baseRoutes(endpoints),
      'GET /api/route': {
        body: {
          ...explanation,
          rule: 'long',
          rules: [
            { name: 'subagents', matched: false, why: 'the request is from the main conversation, not a subagent' },
            { name: 'long', matched: true, why: '' },
          ],
        },
      },
    });
    const user = userEvent.setup();
    renderApp(<RoutingPanel />);
    await screen.findByTestId('routing-matrix');
    await user.type(screen.getByLabelText('Model'), 'claude-sonnet-4-5');
    await user.selectOptions(screen.getByLabelText('Agent'), 'subagent');
    await user.type(screen.getByLabelText('Input tokens'), '70000');
    await user.type(screen.getByLabelText('Header (Name: value)'), 'x-team: infra-1');
    await user.click(screen.getByLabelText('thinking on'));
    await user.click(screen.getByLabelText('web-search tool'));
    await user.click(screen.getByLabelText('an image'));
    await user.click(screen.getByRole('button', { name: 'Explain' }));

    expect(await screen.findByTestId('route-rule')).toHaveTextContent('Rule “long” matches: its endpoints are tried.');
    const asked = calls.find((c) => c.path.startsWith('/api/route'))!.path;
    expect(Object.fromEntries(new URLSearchParams(asked.split('?')[1]))).toEqual({
      protocol: 'anthropic', model: 'claude-sonnet-4-5', agent: 'subagent', thinking: '1', input_tokens: '70000', tools: 'web_search', images: '1', header: 'x-team:infra-1',
    });
    expect(texts(screen.getByTestId('route-rules'))).toEqual([
      'subagents no match: the request is from the main conversation, not a subagent',
      'long matches',
    ]);
  });

  it('says no rule matched, with each rule’s reason, in Chinese too', async () => {
    stubEventSource();
    stubFetch({
      ...baseRoutes(endpoints),
      'GET /api/route': { body: { ...explanation, rule: '', rules: [{ name: 'long', matched: false, why: 'input tokens 0 are not over 60000' }] } },
    });
    const user = userEvent.setup();
    renderApp(<RoutingPanel />, 'zh-CN');
    await screen.findByTestId('routing-matrix');
    await user.type(screen.getByLabelText('模型'), 'claude-sonnet-4-5');
    await user.click(screen.getByRole('button', { name: '解释' }));
    expect(await screen.findByTestId('route-rule')).toHaveTextContent('没有规则匹配：走常规列表。');
    expect(texts(screen.getByTestId('route-rules'))).toEqual(['long 不匹配：input tokens 0 are not over 60000']);
  });

  it('has an empty state without enabled endpoints', async () => {
    stubEventSource();
    stubFetch(baseRoutes([endpoint({ id: 6, name: 'off', enabled: false })]));
    renderApp(<RoutingPanel />);
    expect(await screen.findByTestId('routing-empty')).toHaveTextContent('No enabled endpoints');
  });
});
