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

/** A count with the language's digit grouping. */
export function formatNumber(n: number, lang: string): string {
  return new Intl.NumberFormat(lang).format(n);
}

/** A large count shortened (12.3K, 1.2M; 1.2万 in Chinese), exact below 10,000. */
export function formatCompact(n: number, lang: string): string {
  return Math.abs(n) < 10_000 ? formatNumber(n, lang) : new Intl.NumberFormat(lang, { notation: 'compact', maximumFractionDigits: 1 }).format(n);
}

/** US dollars: cents, or four decimals for amounts under a cent. */
export function formatUSD(v: number, lang: string): string {
  const small = v !== 0 && Math.abs(v) < 0.01;
  return new Intl.NumberFormat(lang, { style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits: small ? 4 : 2 }).format(v);
}

/** The label of a chart slot: time of day for minute and hour buckets, the date for day buckets. */
export function formatSlot(t: number, bucket: 'minute' | 'hour' | 'day', lang: string): string {
  const d = new Date(t);
  return bucket === 'day'
    ? d.toLocaleDateString(lang, { month: 'numeric', day: 'numeric' })
    : d.toLocaleTimeString(lang, { hour: '2-digit', minute: '2-digit', hour12: false });
}

/** A short dollar amount for a chart axis: two significant digits ($0.00012, $1.5, $120). */
export function formatUSDShort(v: number, lang: string): string {
  return new Intl.NumberFormat(lang, { style: 'currency', currency: 'USD', maximumSignificantDigits: 2 }).format(v);
}

/**
 * What one request or attempt cost, in US dollars: "$0.0012" — cents from a cent up, four decimals below, two
 * significant digits below a hundredth of a cent (never rounded to "$0.0000"). Null is no price, said in words
 * by the caller: never $0.
 */
export function formatCost(v: number, lang: string): string {
  if (v === 0 || Math.abs(v) >= 0.0001) return formatUSD(v, lang);
  return new Intl.NumberFormat(lang, { style: 'currency', currency: 'USD', maximumSignificantDigits: 2 }).format(v);
}

/** Pretty-printed JSON when the text is JSON, else the text as it is. */
export function prettyJSON(text: string): { text: string; json: boolean } {
  const trimmed = text.trim();
  if (!trimmed || !'{['.includes(trimmed[0])) return { text, json: false };
  try {
    return { text: JSON.stringify(JSON.parse(trimmed), null, 2), json: true };
  } catch {
    return { text, json: false };
  }
}

/** An amount of a balance in its unit (docs/BEHAVIOUR.md#balance): $12.30, ¥40.00, 1,200 tokens, 60 %. */
export function formatBalance(v: number, unit: string, lang: string): string {
  switch (unit) {
    case 'USD':
    case 'CNY':
      return new Intl.NumberFormat(lang, { style: 'currency', currency: unit, minimumFractionDigits: 2, maximumFractionDigits: 2 }).format(v);
    case 'percent':
      return `${formatNumber(Math.round(v * 10) / 10, lang)} %`;
    case 'tokens':
      return `${formatCompact(Math.round(v), lang)} tokens`;
  }
  return formatNumber(v, lang);
}

/** How long ago an ISO time was, in whole minutes, hours or days. */
export function minutesAgo(iso: string, now: number): number {
  return Math.max(0, Math.floor((now - Date.parse(iso)) / 60_000));
}
