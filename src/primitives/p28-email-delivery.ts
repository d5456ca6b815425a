import { z } from 'zod';
import { LAST_VARS_LOCAL, requestFailure, resolveTarget } from './auth/request';
import { sendRaw } from '../http/request';
import { definePrimitive } from './types';
import { RequestSchema, sendRequest } from './workflow-http';

export const P28Schema = z
  .object({
    /** the request that makes the app send the e-mail */
    trigger: RequestSchema,
    /** the mail catcher's message list (MailHog /api/v2/messages, Mailpit /api/v1/messages), as an absolute URL of the stack */
    mail_api: z.string().regex(/^https?:\/\/[^/]+/, 'an absolute http(s) URL'),
    /** a recipient address the message must have */
    to: z.string().min(3).optional(),
    /** text the subject must contain (case-insensitive) */
    subject_contains: z.string().min(1).optional(),
    wait_seconds: z.number().min(0).max(300).default(15),
    timeout: z.number().positive().max(600).default(15),
  })
  .strict()
  .refine((v) => v.to || v.subject_contains, { message: 'give to and/or subject_contains' });

interface Mail {
  id: string;
  to: string[];
  subject: string;
}

const str = (v: unknown) => (typeof v === 'string' ? v : '');

/** Messages of a MailHog v2 (`items`), Mailpit (`messages`) or plain list answer. */
export function mailMessages(body: unknown): Mail[] {
  const b = body as Record<string, unknown> | unknown[] | null;
  const list = Array.isArray(b) ? b : Array.isArray(b?.items) ? (b.items as unknown[]) : Array.isArray(b?.messages) ? (b.messages as unknown[]) : [];
  return list.map((m, i) => {
    const o = (m && typeof m === 'object' ? m : {}) as Record<string, unknown>;
    const content = (o.Content ?? {}) as { Headers?: Record<string, unknown> };
    const hdr = (k: string) => (Array.isArray(content.Headers?.[k]) ? (content.Headers![k] as unknown[]).map(String) : []);
    const to: string[] = [];
    for (const r of Array.isArray(o.To) ? o.To : Array.isArray(o.to) ? o.to : []) {
      if (typeof r === 'string') to.push(r);
      else if (r && typeof r === 'object') {
        const x = r as Record<string, unknown>;
        if (x.Address || x.address) to.push(str(x.Address) || str(x.address));
        else if (x.Mailbox) to.push(`${str(x.Mailbox)}@${str(x.Domain)}`);
      }
    }
    for (const h of hdr('To')) to.push(...h.split(',').map((s) => s.replace(/.*</, '').replace(/>.*/, '').trim()));
    const subject = str(o.Subject) || str(o.subject) || hdr('Subject')[0] || '';
    return { id: str(o.ID) || str(o.id) || `#${i}:${subject}:${to.join(',')}`, to: to.map((t) => t.toLowerCase()), subject };
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * P28: the app sends an e-mail. The trigger request must answer below 400; then the mail
 * catcher of the stack (mail_api) must list, within wait_seconds, a new message to `to` whose
 * subject contains `subject_contains`. A stack without a mail catcher on that port fails, saying so.
 */
export const P28 = definePrimitive({
  id: 'P28',
  name: 'email_delivery',
  schema: P28Schema,
  produces: () => ({ exported: [], local: LAST_VARS_LOCAL }),
  async run(input, ctx) {
    let target;
    try {
      target = resolveTarget(ctx.env, input.mail_api);
    } catch (e) {
      return { passed: false, message: `${requestFailure(e, 'mail catcher')} (the e-mail cannot be observed)` };
    }
    const list = async (): Promise<Mail[] | string> => {
      try {
        const r = await sendRaw({ baseUrl: target.baseUrl, method: 'GET', path: target.path, headers: { Accept: 'application/json' }, timeoutMs: input.timeout * 1000 });
        return r.status === 200 ? mailMessages(r.body) : `mail catcher GET ${input.mail_api} → ${r.status}`;
      } catch (e) {
        return requestFailure(e, `mail catcher GET ${input.mail_api}`);
      }
    };
    const before = await list();
    if (typeof before === 'string') return { passed: false, message: before };
    const seen = new Set(before.map((m) => m.id));
    const out = await sendRequest(ctx, input.trigger, input.timeout, 'trigger');
    if (out.problem) return { passed: false, message: out.problem };
    const wantTo = input.to?.toLowerCase();
    const wantSubject = input.subject_contains?.toLowerCase();
    const deadline = Date.now() + input.wait_seconds * 1000;
    let fresh: Mail[] = [];
    for (;;) {
      const now = await list();
      if (typeof now === 'string') return { passed: false, message: `${out.line}; ${now}` };
      fresh = now.filter((m) => !seen.has(m.id));
      const hit = fresh.find((m) => (!wantTo || m.to.includes(wantTo)) && (!wantSubject || m.subject.toLowerCase().includes(wantSubject)));
      if (hit) return { passed: true, message: `${out.line}; mail to ${hit.to.join(', ')}: "${hit.subject}"` };
      if (Date.now() >= deadline) break;
      await sleep(500);
    }
    const seenLine = fresh.map((m) => `${m.to.join(',')}: "${m.subject}"`).slice(0, 5).join('; ') || 'none';
    return { passed: false, message: `${out.line}; no new mail${wantTo ? ` to ${wantTo}` : ''}${wantSubject ? ` with "${input.subject_contains}" in the subject` : ''} within ${input.wait_seconds}s (new: ${seenLine})` };
  },
});
