import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildPrompt } from '../agents/prompt';
import { writeAtomic } from '../runs/files';
import { sandboxBackend } from '../sandbox/factory';
import type { RolloutRef } from '../model/rollout';
import type { StackHandle } from '../model/sandbox';
import type { Task } from '../model/task';
import { taskFor } from './task-cache';

/** Give the agent what the paper gives it: the PRD and the knowledge base in its workspace, and the prompt. */
export async function prepareWorkspace(i: { ref: RolloutRef; agent: string; model: string }): Promise<{ promptFile: string }> {
  return prepareInto(taskFor(i.ref.taskDir, i.ref.taskHash), i.ref.stack, i.ref.runDir);
}

/** The same, done by provision itself on newer workflows (one activity less per rollout: bench/sweep-overhead.ts). */
export async function prepareInto(task: Task, stack: StackHandle, runDir: string): Promise<{ promptFile: string }> {
  const app = stack.services[task.environment.appService].container;
  const files: { path: string; content: Buffer }[] = [];
  if (task.prdFile) files.push({ path: 'task.md', content: readFileSync(task.prdFile) });
  if (task.knowledgeBaseFile) files.push({ path: 'knowledge_base.json', content: readFileSync(task.knowledgeBaseFile) });
  await sandboxBackend().writeFiles(app, task.environment.workspace, files);
  const promptFile = join(runDir, 'prompt.md');
  writeAtomic(promptFile, buildPrompt(task));
  return { promptFile };
}
