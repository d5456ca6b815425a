/**
 * A small POSIX shell word splitter, enough to read the host commands some published P12 steps
 * carry (`docker exec <container> sh -c '<command>'`): blanks separate words; single quotes keep
 * everything; double quotes keep everything but `\"`, `\\`, `\$`, `` \` `` and a backslash-newline;
 * a backslash outside quotes escapes the next character. Each word records whether it holds an
 * expansion (`$…`, `` `…` ``) the host shell would have performed — those cannot be replayed.
 */
import { shellWord } from '../../../shell';
export interface ShellWord {
  text: string;
  /** an unquoted or double-quoted `$` or backquote: the host shell would have expanded it */
  expands: boolean;
}

/** A `$` at `i` starts an expansion when a name, `{`, `(`, a digit or a special parameter follows. */
const expandsAt = (s: string, i: number) => /[A-Za-z_{(0-9?!#@*$-]/.test(s[i + 1] ?? '');

export function shellWords(s: string, o: { stopAtOperator?: boolean } = {}): { words: ShellWord[]; error?: string; rest?: string } {
  const words: ShellWord[] = [];
  let cur: ShellWord | null = null;
  let start = 0;
  const word = () => (cur ??= ((start = i), { text: '', expands: false }));
  let i = 0;
  while (i < s.length) {
    const c = s[i];
    if (o.stopAtOperator && ';&|<>'.includes(c)) {
      // `2>/dev/null`: a number right before a redirection belongs to it
      const w = cur as ShellWord | null;
      if (w && /^\d+$/.test(w.text) && '<>'.includes(c)) return { words, rest: s.slice(start).trim() };
      if (w) words.push(w);
      return { words, rest: s.slice(i).trim() };
    }
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

/** A word for bash, single-quoted unless it is plain. */
export const shellQuote = shellWord;

/**
 * `docker exec [-i] [-t] [-u USER] [-w DIR] <container> <argv…> [host redirections / pipes]` →
 * the command to run in that container: for `sh|bash -c <command>` that command, else the argv
 * re-quoted for bash, with what followed it on the host (`2>/dev/null`, `| grep x`) appended.
 * undefined when `command` is not such a wrapper; `error` explains one that cannot be read.
 */
export function unwrapDockerExec(command: string): { container: string; containerIsVariable: boolean; inner: string; user?: string; workdir?: string } | { error: string } | undefined {
  if (!/^\s*docker\s+exec\s/.test(command)) return undefined;
  const { words, error, rest } = shellWords(command.trim(), { stopAtOperator: true });
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
  const [container, ...argv] = words.slice(i);
  if (!container || argv.length === 0) return { error: 'expected docker exec <container> <command>' };
  if (argv.some((w) => w.expands)) return { error: 'the command holds a $ or ` that the host shell would expand' };
  if (rest && /`|\$[A-Za-z_{(]/.test(rest)) return { error: 'the host part after the command holds an expansion' };
  // only redirections and a pipe may follow: a `;`, `&&` or `&` list would have run on the host
  if (rest && !/^(\d*[<>]|\|(?!\|))/.test(rest)) return { error: `host commands after the docker exec (${rest.slice(0, 20)}…) cannot run in a container` };
  if (rest && /(^|[^|])(;|&&|\|\||&)/.test(rest.replace(/\d*>&\d/g, ''))) return { error: 'a host command list after the pipe cannot run in a container' };
  const containerIsVariable = container.expands;
  if (containerIsVariable && !/^\$\{?[A-Za-z_][A-Za-z0-9_]*\}?$/.test(container.text)) return { error: `unsupported container word ${container.text}` };
  const shell = ['sh', 'bash', '/bin/sh', '/bin/bash'].includes(argv[0].text) && argv[1]?.text === '-c' && argv.length === 3;
  const base = shell ? argv[2].text : argv.map((w) => shellQuote(w.text)).join(' ');
  const inner = rest ? (shell ? `${argv.map((w) => shellQuote(w.text)).join(' ')} ${rest}` : `${base} ${rest}`) : base;
  return { container: container.text, containerIsVariable, inner, user, workdir };
}
