/** Path of a polyline through `values` scaled into w × h (top = max), or '' with nothing to draw. */
export function sparkPath(values: number[], max: number, w: number, h: number): string {
  if (values.length === 0) return '';
  const step = values.length > 1 ? w / (values.length - 1) : 0;
  const y = (v: number) => (max > 0 ? h - (v / max) * (h - 2) - 1 : h - 1);
  return values.map((v, i) => `${i ? 'L' : 'M'}${(i * step).toFixed(1)} ${y(v).toFixed(1)}`).join(' ');
}

interface Props {
  requests: number[];
  errors: number[];
  /** What the line shows, for screen readers. */
  label: string;
  width?: number;
  height?: number;
}

/** A small requests (solid) and errors (red) line without axes; plain SVG, no chart library. */
export function Sparkline({ requests, errors, label, width = 140, height = 30 }: Props) {
  const max = Math.max(1, ...requests, ...errors);
  return (
    <svg className="sparkline" data-testid="sparkline" viewBox={`0 0 ${width} ${height}`} width={width} height={height} role="img" aria-label={label} preserveAspectRatio="none">
      <path className="spark-requests" d={sparkPath(requests, max, width, height)} />
      {errors.some((e) => e > 0) && <path className="spark-errors" d={sparkPath(errors, max, width, height)} />}
    </svg>
  );
}
