/**
 * The one way a duration is shown (reports, progress lines, the sweep's Temporal UI details):
 * `4.2s`, `42s`, `1m05s`, `2h03m`. Pure (no imports), so workflow code may use it too.
 * Under a minute one decimal is kept and a trailing `.0` dropped; from a minute on, the next
 * unit down is padded so columns of durations line up.
 */
export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '–';
  const tenths = Math.round(Math.max(0, ms) / 100);
  if (tenths < 600) return `${tenths % 10 === 0 ? tenths / 10 : (tenths / 10).toFixed(1)}s`;
  const s = Math.round(ms / 1000);
  if (s >= 3600) return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
  return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
}
