import { render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { Root } from './Root';
import { baseRoutes, endpoint, health, stubEventSource, stubFetch } from './test/utils';

describe('the page', () => {
  it('asks for the start-up link when the API answers 401', async () => {
    stubEventSource();
    const unauthorized = { status: 401, body: { error: { code: 'unauthorized', message: 'admin token missing or wrong' } } };
    stubFetch({ 'GET /api/info': unauthorized, 'GET /api/endpoints': unauthorized, 'GET /api/health': unauthorized, 'GET /api/settings': unauthorized });
    render(<Root />);
    expect(await screen.findByRole('alert')).toHaveTextContent('Open the link printed at start-up');
  });

  it('shows the proxy address and healthy count, and switches to Chinese (saved in settings)', async () => {
    stubEventSource();
    const calls = stubFetch({
      ...baseRoutes([endpoint({ id: 1, name: 'a' }), endpoint({ id: 2, name: 'b' })], [health({ id: 1, name: 'a' }), health({ id: 2, name: 'b', status: 'unhealthy', state: 'open', reason: 'broken', retry_in_ms: 5000 })]),
      'PUT /api/settings': { body: { language: 'zh-CN' } },
    });
    const user = userEvent.setup();
    render(<Root />);
    expect(await screen.findByTestId('proxy-url')).toHaveTextContent('http://127.0.0.1:3457');
    expect(await screen.findByTestId('health-count')).toHaveTextContent('1/2 healthy');

    await user.selectOptions(screen.getByLabelText('Language'), 'zh-CN');
    expect(screen.getByRole('tab', { name: '端点' })).toBeInTheDocument();
    expect(screen.getByTestId('health-count')).toHaveTextContent('1/2 健康');
    expect(within(screen.getByTestId('endpoint-card-b')).getByTestId('status-badge')).toHaveTextContent('熔断');
    expect(calls.find((c) => c.method === 'PUT')).toMatchObject({ path: '/api/settings', body: { language: 'zh-CN' } });
  });
});
