import type { TFunction } from 'i18next';

/** Whole seconds, minutes or hours, in the current language. */
export function formatDuration(t: TFunction, ms: number): string {
  const total = Math.max(0, Math.ceil(ms / 1000));
  if (total < 60) return t('duration.s', { s: total });
  if (total < 3600) return t('duration.ms', { m: Math.floor(total / 60), s: total % 60 });
  return t('duration.hms', { h: Math.floor(total / 3600), m: Math.floor((total % 3600) / 60) });
}

export function formatTime(iso: string | null | undefined, lang: string): string {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toLocaleString(lang, { hour12: false });
}

export function formatPercent(v: number | null | undefined): string {
  return v === null || v === undefined ? '' : `${Math.round(v * 1000) / 10}%`;
}

/** Time of day to the millisecond, for attempts that follow each other closely. */
export function formatClock(iso: string | null | undefined, lang: string): string {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toLocaleTimeString(lang, { hour12: false, hour: '2-digit', minute: '2-digit', second: '2-digit', fractionalSecondDigits: 3 });
}
