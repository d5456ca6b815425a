import type { Task } from '../model/task';

/**
 * The agent prompt, built as the published harness does: the task prompt, a pointer to the PRD,
 * one to the knowledge base, and the reminder to leave the server running (the evaluator probes
 * over HTTP right after the agent stops).
 */
export function buildPrompt(task: Task): string {
  const ws = task.environment.workspace;
  const parts = [task.promptText.trim(), '', '### Requirements Document', '', `The full product requirements are in \`${ws}/task.md\`. Read it before you start and follow it exactly.`];
  if (task.knowledgeBaseFile) {
    parts.push(
      '',
      '### Knowledge Base',
      '',
      `\`${ws}/knowledge_base.json\` holds clarifications to the requirements: entries shaped ` +
        '`{id, question, answer, source_reference, confidence}` under `clarifications`. Read it on demand ' +
        `(for example \`jq '.clarifications[] | select(.question | test("sla"; "i"))' ${ws}/knowledge_base.json\`).`,
    );
  }
  parts.push(
    '',
    '### Important Reminder',
    '',
    'After writing the code you MUST start the server yourself. The evaluator checks the running system over HTTP as soon as you finish:',
    '1. install the dependencies;',
    '2. run the database migrations;',
    '3. create the test users the requirements ask for;',
    `4. start the server on port ${task.environment.appPort} and leave it running in the background when you finish.`,
  );
  return parts.join('\n') + '\n';
}
