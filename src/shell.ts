// The one POSIX shell quoting of the project: every command we hand to `bash -c` / `sh -c` in a
// container quotes its arguments here, so a quoting bug has one place to be fixed.

/** `s` as one single-quoted shell word (safe for any content, including quotes and newlines). */
export function shQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** `s` bare when it is plainly one word, else single-quoted: for commands meant to be read. */
export function shellWord(s: string): string {
  return /^[A-Za-z0-9_./:=@%+,-]+$/.test(s) ? s : shQuote(s);
}
