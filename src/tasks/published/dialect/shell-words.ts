/**
 * A small POSIX shell word splitter, enough to read the host commands some published P12 steps
 * carry (`docker exec <container> sh -c '<command>'`): blanks separate words; single quotes keep
 * everything; double quotes keep everything but `\"`, `\\`, `\$`, `` \` `` and a backslash-newline;
 * a backslash outside quotes escapes the next character. Each word records whether it holds an
 * expansion (`$…`, `` `…` ``) the host shell would have performed — those cannot be replayed.
 */
export interface ShellWord {
  text: string;
  /** an unquoted or double-quoted `$` or backquote: the host shell would have expanded it */
  expands: boolean;
}

/** A `$` at `i` starts an expansion when a name, `{`, `(`, a digit or a special parameter follows. */
const expandsAt = (s: string, i: number) => /[A-Za-z_{(0-9?!#@*$-]/.test(s[i + 1] ?? '');

export function shellWords(s: string): { words: ShellWord[]; error?: string } {
  const words: ShellWord[] = [];
  let cur: ShellWord | null = null;
  const word = () => (cur ??= { text: '', expands: false });
  let i = 0;
  while (i < s.length) {
    const c = s[i];
    if (c === ' ' || c === '\t' || c === '\n') {
      if (cur) words.push(cur);
      cur = null;
      i++;
    } else if (c === "'") {
      const end = s.indexOf("'", i + 1);
      if (end < 0) return { words, error: 'unterminated single quote' };
      word().text += s.slice(i + 1, end);
      i = end + 1;
    } else if (c === '"') {
      const w = word();
      i++;
      for (;;) {
        if (i >= s.length) return { words, error: 'unterminated double quote' };
        const d = s[i];
        if (d === '"') {
          i++;
          break;
        }
        if (d === '\\' && i + 1 < s.length && '"\\$`\n'.includes(s[i + 1])) {
          if (s[i + 1] !== '\n') w.text += s[i + 1];
          i += 2;
          continue;
        }
        if (d === '`' || (d === '$' && expandsAt(s, i))) w.expands = true;
        w.text += d;
        i++;
      }
    } else if (c === '\\') {
      if (i + 1 < s.length && s[i + 1] !== '\n') word().text += s[i + 1];
      i += 2;
    } else if (';&|<>()'.includes(c)) {
      return { words, error: `shell operator ${JSON.stringify(c)} outside quotes` };
    } else {
      const w = word();
      if (c === '`' || (c === '$' && expandsAt(s, i))) w.expands = true;
      w.text += c;
      i++;
    }
  }
  if (cur) words.push(cur);
  return { words };
}

/**
 * `docker exec [-i] [-t] [-u USER] [-w DIR] <container> <sh|bash> -c <command>` → its parts, or
 * undefined when `command` is not such a wrapper. `error` explains a wrapper that cannot be read.
 */
export function unwrapDockerExec(command: string): { container: string; containerIsVariable: boolean; shell: string; inner: string; user?: string; workdir?: string } | { error: string } | undefined {
  if (!/^\s*docker\s+exec\s/.test(command)) return undefined;
  const { words, error } = shellWords(command.trim());
  if (error) return { error };
  let i = 2;
  let user: string | undefined;
  let workdir: string | undefined;
  while (i < words.length && words[i].text.startsWith('-')) {
    const f = words[i].text;
    if (f === '-i' || f === '-t' || f === '-it' || f === '-ti') i++;
    else if (f === '-u' || f === '--user') (user = words[i + 1]?.text), (i += 2);
    else if (f === '-w' || f === '--workdir') (workdir = words[i + 1]?.text), (i += 2);
    else return { error: `unsupported docker exec flag ${f}` };
  }
  const [container, shell, dashC, inner, ...rest] = words.slice(i);
  if (!container || !shell || dashC?.text !== '-c' || !inner || !['sh', 'bash', '/bin/sh', '/bin/bash'].includes(shell.text)) {
    return { error: 'expected docker exec <container> sh|bash -c <command>' };
  }
  if (rest.length) return { error: 'words after the -c command (positional parameters) are not supported' };
  if (inner.expands) return { error: 'the command holds a $ or ` that the host shell would expand' };
  const containerIsVariable = container.expands;
  if (containerIsVariable && !/^\$\{?[A-Za-z_][A-Za-z0-9_]*\}?$/.test(container.text)) return { error: `unsupported container word ${container.text}` };
  return { container: container.text, containerIsVariable, shell: shell.text, inner: inner.text, user, workdir };
}
