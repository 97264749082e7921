import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import type { Endpoint } from '../api/types';
import { baseRoutes, endpoint, renderApp, stubEventSource, stubFetch } from '../test/utils';
import { EndpointsPanel } from './EndpointsPanel';

/** Add endpoint, then Custom: the empty form. */
async function openCustom(user: ReturnType<typeof userEvent.setup>) {
  await user.click(await screen.findByRole('button', { name: 'Add endpoint' }));
  await user.click(await screen.findByRole('button', { name: 'Custom' }));
}

describe('endpoint form', () => {
  beforeEach(() => {
    stubEventSource();
  });

  it('shows the API 409 message next to the field it names', async () => {
    const calls = stubFetch({
      ...baseRoutes([endpoint({ id: 1, name: 'relay' })]),
      'POST /api/endpoints': {
        status: 409,
        body: { error: { code: 'duplicate_name', message: 'an endpoint named "relay" already exists', field: 'name' } },
      },
    });
    const user = userEvent.setup();
    renderApp(<EndpointsPanel />);
    await openCustom(user);
    await user.type(screen.getByLabelText('Name'), 'relay');
    await user.type(screen.getByLabelText('Base URL'), 'https://relay.example');
    await user.click(screen.getByRole('button', { name: 'Save' }));

    const name = screen.getByLabelText('Name');
    await waitFor(() => expect(name).toHaveAttribute('aria-invalid', 'true'));
    expect(name).toHaveAccessibleDescription('an endpoint named "relay" already exists');
    const post = calls.find((c) => c.method === 'POST');
    expect(post?.body).toMatchObject({ name: 'relay', base_url: 'https://relay.example', protocol: 'anthropic', auth: 'auto', enabled: true, fast: false });
    // The form stays open with what the user typed.
    expect(screen.getByLabelText('Base URL')).toHaveValue('https://relay.example');
  });

  it('checks required fields before calling the API', async () => {
    const calls = stubFetch(baseRoutes([]));
    const user = userEvent.setup();
    renderApp(<EndpointsPanel />);
    await openCustom(user);
    await user.click(screen.getByRole('button', { name: 'Save' }));
    expect(screen.getByLabelText('Name')).toHaveAccessibleDescription('Required');
    expect(screen.getByLabelText('Base URL')).toHaveAccessibleDescription('Required');
    expect(calls.filter((c) => c.method === 'POST')).toHaveLength(0);
  });

  it('sends every field, with the fast-queue switch, and keeps the key out of the DOM after save', async () => {
    const secret = 'sk-ant-very-secret-a1b2';
    const saved = endpoint({ id: 2, name: 'glm', fast: true, has_key: true, api_key_masked: 'sk-…a1b2', protocol: 'openai-chat' });
    const list: Endpoint[] = [];
    const calls = stubFetch({
      ...baseRoutes([]),
      'GET /api/endpoints': () => ({ body: list }),
      'POST /api/endpoints': () => {
        list.push(saved);
        return { status: 201, body: saved };
      },
    });
    const user = userEvent.setup();
    const { container } = renderApp(<EndpointsPanel />);
    await openCustom(user);
    await user.type(screen.getByLabelText('Name'), 'glm');
    await user.type(screen.getByLabelText('Base URL'), 'https://glm.example/api/v4');
    await user.selectOptions(screen.getByLabelText('Protocol'), 'openai-chat');
    await user.selectOptions(screen.getByLabelText('Auth header'), 'bearer');
    await user.type(screen.getByLabelText('API key'), secret);
    await user.type(screen.getByLabelText(/^Models/), 'glm-*{enter}claude-*');
    await user.type(screen.getByLabelText(/^Model map/), 'claude-3-5-haiku* = glm-4.5-air');
    await user.click(screen.getByRole('switch', { name: 'Add to fast queue' }));
    await user.click(screen.getByText(/Breaker overrides/));
    await user.type(screen.getByLabelText('Failure threshold'), '3');
    await user.click(screen.getByRole('button', { name: 'Save' }));

    await screen.findByTestId('endpoint-card-glm');
    expect(calls.find((c) => c.method === 'POST')?.body).toEqual({
      name: 'glm',
      base_url: 'https://glm.example/api/v4',
      protocol: 'openai-chat',
      auth: 'bearer',
      api_key: secret,
      models: ['glm-*', 'claude-*'],
      model_map: { 'claude-3-5-haiku*': 'glm-4.5-air' },
      enabled: true,
      fast: true,
      breaker_overrides: { failure_threshold: 3 },
      price_multiplier: 1,
      hedge_after_ms: -1,
      proxy_url: '',
      balance: {},
      weight: 1,
    });
    expect(container.innerHTML).not.toContain(secret);
    expect(screen.getByTestId('endpoint-card-glm')).toHaveTextContent('sk-…a1b2');
  });

  it('never prefills a stored key and omits it on save unless typed', async () => {
    const ep = endpoint({ id: 1, name: 'relay', has_key: true, api_key_masked: 'sk-…9f3c' });
    const calls = stubFetch({ ...baseRoutes([ep]), 'PUT /api/endpoints/1': { body: { ...ep, base_url: 'https://b.example' } } });
    const user = userEvent.setup();
    renderApp(<EndpointsPanel />);
    await user.click(await screen.findByRole('button', { name: 'Edit' }));
    const key = screen.getByLabelText('API key');
    expect(key).toHaveValue('');
    expect(key).toHaveAccessibleDescription('Stored: sk-…9f3c — leave empty to keep it');
    const url = screen.getByLabelText('Base URL');
    await user.clear(url);
    await user.type(url, 'https://b.example');
    await user.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(calls.some((c) => c.method === 'PUT')).toBe(true));
    const put = calls.find((c) => c.method === 'PUT')!.body as Record<string, unknown>;
    expect(put.base_url).toBe('https://b.example');
    expect('api_key' in put).toBe(false);
  });

  it('shows the proxy with its password masked, sends it back as shown, and refuses another scheme', async () => {
    const masked = 'socks5h://bob:***@127.0.0.1:1080';
    const ep = endpoint({ id: 1, name: 'relay', proxy_url: masked });
    const calls = stubFetch({ ...baseRoutes([ep]), 'PUT /api/endpoints/1': { body: ep } });
    const user = userEvent.setup();
    renderApp(<EndpointsPanel />);
    await user.click(await screen.findByRole('button', { name: 'Edit' }));
    const proxy = screen.getByLabelText('Proxy');
    expect(proxy).toHaveValue(masked);
    await user.clear(proxy);
    await user.type(proxy, 'ftp://p.example');
    await user.click(screen.getByRole('button', { name: 'Save' }));
    expect(await screen.findByText(/^An http:\/\/, https:\/\/, socks5:\/\/ or socks5h:\/\/ URL/)).toBeInTheDocument();
    expect(calls.some((c) => c.method === 'PUT')).toBe(false);
    await user.clear(proxy);
    await user.type(proxy, masked);
    await user.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(calls.some((c) => c.method === 'PUT')).toBe(true));
    expect((calls.find((c) => c.method === 'PUT')!.body as Record<string, unknown>).proxy_url).toBe(masked);
  });
});

