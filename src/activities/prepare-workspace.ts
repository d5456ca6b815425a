import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildPrompt } from '../agents/prompt';
import { writeAtomic } from '../runs/files';
import { sandboxBackend } from '../sandbox/factory';
import type { RolloutRef } from '../model/rollout';
import type { Task } from '../model/task';
import { taskFor } from './task-cache';

/**
 * Give the agent what the paper gives it: the PRD and the knowledge base in its workspace, and the
 * prompt. The activity of older workflows; newer ones write the prompt in provision (writePrompt)
 * and hand the files to the agent's launch (runAgent: one Docker round trip less per rollout).
 */
export async function prepareWorkspace(i: { ref: RolloutRef; agent: string; model: string }): Promise<{ promptFile: string }> {
  const task = taskFor(i.ref.taskDir, i.ref.taskHash);
  await sandboxBackend().writeFiles(i.ref.stack.services[task.environment.appService].container, task.environment.workspace, workspaceSeed(task));
  return { promptFile: writePrompt(task, i.ref.runDir) };
}

/** The files the workspace starts with: the PRD (task.md) and the knowledge base, when the task has them. */
export function workspaceSeed(task: Task): { path: string; content: Buffer }[] {
  const files: { path: string; content: Buffer }[] = [];
  if (task.prdFile) files.push({ path: 'task.md', content: readFileSync(task.prdFile) });
  if (task.knowledgeBaseFile) files.push({ path: 'knowledge_base.json', content: readFileSync(task.knowledgeBaseFile) });
  return files;
}

/** The agent's prompt, into the run folder (runAgent reads it from there). */
export function writePrompt(task: Task, runDir: string): string {
  const promptFile = join(runDir, 'prompt.md');
  writeAtomic(promptFile, buildPrompt(task));
  return promptFile;
}
