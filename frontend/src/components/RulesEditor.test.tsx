import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import type { Rule } from '../api/types';
import { baseRoutes, endpoint, renderApp, stubEventSource, stubFetch, type Call } from '../test/utils';
import { RulesEditor } from './RulesEditor';

const endpoints = [
  endpoint({ id: 1, name: 'claude', sort_order: 0 }),
  endpoint({ id: 2, name: 'glm', sort_order: 1, tags: ['cheap', 'long'] }),
  endpoint({ id: 3, name: 'kimi', sort_order: 2, tags: ['cheap'] }),
];

const subagents: Rule = { name: 'subagents', when: { agent: 'subagent' }, then: { endpoints: ['tag:cheap'], fallback: true } };
const long: Rule = { name: 'long', when: { input_tokens_over: 60000 }, then: { endpoints: ['glm'], fallback: false } };
const thinking: Rule = { name: 'think', when: { thinking: true }, then: { endpoints: ['claude'], strategy: 'fastest', fallback: true } };

/** The routes of the editor with these saved rules; PUT /api/settings answers `put` (by default what was sent). */
function routes(rules: Rule[], put?: (c: Call) => { status?: number; body?: unknown }) {
  return {
    ...baseRoutes(endpoints),
    'GET /api/settings': { body: { language: '', strategy: 'sticky', rules } },
    'PUT /api/settings': put ?? ((c: Call) => ({ body: { language: '', strategy: 'sticky', ...(c.body as object) } })),
  };
}

const names = () => screen.getAllByTestId('rule-name').map((el) => el.textContent);
const putBodies = (calls: Call[]) => calls.filter((c) => c.method === 'PUT').map((c) => c.body);