// docs/BEHAVIOUR.md#candidates: which clients the endpoint will serve, as the form stands.
describe('endpoint form: which clients it serves', () => {
  beforeEach(() => {
    stubEventSource();
    stubFetch(baseRoutes([]));
  });

  const openForm = async () => {
    const user = userEvent.setup();
    renderApp(<EndpointsPanel />);
    await openCustom(user);
    return user;
  };

  it('with no models and no model map, serves its own protocol’s clients only', async () => {
    await openForm();
    expect(screen.getByTestId('endpoint-serves')).toHaveTextContent(
      'Serves Claude Code and Anthropic SDK clients (all models). OpenAI Chat, Codex, OpenAI Responses and Gemini clients: only for models named in Models or Model map — none yet.',
    );
  });

  it('follows the protocol as it changes', async () => {
    const user = await openForm();
    await user.selectOptions(screen.getByLabelText('Protocol'), 'openai-responses');
    expect(screen.getByTestId('endpoint-serves')).toHaveTextContent(
      'Serves Codex and OpenAI Responses clients (all models). Claude Code, Anthropic SDK, OpenAI Chat and Gemini clients: only for models named in Models or Model map — none yet.',
    );
  });

  it('with models, lists them for its own clients and the translated ones', async () => {
    const user = await openForm();
    await user.type(screen.getByLabelText(/^Models/), 'claude-*{enter}gpt-5*');
    expect(screen.getByTestId('endpoint-serves')).toHaveTextContent(
      'Serves Claude Code and Anthropic SDK clients asking for claude-*, gpt-5*. Translated for OpenAI Chat, Codex, OpenAI Responses and Gemini clients asking for claude-*, gpt-5*.',
    );
  });

  it('with a model map only, serves every model to its own clients and the mapped ones translated', async () => {
    const user = await openForm();
    await user.selectOptions(screen.getByLabelText('Protocol'), 'openai-chat');
    await user.type(screen.getByLabelText(/^Model map/), 'claude-3-5-haiku* = glm-4.5-air{enter}claude-sonnet* => glm-4.6{enter}half a line');
    expect(screen.getByTestId('endpoint-serves')).toHaveTextContent(
      'Serves OpenAI Chat clients (all models). Translated for Claude Code, Anthropic SDK, Codex, OpenAI Responses and Gemini clients asking for claude-3-5-haiku*, claude-sonnet*.',
    );
  });

  it('names models and model-map patterns once each, and shortens a long list', async () => {
    const user = await openForm();
    await user.type(screen.getByLabelText(/^Models/), 'a, b, c, d, e');
    await user.type(screen.getByLabelText(/^Model map/), 'a = x{enter}f = y');
    expect(screen.getByTestId('endpoint-serves')).toHaveTextContent(
      'Serves Claude Code and Anthropic SDK clients asking for a, b, c and 2 more. Translated for OpenAI Chat, Codex, OpenAI Responses and Gemini clients asking for a, b, c and 3 more.',
    );
  });

  it('speaks Chinese too', async () => {
    renderApp(<EndpointsPanel />, 'zh-CN');
    const user = userEvent.setup();
    await user.click(await screen.findByRole('button', { name: '添加端点' }));
    await user.click(await screen.findByRole('button', { name: '自定义' }));
    expect(screen.getByTestId('endpoint-serves')).toHaveTextContent('服务 Claude Code 和 Anthropic SDK 客户端（全部模型）。');
  });
});

