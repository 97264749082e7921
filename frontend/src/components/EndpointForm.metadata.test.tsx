import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import { AuthModes, BreakerNumberFields, EndpointPatchRanges, MismatchModes, Protocols, Strategies } from '../api/types';
import { createI18n } from '../i18n';
import { PROTOCOLS } from '../routing';
import { baseRoutes, PRESETS, renderApp, stubEventSource, stubFetch } from '../test/utils';
import { BREAKER_FIELDS, buildInput, draftOfPreset, MULTIPLIER_MAX, MULTIPLIER_MIN } from './EndpointForm';
import { EndpointsPanel } from './EndpointsPanel';

// Item 1: the forms offer and check what the Go lists and range tags say (generated into api/types.gen.ts by
// `make types`), not copies of them.
describe('the forms read the generated metadata', () => {
  beforeEach(() => {
    stubEventSource();
  });

  it('has the Go lists, in their order', () => {
    expect(Protocols).toEqual(['anthropic', 'openai-chat', 'openai-responses', 'gemini']);
    expect(PROTOCOLS).toBe(Protocols);
    expect(BREAKER_FIELDS).toBe(BreakerNumberFields);
    expect(BreakerNumberFields).not.toContain('disabled');
    expect(Strategies[0]).toBe('sticky'); // the default comes first
  });

  it('offers every protocol, auth mode and mismatch mode the API takes', async () => {
    stubFetch({ ...baseRoutes([]), 'GET /api/presets': { body: { presets: PRESETS } } });
    const user = userEvent.setup();
    renderApp(<EndpointsPanel />);
    await user.click(await screen.findByRole('button', { name: 'Add endpoint' }));
    await user.click(await screen.findByRole('button', { name: 'Custom' }));
    const values = (label: string) => within(screen.getByLabelText(label)).getAllByRole('option').map((o) => (o as HTMLOptionElement).value);
    expect(values('Protocol')).toEqual([...Protocols]);
    expect(values('Auth header')).toEqual([...AuthModes]);
    expect(values('Answer from another model')).toEqual([...MismatchModes]);
  });

  it('takes the ends of the API’s ranges and refuses one past them', () => {
    const { t } = createI18n('en');
    const [hedgeMin, hedgeMax] = EndpointPatchRanges.hedge_after_ms;
    const [weightMin, weightMax] = EndpointPatchRanges.weight;
    expect([MULTIPLIER_MIN, MULTIPLIER_MAX]).toEqual([...EndpointPatchRanges.price_multiplier]);
    const cases: [string, Record<string, string>, boolean][] = [
      ['hedge at its min', { hedge_after_ms: String(hedgeMin) }, true],
      ['hedge at its max', { hedge_after_ms: String(hedgeMax) }, true],
      ['hedge past its max', { hedge_after_ms: String(hedgeMax + 1) }, false],
      ['hedge below its min', { hedge_after_ms: String(hedgeMin - 1) }, false],
      ['weight at its ends', { weight: String(weightMax) }, true],
      ['weight below its min', { weight: String(weightMin - 1) }, false],
      ['weight past its max', { weight: String(weightMax + 1) }, false],
    ];
    for (const [name, over, ok] of cases) {
      const d = { ...draftOfPreset(PRESETS[0], 'x'), ...over };
      const { errors } = buildInput(d, t);
      expect(Object.keys(errors).length === 0, `${name}: errors ${JSON.stringify(errors)}`).toBe(ok);
    }
  });
});
