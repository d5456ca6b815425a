import type { Json } from '../../../model/json';

/**
 * Reads the mongo-shell commands of published DAGs (ygamciur) into data, once, at load time:
 * `db.<collection>.<find|findOne|countDocuments|count|aggregate|distinct>(<args>)`, optionally
 * followed by `.count()`, `.limit(n)` or `.sort({…})`. Arguments are JavaScript literals: unquoted
 * keys, single or double quotes, numbers, true/false/null, arrays, objects, and `ObjectId('…')`,
 * `ISODate('…')` (kept as Extended JSON {"$oid"} / {"$date"}). Nothing is evaluated.
 */
export interface ShellRead {
  collection: string;
  operation: 'find' | 'findOne' | 'countDocuments' | 'aggregate' | 'distinct';
  filter?: Record<string, Json>;
  projection?: Record<string, Json>;
  sort?: Record<string, Json>;
  limit?: number;
  pipeline?: Record<string, Json>[];
  field?: string;
}

class Parser {
  i = 0;
  constructor(readonly s: string) {}
  fail(msg: string): never {
    throw new Error(`${msg} at character ${this.i + 1}`);
  }
  ws() {
    while (this.i < this.s.length && /\s/.test(this.s[this.i])) this.i++;
  }
  eat(c: string): boolean {
    this.ws();
    if (this.s.startsWith(c, this.i)) {
      this.i += c.length;
      return true;
    }
    return false;
  }
  expect(c: string) {
    if (!this.eat(c)) this.fail(`expected ${JSON.stringify(c)}`);
  }
  ident(): string {
    this.ws();
    const m = /^[A-Za-z_$][A-Za-z0-9_$]*/.exec(this.s.slice(this.i));
    if (!m) this.fail('expected a name');
    this.i += m[0].length;
    return m[0];
  }
  string(): string {
    const q = this.s[this.i];
    let out = '';
    this.i++;
    while (this.i < this.s.length && this.s[this.i] !== q) {
      if (this.s[this.i] === '\\') {
        const n = this.s[this.i + 1];
        out += n === 'n' ? '\n' : n === 't' ? '\t' : n;
        this.i += 2;
      } else out += this.s[this.i++];
    }
    if (this.s[this.i] !== q) this.fail('unterminated string');
    this.i++;
    return out;
  }
  value(): Json {
    this.ws();
    const c = this.s[this.i];
    if (c === '{') return this.object();
    if (c === '[') {
      this.i++;
      const arr: Json[] = [];
      if (this.eat(']')) return arr;
      do arr.push(this.value());
      while (this.eat(','));
      this.expect(']');
      return arr;
    }
    if (c === "'" || c === '"') return this.string();
    const num = /^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?/.exec(this.s.slice(this.i));
    if (num) {
      this.i += num[0].length;
      return Number(num[0]);
    }
    const name = this.ident();
    if (name === 'true') return true;
    if (name === 'false') return false;
    if (name === 'null') return null;
    if (name === 'ObjectId' || name === 'ISODate') {
      this.expect('(');
      this.ws();
      const arg = this.string();
      this.expect(')');
      return name === 'ObjectId' ? { $oid: arg } : { $date: arg };
    }
    return this.fail(`unsupported value ${name}`);
  }
  object(): Record<string, Json> {
    this.expect('{');
    const out: Record<string, Json> = {};
    if (this.eat('}')) return out;
    do {
      this.ws();
      if (this.s[this.i] === '}') break; // trailing comma
      const key = this.s[this.i] === "'" || this.s[this.i] === '"' ? this.string() : this.ident();
      this.expect(':');
      out[key] = this.value();
    } while (this.eat(','));
    this.expect('}');
    return out;
  }
  args(): Json[] {
    this.expect('(');
    const out: Json[] = [];
    if (this.eat(')')) return out;
    do out.push(this.value());
    while (this.eat(','));
    this.expect(')');
    return out;
  }
}

const isObj = (v: Json | undefined): v is Record<string, Json> => !!v && typeof v === 'object' && !Array.isArray(v);

export function parseMongoShell(command: string): { read: ShellRead } | { error: string } {
  const p = new Parser(command.trim().replace(/;\s*$/, ''));
  try {
    if (p.ident() !== 'db') p.fail('expected db.<collection>');
    p.expect('.');
    const collection = p.ident();
    p.expect('.');
    const method = p.ident();
    const args = p.args();
    const read: ShellRead = { collection, operation: 'find' };
    const objArg = (k: number, what: string) => {
      const v = args[k];
      if (v !== undefined && !isObj(v)) p.fail(`${method}: the ${what} must be an object`);
      return v as Record<string, Json> | undefined;
    };
    switch (method) {
      case 'find':
      case 'findOne':
        read.operation = method;
        read.filter = objArg(0, 'filter');
        read.projection = objArg(1, 'projection');
        break;
      case 'countDocuments':
      case 'count':
        read.operation = 'countDocuments';
        read.filter = objArg(0, 'filter');
        break;
      case 'aggregate':
        read.operation = 'aggregate';
        if (!Array.isArray(args[0]) || !args[0].every(isObj)) p.fail('aggregate needs a pipeline list');
        read.pipeline = args[0] as Record<string, Json>[];
        break;
      case 'distinct':
        read.operation = 'distinct';
        if (typeof args[0] !== 'string') p.fail('distinct needs a field name');
        read.field = args[0] as string;
        read.filter = objArg(1, 'filter');
        break;
      default:
        p.fail(`unsupported method ${method}`);
    }
    while (p.eat('.')) {
      const chained = p.ident();
      const a = p.args();
      if (read.operation !== 'find') p.fail(`.${chained}() after ${read.operation}`);
      if (chained === 'count' && a.length === 0) read.operation = 'countDocuments';
      else if (chained === 'limit' && typeof a[0] === 'number') read.limit = a[0];
      else if (chained === 'sort' && isObj(a[0])) read.sort = a[0];
      else p.fail(`unsupported .${chained}()`);
    }
    p.ws();
    if (p.i < p.s.length) p.fail('unexpected text');
    for (const k of Object.keys(read) as (keyof ShellRead)[]) if (read[k] === undefined) delete read[k];
    return { read };
  } catch (e) {
    return { error: (e as Error).message };
  }
}