// docs/BEHAVIOUR.md#presets: Add endpoint starts from a provider, or Custom.
describe('endpoint form: presets', () => {
  beforeEach(() => {
    stubEventSource();
  });

  it('lists the presets with their key hint and source, and a preset fills the form under a free name', async () => {
    const saved = endpoint({ id: 3, name: 'deepseek-2', base_url: 'https://api.deepseek.com/anthropic', auth: 'x-api-key' });
    const calls = stubFetch({
      ...baseRoutes([endpoint({ id: 1, name: 'deepseek' })]),
      'POST /api/endpoints': { status: 201, body: saved },
    });
    const user = userEvent.setup();
    renderApp(<EndpointsPanel />);
    await user.click(await screen.findByRole('button', { name: 'Add endpoint' }));

    const picker = await screen.findByTestId('preset-picker');
    const deepseek = within(picker).getByTestId('preset-deepseek');
    expect(within(deepseek).getByRole('button', { name: 'DeepSeek' })).toHaveAccessibleDescription('Anthropic A DeepSeek platform key.');
    expect(within(deepseek).getByRole('link', { name: 'source' })).toHaveAttribute('href', 'https://api-docs.deepseek.com/guides/anthropic_api');
    expect(within(picker).getByTestId('preset-gemini')).toHaveTextContent('OpenAI Chat');
    // Custom is offered once, as the empty form, not as a provider.
    expect(within(picker).getAllByRole('button', { name: 'Custom' })).toHaveLength(1);

    await user.click(within(deepseek).getByRole('button', { name: 'DeepSeek' }));
    expect(screen.queryByTestId('preset-picker')).toBeNull();
    expect(screen.getByTestId('form-preset')).toHaveTextContent('Filled in from the DeepSeek preset');
    expect(screen.getByLabelText('Name')).toHaveValue('deepseek-2'); // "deepseek" is taken
    expect(screen.getByLabelText('Base URL')).toHaveValue('https://api.deepseek.com/anthropic');
    expect(screen.getByLabelText('Protocol')).toHaveValue('anthropic');
    expect(screen.getByLabelText('Auth header')).toHaveValue('x-api-key');
    expect(screen.getByLabelText('API key')).toHaveAccessibleDescription('A DeepSeek platform key.');
    await user.type(screen.getByLabelText('API key'), 'sk-deepseek-1');
    await user.click(screen.getByRole('button', { name: 'Save' }));

    await waitFor(() => expect(calls.some((c) => c.method === 'POST')).toBe(true));
    expect(calls.find((c) => c.method === 'POST')?.body).toMatchObject({
      name: 'deepseek-2',
      base_url: 'https://api.deepseek.com/anthropic',
      protocol: 'anthropic',
      auth: 'x-api-key',
      api_key: 'sk-deepseek-1',
      models: [],
      model_map: {},
      price_multiplier: 1,
    });
  });

  it('fills models and the model map of a preset that has them', async () => {
    stubFetch(baseRoutes([]));
    const user = userEvent.setup();
    renderApp(<EndpointsPanel startAdding />);
    await user.click(await screen.findByRole('button', { name: 'Google Gemini (OpenAI-compatible)' }));
    expect(screen.getByLabelText('Name')).toHaveValue('gemini');
    expect(screen.getByLabelText('Protocol')).toHaveValue('openai-chat');
    expect(screen.getByLabelText('Auth header')).toHaveValue('bearer');
    expect(screen.getByLabelText(/^Models/)).toHaveValue('gemini-2.5-pro\ngemini-2.5-flash');
    expect(screen.getByLabelText(/^Model map/)).toHaveValue('claude-* = gemini-2.5-pro');
  });

  it('still offers Custom when the preset list cannot be read', async () => {
    stubFetch({ ...baseRoutes([]), 'GET /api/presets': { status: 500, body: { error: { code: 'internal', message: 'boom' } } } });
    const user = userEvent.setup();
    renderApp(<EndpointsPanel />);
    await user.click(await screen.findByRole('button', { name: 'Add endpoint' }));
    expect(await screen.findByRole('alert')).toHaveTextContent('Could not load the provider list: boom');
    await user.click(screen.getByRole('button', { name: 'Custom' }));
    expect(screen.getByLabelText('Name')).toHaveValue('');
    expect(screen.queryByTestId('form-preset')).toBeNull();
  });

  it('names the presets in Chinese too', async () => {
    stubFetch(baseRoutes([]));
    renderApp(<EndpointsPanel startAdding />, 'zh-CN');
    expect(await screen.findByRole('heading', { name: '从服务商开始' })).toBeInTheDocument();
    expect(screen.getByRole('button', { name: '自定义' })).toBeInTheDocument();
    expect(within(await screen.findByTestId('preset-deepseek')).getByRole('link', { name: '来源' })).toBeInTheDocument();
  });
});

