/**
 * Transient gateway failures: the only agent failures that get a retry (DESIGN §4, the paper's one
 * retry after 60 s). Markers are the published harness's list (upstream-harness §2.4, §2.9) plus
 * Codex 0.128's own wording for an overloaded provider ("Selected model is at capacity", "high demand").
 * Each driver decides which text to scan: API-error text only, never the agent's own prose (an
 * agent writing a rate limiter would otherwise look "transient").
 */
const HTTP_STATUS =
  /(?:\bHTTP(?:\/\d(?:\.\d)?)?|\bstatus(?:[ _]?code)?|\bstatusCode|\berror[ _]code|\bAPI Error)["']?\s*[:=]?\s*["']?(?:429|503|529)\b|\b(?:429|503|529)\s+(?:Too Many Requests|Service Unavailable|Overloaded)\b/i;

export const TRANSIENT_MARKERS: { marker: RegExp; label: string }[] = [
  { marker: /overloaded/i, label: 'overloaded' },
  { marker: /high demand/i, label: 'high demand' },
  { marker: /at capacity/i, label: 'at capacity' },
  { marker: /rate[ _-]?limit/i, label: 'rate limit' },
  { marker: /too many requests/i, label: 'too many requests' },
  // a bare number is not a status ("processed 529 files", "retry in 503 ms"): only where the text
  // says it is one — HTTP/1.1 503, status 429, "status":529, API Error: 529, 429 Too Many Requests
  { marker: HTTP_STATUS, label: 'HTTP 429/503/529' },
  { marker: /temporarily unavailable/i, label: 'temporarily unavailable' },
  { marker: /service unavailable/i, label: 'service unavailable' },
  { marker: /reconnecting/i, label: 'reconnecting' },
  { marker: /stream disconnected/i, label: 'stream disconnected' },
  { marker: /connection (reset|closed)/i, label: 'connection reset/closed' },
  { marker: /websocket closed/i, label: 'websocket closed' },
  { marker: /upstream timeout/i, label: 'upstream timeout' },
  { marker: /model is busy/i, label: 'model is busy' },
  { marker: /internal server error/i, label: 'internal server error' },
];

/** The first marker found in the texts, as "<label>: <excerpt>", or null. */
export function transientIn(texts: (string | undefined | null)[]): string | null {
  for (const t of texts) {
    if (!t) continue;
    for (const { marker, label } of TRANSIENT_MARKERS) {
      const m = marker.exec(t);
      if (m) {
        const at = Math.max(0, m.index - 60);
        return `${label}: ${t.slice(at, m.index + 140).replace(/\s+/g, ' ').trim()}`;
      }
    }
  }
  return null;
}