// Each test clicks and types a good deal; the default 5 s is too short on a busy machine.
describe('routing rules editor', { timeout: 30_000 }, () => {
  it('lists the rules in order with what they match and where they send, and saves a new order whole', async () => {
    stubEventSource();
    const calls = stubFetch(routes([subagents, long, thinking]));
    const user = userEvent.setup({ delay: null });
    renderApp(<RulesEditor />);
    await waitFor(() => expect(names()).toEqual(['subagents', 'long', 'think']));
    const row = screen.getByTestId('rule-0');
    expect(within(row).getByTestId('rule-when')).toHaveTextContent('subagent');
    expect(within(row).getByTestId('rule-then')).toHaveTextContent('tag:cheap');
    expect(row).toHaveTextContent('then the normal list');
    expect(within(screen.getByTestId('rule-1')).getByTestId('rule-when')).toHaveTextContent('over 60000 input tokens');
    expect(screen.getByTestId('rule-1')).not.toHaveTextContent('then the normal list');
    expect(screen.getByRole('button', { name: 'Move subagents up' })).toBeDisabled();
    expect(screen.getByRole('button', { name: 'Move think down' })).toBeDisabled();
    expect(screen.getByRole('button', { name: 'Save rules' })).toBeDisabled();

    await user.click(screen.getByRole('button', { name: 'Move long up' }));
    expect(names()).toEqual(['long', 'subagents', 'think']);
    await user.click(screen.getByRole('button', { name: 'Move subagents down' }));
    expect(names()).toEqual(['long', 'think', 'subagents']);
    expect(screen.getByTestId('rules-dirty')).toHaveTextContent('Unsaved changes');
    await user.click(screen.getByRole('button', { name: 'Delete rule think' }));
    expect(names()).toEqual(['long', 'subagents']);
    await user.click(screen.getByRole('button', { name: 'Save rules' }));

    await screen.findByText('Rules saved.');
    expect(putBodies(calls)).toEqual([{ rules: [long, subagents] }]);
    expect(screen.queryByTestId('rules-dirty')).toBeNull();
  });

  it('puts the saved list back on Discard', async () => {
    stubEventSource();
    const calls = stubFetch(routes([subagents, long]));
    const user = userEvent.setup({ delay: null });
    renderApp(<RulesEditor />);
    await waitFor(() => expect(names()).toEqual(['subagents', 'long']));
    await user.click(screen.getByRole('button', { name: 'Move long up' }));
    expect(names()).toEqual(['long', 'subagents']);
    await user.click(screen.getByRole('button', { name: 'Discard changes' }));
    expect(names()).toEqual(['subagents', 'long']);
    expect(putBodies(calls)).toEqual([]);
  });

  it('starts a rule from a template, each explained, and asks for the endpoint before saving it', async () => {
    stubEventSource();
    const calls = stubFetch(routes([]));
    const user = userEvent.setup({ delay: null });
    renderApp(<RulesEditor />);
    expect(await screen.findByTestId('rules-empty')).toBeInTheDocument();
    expect(within(screen.getByTestId('rule-templates')).getAllByRole('listitem').map((li) => li.textContent)).toEqual([
      'Subagents Claude Code’s subagents (Task, Explore…) to a cheaper endpoint.',
      'Long context Requests over 60 000 input tokens to a model with a large window.',
      'Thinking Requests with thinking on to a reasoning model.',
      'Web search Requests with the web-search tool to an endpoint that has it.',
    ]);

    await user.click(screen.getByRole('button', { name: 'Long context' }));
    const form = screen.getByTestId('rule-form');
    expect(within(form).getByLabelText('Name')).toHaveValue('long-context');
    expect(within(form).getByLabelText('Input tokens over')).toHaveValue('60000');
    expect(within(form).getByRole('checkbox', { name: 'When they all fail, try the normal list' })).toBeChecked();
    expect(form).toHaveTextContent('Pick the endpoint (or tag:) this rule sends to.');

    await user.click(screen.getByRole('button', { name: 'Save rules' }));
    expect(within(form).getByTestId('rule-error-then.endpoints')).toHaveTextContent('Pick at least one endpoint or tag.');
    expect(putBodies(calls)).toEqual([]);

    // The picker offers the endpoint names, then the tags present.
    const picker = within(form).getByLabelText('Endpoints');
    expect(within(picker).getAllByRole('option').map((o) => o.textContent)).toEqual(['Add an endpoint or tag…', 'claude', 'glm', 'kimi', 'tag:cheap', 'tag:long']);
    await user.selectOptions(picker, 'tag:long');
    await user.selectOptions(picker, 'claude');
    await user.click(within(form).getByRole('button', { name: 'Try claude earlier' }));
    expect(within(form).getByRole('list', { name: 'Chosen endpoints and tags, in order' })).toHaveTextContent('claudetag:long');
    await user.click(screen.getByRole('button', { name: 'Save rules' }));

    await screen.findByText('Rules saved.');
    expect(putBodies(calls)).toEqual([
      { rules: [{ name: 'long-context', when: { input_tokens_over: 60000 }, then: { endpoints: ['claude', 'tag:long'], fallback: true } }] },
    ]);
  });

  it('names a second rule from the same template apart', async () => {
    stubEventSource();
    stubFetch(routes([{ ...thinking, name: 'thinking' }]));
    const user = userEvent.setup({ delay: null });
    renderApp(<RulesEditor />);
    await waitFor(() => expect(names()).toEqual(['thinking']));
    await user.click(screen.getByRole('button', { name: 'Thinking' }));
    expect(names()).toEqual(['thinking', 'thinking-2']);
    expect(within(screen.getByTestId('rule-1')).getByTestId('rule-when')).toHaveTextContent('thinking on');
  });

  it('edits every when and then field into the rule it sends', async () => {
    stubEventSource();
    const calls = stubFetch(routes([]));
    const user = userEvent.setup({ delay: null });
    renderApp(<RulesEditor />);
    await screen.findByTestId('rules-empty');
    await user.click(screen.getByRole('button', { name: 'Add rule' }));
    const form = within(screen.getByTestId('rule-form'));
    await user.type(form.getByLabelText('Name'), 'everything');
    await user.selectOptions(form.getByLabelText('Client'), 'anthropic');
    await user.type(form.getByLabelText('Models'), 'claude-*, claude-opus-4');
    await user.selectOptions(form.getByLabelText('Agent'), 'main');
    await user.selectOptions(form.getByLabelText('Thinking'), 'off');
    await user.type(form.getByLabelText('Input tokens over'), '1200');
    await user.click(form.getByLabelText('A web-search tool is present'));
    await user.selectOptions(form.getByLabelText('Images'), 'on');
    await user.type(form.getByLabelText('Header'), 'x-team');
    await user.type(form.getByLabelText('Header value'), 'infra*');
    await user.selectOptions(form.getByLabelText('Endpoints'), 'glm');
    await user.type(form.getByLabelText('Model map'), 'claude-* = glm-4.6');
    await user.selectOptions(form.getByLabelText('Strategy'), 'fastest');
    await user.click(form.getByLabelText('When they all fail, try the normal list'));
    expect(screen.getByTestId('rule-when')).toHaveTextContent('Claude Code / Anthropic · claude-*, claude-opus-4 · main conversation · thinking off · over 1200 input tokens · web search · with an image · x-team: infra*');
    await user.click(screen.getByRole('button', { name: 'Save rules' }));

    await screen.findByText('Rules saved.');
    expect(putBodies(calls)).toEqual([{
      rules: [{
        name: 'everything',
        when: {
          protocol: 'anthropic', models: ['claude-*', 'claude-opus-4'], agent: 'main', thinking: false, input_tokens_over: 1200,
          tools: 'web_search', images: true, header: { name: 'x-team', pattern: 'infra*' },
        },
        then: { endpoints: ['glm'], model_map: { 'claude-*': 'glm-4.6' }, strategy: 'fastest', fallback: false },
      }],
    }]);
  });

  it('shows the API’s refusal at the rule and field it names, and its warnings on the rule', async () => {
    stubEventSource();
    let refuse = true;
    const calls = stubFetch(routes([subagents, long], (c) => {
      if (refuse) {
        refuse = false;
        return { status: 400, body: { error: { code: 'invalid_rule', message: 'no endpoint named "gone"', field: 'rules[1].then.endpoints[0]' } } };
      }
      return { body: { language: '', ...(c.body as object), warnings: [{ field: 'rules[1]', code: 'rule_unreachable', message: 'rule "long" can never match' }] } };
    }));
    const user = userEvent.setup({ delay: null });
    renderApp(<RulesEditor />);
    await waitFor(() => expect(names()).toEqual(['subagents', 'long']));
    await user.click(screen.getByRole('button', { name: 'Move long up' }));
    await user.click(screen.getByRole('button', { name: 'Save rules' }));

    // rules[1] is "subagents" now: its form opens with the message at its endpoints.
    const row = screen.getByTestId('rule-1');
    expect(within(row).getByTestId('rule-name')).toHaveTextContent('subagents');
    expect(await within(row).findByTestId('rule-error-then.endpoints')).toHaveTextContent('no endpoint named "gone"');
    expect(within(row).getByLabelText('Endpoints')).toHaveAttribute('aria-invalid', 'true');
    expect(screen.getAllByTestId('rule-form')).toHaveLength(1);

    await user.click(screen.getByRole('button', { name: 'Save rules' }));
    expect(await within(screen.getByTestId('rule-1')).findByTestId('rule-warning')).toHaveTextContent(
      'This rule can never match: an earlier rule matches every request it would.',
    );
    expect(within(screen.getByTestId('rule-0')).queryByTestId('rule-warning')).toBeNull();
    expect(putBodies(calls)).toHaveLength(2);
  });

  it('refuses an empty or repeated name before asking the API', async () => {
    stubEventSource();
    const calls = stubFetch(routes([subagents]));
    const user = userEvent.setup({ delay: null });
    renderApp(<RulesEditor />);
    await waitFor(() => expect(names()).toEqual(['subagents']));
    await user.click(screen.getByRole('button', { name: 'Subagents' }));
    const form = within(screen.getByTestId('rule-form'));
    await user.clear(form.getByLabelText('Name'));
    await user.type(form.getByLabelText('Name'), 'subagents');
    await user.selectOptions(form.getByLabelText('Endpoints'), 'kimi');
    await user.click(screen.getByRole('button', { name: 'Save rules' }));
    expect(form.getByTestId('rule-error-name')).toHaveTextContent('Another rule has this name.');
    await user.clear(form.getByLabelText('Name'));
    await user.click(screen.getByRole('button', { name: 'Save rules' }));
    expect(form.getByTestId('rule-error-name')).toHaveTextContent('Required');
    expect(putBodies(calls)).toEqual([]);
  });

  it('speaks Chinese too', async () => {
    stubEventSource();
    stubFetch(routes([subagents]));
    const user = userEvent.setup({ delay: null });
    renderApp(<RulesEditor />, 'zh-CN');
    await waitFor(() => expect(names()).toEqual(['subagents']));
    expect(screen.getByTestId('rule-when')).toHaveTextContent('子代理');
    await user.click(screen.getByRole('button', { name: '网页搜索' }));
    expect(screen.getByRole('heading', { name: '路由规则' })).toBeInTheDocument();
    expect(screen.getByTestId('rule-form')).toHaveTextContent('选择此规则发往的端点（或 tag:）。');
  });
});