// docs/BEHAVIOUR.md#cost: an endpoint's price multiplier.
describe('endpoint form: price multiplier', () => {
  beforeEach(() => {
    stubEventSource();
  });

  it('defaults to 1, explains itself, refuses a value out of range and sends the one typed', async () => {
    const ep = endpoint({ id: 1, name: 'relay', price_multiplier: 1 });
    const calls = stubFetch({ ...baseRoutes([ep]), 'PUT /api/endpoints/1': { body: { ...ep, price_multiplier: 0.3 } } });
    const user = userEvent.setup();
    renderApp(<EndpointsPanel />);
    await user.click(await screen.findByRole('button', { name: 'Edit' }));
    const mult = screen.getByLabelText('Price multiplier');
    expect(mult).toHaveValue(1);
    expect(mult).toHaveAccessibleDescription(/relays often sell at a fraction of the list price/i);

    await user.clear(mult);
    await user.type(mult, '5000');
    await user.click(screen.getByRole('button', { name: 'Save' }));
    expect(mult).toHaveAccessibleDescription('A number from 0.001 to 1000');
    expect(calls.some((c) => c.method === 'PUT')).toBe(false);

    await user.clear(mult);
    await user.type(mult, '0.3');
    await user.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(calls.some((c) => c.method === 'PUT')).toBe(true));
    expect(calls.find((c) => c.method === 'PUT')?.body).toMatchObject({ price_multiplier: 0.3 });
  });

  it('shows the API’s refusal on the field', async () => {
    stubFetch({
      ...baseRoutes([]),
      'POST /api/endpoints': { status: 422, body: { error: { code: 'out_of_range', message: 'price_multiplier must be between 0.001 and 1000', field: 'price_multiplier' } } },
    });
    const user = userEvent.setup();
    renderApp(<EndpointsPanel startAdding />);
    await user.click(await screen.findByRole('button', { name: 'Custom' }));
    await user.type(screen.getByLabelText('Name'), 'r');
    await user.type(screen.getByLabelText('Base URL'), 'https://r.example');
    await user.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(screen.getByLabelText('Price multiplier')).toHaveAccessibleDescription('price_multiplier must be between 0.001 and 1000'));
  });
});

