import i18next, { type i18n } from 'i18next';
import { initReactI18next } from 'react-i18next';
import en from './en';
import zhCN from './zh-CN';

export const LANGUAGES = [
  { code: 'en', label: 'English' },
  { code: 'zh-CN', label: '简体中文' },
] as const;

export type Language = (typeof LANGUAGES)[number]['code'];

/** Maps a browser or settings language tag onto one we ship. */
export function pickLanguage(tag: string | undefined | null): Language {
  return tag && tag.toLowerCase().startsWith('zh') ? 'zh-CN' : 'en';
}

/** A fresh i18next instance (tests make their own; no shared global state). */
export function createI18n(lng: Language = 'en'): i18n {
  const inst = i18next.createInstance();
  void inst.use(initReactI18next).init({
    lng,
    fallbackLng: 'en',
    resources: { en: { translation: en }, 'zh-CN': { translation: zhCN } },
    interpolation: { escapeValue: false }, // React escapes already
    initAsync: false,
  });
  return inst;
}
