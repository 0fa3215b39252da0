// Pure formatting helpers: durations, transcript timestamps, byte sizes, dates.

/** Audio length for lists: "0:07", "3:25", "1:02:03". */
export function formatDuration(ms: number): string {
  const total = Math.max(0, Math.round(ms / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const ss = String(s).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}

/** Transcript timestamp "[mm:ss]", hours added past 59:59 ("[1:02:03]"). Floors, so a
 *  segment starting at 59.9 s shows [00:59] like a media player would. */
export function formatTimestamp(ms: number): string {
  const total = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const mm = String(m).padStart(2, '0');
  const ss = String(s).padStart(2, '0');
  return h > 0 ? `[${h}:${mm}:${ss}]` : `[${mm}:${ss}]`;
}

const UNITS = ['B', 'KB', 'MB', 'GB', 'TB'];

/** Human size in decimal units, as file managers show them: "142 MB", "1.6 GB". */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) return '—';
  let v = bytes;
  let u = 0;
  while (v >= 1000 && u < UNITS.length - 1) {
    v /= 1000;
    u++;
  }
  if (u === 0) return `${v} B`;
  const digits = v < 10 ? 1 : 0;
  return `${v.toFixed(digits)} ${UNITS[u]}`;
}

/** Local date and time of a history entry: "Today 14:05", "Yesterday 09:12" or "3 Mar 2025, 09:12". */
export function formatDateTime(unixMs: number, now: Date = new Date()): string {
  const d = new Date(unixMs);
  const time = d.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
  const dayStart = (x: Date) => new Date(x.getFullYear(), x.getMonth(), x.getDate()).getTime();
  const days = Math.round((dayStart(now) - dayStart(d)) / 86_400_000);
  if (days === 0) return `Today ${time}`;
  if (days === 1) return `Yesterday ${time}`;
  const date = d.toLocaleDateString(undefined, { day: 'numeric', month: 'short', year: 'numeric' });
  return `${date}, ${time}`;
}

/** "0.42" → "42%" for progress labels; null (unknown) → "". */
export function formatPercent(fraction: number | null): string {
  if (fraction == null || !Number.isFinite(fraction)) return '';
  return `${Math.round(Math.min(1, Math.max(0, fraction)) * 100)}%`;
}

/** Time left of a download: "8 s left", "3 min left", "1 h 5 min left"; unknown → "". */
export function formatEta(secs: number | null): string {
  if (secs == null || !Number.isFinite(secs) || secs < 0) return '';
  const s = Math.ceil(secs);
  if (s < 60) return `${s} s left`;
  const m = Math.round(s / 60);
  if (m < 60) return `${m} min left`;
  return `${Math.floor(m / 60)} h ${m % 60} min left`;
}