// docs/BEHAVIOUR.md#the-answers-model: what an answer from another model does.
describe('endpoint form: an answer from another model', () => {
  beforeEach(() => {
    stubEventSource();
  });

  it('records by default, sends fail when chosen, and record again to go back', async () => {
    const ep = endpoint({ id: 1, name: 'relay' });
    const calls = stubFetch({ ...baseRoutes([ep]), 'PUT /api/endpoints/1': (call) => ({ body: { ...ep, ...(call.body as object) } }) });
    const user = userEvent.setup();
    renderApp(<EndpointsPanel />);
    await user.click(await screen.findByRole('button', { name: 'Edit' }));
    const select = screen.getByLabelText('Answer from another model');
    expect(select).toHaveValue('record');
    expect(select).toHaveAccessibleDescription(/names another model than the one sent/);
    await user.selectOptions(select, 'fail');
    await user.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(calls.some((c) => c.method === 'PUT')).toBe(true));
    expect(calls.find((c) => c.method === 'PUT')?.body).toMatchObject({ on_model_mismatch: 'fail' });
  });

  it('goes back to record for an endpoint that fails', async () => {
    const ep = endpoint({ id: 1, name: 'relay', on_model_mismatch: 'fail' });
    const calls = stubFetch({ ...baseRoutes([ep]), 'PUT /api/endpoints/1': (call) => ({ body: { ...ep, ...(call.body as object) } }) });
    const user = userEvent.setup();
    renderApp(<EndpointsPanel />);
    await user.click(await screen.findByRole('button', { name: 'Edit' }));
    await user.selectOptions(screen.getByLabelText('Answer from another model'), 'record');
    await user.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(calls.some((c) => c.method === 'PUT')).toBe(true));
    expect(calls.find((c) => c.method === 'PUT')?.body).toMatchObject({ on_model_mismatch: 'record' });
  });
});

