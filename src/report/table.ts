/** Plain-text table with aligned columns; numbers right-aligned. */
export function textTable(header: string[], rows: (string | number | null)[][]): string {
  const cells = [header, ...rows.map((r) => r.map((c) => (c === null ? '–' : String(c))))];
  const widths = header.map((_, i) => Math.max(...cells.map((r) => r[i]?.length ?? 0)));
  const numeric = header.map((_, i) => rows.every((r) => r[i] === null || typeof r[i] === 'number'));
  const line = (r: string[]) => r.map((c, i) => (numeric[i] ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join('  ').trimEnd();
  return [line(cells[0]), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.slice(1).map(line)].join('\n');
}

/** Markdown table (for summary.md). */
export function mdTable(header: string[], rows: (string | number | null)[][]): string {
  const esc = (c: string | number | null) => (c === null ? '–' : String(c).replace(/\|/g, '\\|'));
  return [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.map(esc).join(' | ')} |`)].join('\n');
}
