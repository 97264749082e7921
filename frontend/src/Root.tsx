import { useMemo, useState } from 'react';
import { I18nextProvider } from 'react-i18next';
import { ApiClient } from './api/client';
import { ApiProvider } from './api/context';
import { App } from './App';
import { AppDataProvider } from './hooks/useAppData';
import { createI18n, pickLanguage } from './i18n';

/** The whole page: i18n, the API client and shared data around the App. */
export function Root() {
  const [unauthorized, setUnauthorized] = useState(false);
  const api = useMemo(() => new ApiClient({ onUnauthorized: () => setUnauthorized(true) }), []);
  const i18n = useMemo(() => createI18n(pickLanguage(navigator.language)), []);
  return (
    <I18nextProvider i18n={i18n}>
      <ApiProvider client={api}>
        <AppDataProvider>
          <App unauthorized={unauthorized} />
        </AppDataProvider>
      </ApiProvider>
    </I18nextProvider>
  );
}