// Routing rules send requests to endpoints by tag (docs/BEHAVIOUR.md: routing rules).
describe('endpoint form: tags', () => {
  beforeEach(() => {
    stubEventSource();
  });

  it('edits the tags as a comma list, refuses one that is not a tag, and shows them on the card', async () => {
    let ep = endpoint({ id: 1, name: 'relay', tags: ['cheap'] });
    const calls = stubFetch({
      ...baseRoutes([ep]),
      'GET /api/endpoints': () => ({ body: [ep] }),
      'PUT /api/endpoints/1': (call) => {
        ep = { ...ep, ...(call.body as object) };
        return { body: ep };
      },
    });
    const user = userEvent.setup();
    renderApp(<EndpointsPanel />);
    expect(await screen.findByTestId('endpoint-tags')).toHaveTextContent('cheap');
    await user.click(screen.getByRole('button', { name: 'Edit' }));
    const tags = screen.getByLabelText('Tags');
    expect(tags).toHaveValue('cheap');
    await user.type(tags, ', long ctx!');
    await user.click(screen.getByRole('button', { name: 'Save' }));
    expect(await screen.findByText('“ctx!” is not a tag: 1–32 of A–Z a–z 0–9 . _ -, each once')).toBeInTheDocument();
    await user.clear(tags);
    await user.type(tags, 'cheap, long-ctx cheap');
    await user.click(screen.getByRole('button', { name: 'Save' }));
    expect(await screen.findByText('“cheap” is not a tag: 1–32 of A–Z a–z 0–9 . _ -, each once')).toBeInTheDocument();
    expect(calls.some((c) => c.method === 'PUT')).toBe(false);
    await user.clear(tags);
    await user.type(tags, 'cheap, long-ctx');
    await user.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(calls.some((c) => c.method === 'PUT')).toBe(true));
    expect(calls.find((c) => c.method === 'PUT')?.body).toMatchObject({ tags: ['cheap', 'long-ctx'] });
    await waitFor(() => expect(screen.getByTestId('endpoint-tags')).toHaveTextContent('cheaplong-ctx'));
  });

  it('sends [] to remove the last tag', async () => {
    const ep = endpoint({ id: 1, name: 'relay', tags: ['a'] });
    const calls = stubFetch({ ...baseRoutes([ep]), 'PUT /api/endpoints/1': (call) => ({ body: { ...ep, ...(call.body as object) } }) });
    const user = userEvent.setup();
    renderApp(<EndpointsPanel />);
    await user.click(await screen.findByRole('button', { name: 'Edit' }));
    await user.clear(screen.getByLabelText('Tags'));
    await user.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(calls.some((c) => c.method === 'PUT')).toBe(true));
    expect(calls.find((c) => c.method === 'PUT')?.body).toMatchObject({ tags: [] });
  });

  it('sends no tags for an endpoint that has none', async () => {
    const bare = endpoint({ id: 1, name: 'relay' });
    const calls = stubFetch({ ...baseRoutes([bare]), 'PUT /api/endpoints/1': (call) => ({ body: { ...bare, ...(call.body as object) } }) });
    const user = userEvent.setup();
    renderApp(<EndpointsPanel />);
    await user.click(await screen.findByRole('button', { name: 'Edit' }));
    await user.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(calls.some((c) => c.method === 'PUT')).toBe(true));
    expect('tags' in (calls.find((c) => c.method === 'PUT')!.body as object)).toBe(false);
    expect(screen.queryByTestId('endpoint-tags')).toBeNull();
  });

  it('shows the API’s refusal of one tag at the Tags field', async () => {
    const ep = endpoint({ id: 1, name: 'relay', tags: ['a'] });
    stubFetch({
      ...baseRoutes([ep]),
      'PUT /api/endpoints/1': { status: 400, body: { error: { code: 'invalid_tag', message: 'tag "a" is taken', field: 'tags[0]' } } },
    });
    const user = userEvent.setup();
    renderApp(<EndpointsPanel />);
    await user.click(await screen.findByRole('button', { name: 'Edit' }));
    await user.click(screen.getByRole('button', { name: 'Save' }));
    expect(await screen.findByText('tag "a" is taken')).toBeInTheDocument();
    expect(screen.getByLabelText('Tags')).toHaveAttribute('aria-invalid', 'true');
  });
});
