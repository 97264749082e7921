import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import type { Endpoint } from '../api/types';
import { baseRoutes, endpoint, renderApp, stubEventSource, stubFetch } from '../test/utils';
import { EndpointsPanel } from './EndpointsPanel';

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
    await user.click(await screen.findByRole('button', { name: 'Add endpoint' }));
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
    await user.click(await screen.findByRole('button', { name: 'Add endpoint' }));
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
    await user.click(await screen.findByRole('button', { name: 'Add endpoint' }));
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
    await user.click(await screen.findByRole('button', { name: 'Add endpoint' }));
    return user;
  };

  it('with no models and no model map, serves its own protocol’s clients only', async () => {
    await openForm();
    expect(screen.getByTestId('endpoint-serves')).toHaveTextContent(
      'Serves Claude Code and Anthropic SDK clients (all models). OpenAI Chat, Codex and OpenAI Responses clients: only for models named in Models or Model map — none yet.',
    );
  });

  it('follows the protocol as it changes', async () => {
    const user = await openForm();
    await user.selectOptions(screen.getByLabelText('Protocol'), 'openai-responses');
    expect(screen.getByTestId('endpoint-serves')).toHaveTextContent(
      'Serves Codex and OpenAI Responses clients (all models). Claude Code, Anthropic SDK and OpenAI Chat clients: only for models named in Models or Model map — none yet.',
    );
  });

  it('with models, lists them for its own clients and the translated ones', async () => {
    const user = await openForm();
    await user.type(screen.getByLabelText(/^Models/), 'claude-*{enter}gpt-5*');
    expect(screen.getByTestId('endpoint-serves')).toHaveTextContent(
      'Serves Claude Code and Anthropic SDK clients asking for claude-*, gpt-5*. Translated for OpenAI Chat, Codex and OpenAI Responses clients asking for claude-*, gpt-5*.',
    );
  });

  it('with a model map only, serves every model to its own clients and the mapped ones translated', async () => {
    const user = await openForm();
    await user.selectOptions(screen.getByLabelText('Protocol'), 'openai-chat');
    await user.type(screen.getByLabelText(/^Model map/), 'claude-3-5-haiku* = glm-4.5-air{enter}claude-sonnet* => glm-4.6{enter}half a line');
    expect(screen.getByTestId('endpoint-serves')).toHaveTextContent(
      'Serves OpenAI Chat clients (all models). Translated for Claude Code, Anthropic SDK, Codex and OpenAI Responses clients asking for claude-3-5-haiku*, claude-sonnet*.',
    );
  });

  it('names models and model-map patterns once each, and shortens a long list', async () => {
    const user = await openForm();
    await user.type(screen.getByLabelText(/^Models/), 'a, b, c, d, e');
    await user.type(screen.getByLabelText(/^Model map/), 'a = x{enter}f = y');
    expect(screen.getByTestId('endpoint-serves')).toHaveTextContent(
      'Serves Claude Code and Anthropic SDK clients asking for a, b, c and 2 more. Translated for OpenAI Chat, Codex and OpenAI Responses clients asking for a, b, c and 3 more.',
    );
  });

  it('speaks Chinese too', async () => {
    renderApp(<EndpointsPanel />, 'zh-CN');
    await userEvent.setup().click(await screen.findByRole('button', { name: '添加端点' }));
    expect(screen.getByTestId('endpoint-serves')).toHaveTextContent('服务 Claude Code 和 Anthropic SDK 客户端（全部模型）。');
  });
});
