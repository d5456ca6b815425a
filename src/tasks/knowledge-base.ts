import { z } from 'zod';
import { jsonPath } from '../model/json';
import type { InputIssue } from '../errors';
import { zodInputIssues } from '../zod-issues';

/**
 * knowledge_base.json: the clarifications the agent gets beside the PRD. The published layout's
 * entries are `{id, question, answer, source_reference, confidence}`; the file is either
 * `{"clarifications": [...]}` or the bare list. Entries may carry more fields (the agent reads the
 * file as it is), but the five known ones must have the right types and ids must be unique.
 */
const Text = (what: string) => z.string({ error: `must be a string (${what})` }).trim().min(1, `must not be empty (${what})`);

export const KnowledgeEntrySchema = z.looseObject(
  {
    id: z.union([Text('entry id'), z.number().int()], { error: 'must be a string or an integer (entry id)' }),
    question: Text('the question'),
    answer: Text('the answer'),
    source_reference: z.string({ error: 'must be a string' }).optional(),
    confidence: z.string({ error: 'must be a string such as "high"' }).optional(),
  },
  { error: 'must be an object {id, question, answer, source_reference?, confidence?}' },
);

const Entries = z.array(KnowledgeEntrySchema, { error: 'must be a list of {id, question, answer} entries' });

export const KnowledgeBaseSchema = z.union([Entries, z.looseObject({ clarifications: Entries })], {
  error: 'must be {"clarifications": [...]} or a list of {id, question, answer} entries',
});

/** Issues of a parsed knowledge base (file = its path). */
export function knowledgeBaseIssues(raw: unknown, file: string): InputIssue[] {
  // pick the branch by shape so the path points inside it rather than at the union
  const schema = Array.isArray(raw) ? Entries : raw && typeof raw === 'object' ? z.looseObject({ clarifications: Entries }) : KnowledgeBaseSchema;
  const r = schema.safeParse(raw);
  const issues: InputIssue[] = r.success ? [] : zodInputIssues(r.error, file);
  if (r.success) {
    const entries = Array.isArray(r.data) ? r.data : (r.data as { clarifications: z.infer<typeof Entries> }).clarifications;
    const prefix = Array.isArray(r.data) ? '' : 'clarifications';
    const seen = new Map<string, number>();
    entries.forEach((e, i) => {
      const id = String(e.id);
      const first = seen.get(id);
      if (first !== undefined) issues.push({ file, path: jsonPath([i, 'id'], prefix), message: `duplicate id "${id}" (also ${jsonPath([first], prefix)})` });
      else seen.set(id, i);
    });
  }
  return issues;
}
