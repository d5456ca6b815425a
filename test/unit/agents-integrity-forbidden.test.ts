import { test } from 'node:test';
import assert from 'node:assert/strict';
import { auditTranscript } from '../../src/agents/integrity';
import type { Trajectory } from '../../src/agents/trajectory/types';
import { emptyTotals } from '../../src/agents/trajectory/types';

function traj(commands: string[]): Trajectory {
  return {
    schema: 'saasbench.trajectory/v1', agent: 'claude-code', agentVersion: null, model: 'm', sessionIds: [], prompt: '', totals: emptyTotals(), attempts: [], finalText: null,
    steps: [{ kind: 'agent', attempt: 1, text: '', toolCalls: commands.map((c, i) => ({ id: `t${i}`, name: 'Bash', input: { command: c }, command: c })) }],
  };
}

// the pack's forbidden lists of an e-signature task, in the shapes the prompts use (`*` wildcards, scoped npm names)
const task = {
  id: 'esign',
  dir: '/work/tasks/esign',
  dagFile: '/work/tasks/esign/evaluation/dag.json',
  forbiddenLibraries: ['docuseal*', 'pyhanko', '@docuseal/embed', 'hellosign-sdk'],
  forbiddenImages: ['docuseal/*', 'docusealco/*'],
};
const verdict = (cmds: string[]) => auditTranscript(task, traj(cmds), []);

test('integrity: installing a forbidden library is flagged, by any package manager and version spelling', () => {
  for (const cmd of [
    'bundle add docuseal',
    'gem install docuseal-api -v 1.2',
    'pip install pyhanko==0.21',
    'pip3 install -q pyhanko>=0.20 requests',
    'python -m pip install --upgrade pyhanko',
    'npm install --save @docuseal/embed@1.0.3',
    'cd web && pnpm add hellosign-sdk',
    'yarn add "hellosign-sdk"',
  ]) {
    const r = verdict([cmd]);
    assert.equal(r.verdict, 'flagged', cmd);
    assert.equal(r.forbiddenSourceHits, 1, cmd);
    assert.match(r.samples[0].rule, /^library /, cmd);
  }
});

test('integrity: pulling or running a forbidden image is flagged, with registry prefixes and tags', () => {
  for (const cmd of ['docker pull docuseal/docuseal:latest', 'docker run -d -p 3000:3000 docusealco/docuseal', 'podman run --rm docker.io/docuseal/docuseal@sha256:abc']) {
    const r = verdict([cmd]);
    assert.equal(r.verdict, 'flagged', cmd);
    assert.match(r.samples[0].rule, /^image /, cmd);
  }
});

test('integrity: generic libraries, look-alike names and mere mentions stay clean', () => {
  assert.equal(
    verdict([
      'bundle add hexapdf prawn',
      'pip install pyhanko-certvalidator-docs-only-lookalike', // not pyhanko itself
      'npm install express @docuseal-like/other',
      'grep -r docuseal docs/ && echo "do not install docuseal"',
      'cat Dockerfile | grep docuseal/docuseal',
    ]).verdict,
    'clean',
  );
});
