import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { rankByRubric, sampleFiles, seededShuffle, splitEntries } from '../../src/primitives/judge-sampling';
import { P17Schema, rubricText } from '../../src/primitives/p17-llm-judge';

const TREE = [
  'README.md',
  'app/',
  'app/controllers/',
  'app/controllers/a_controller.rb',
  'app/controllers/b_controller.rb',
  'app/controllers/c_controller.rb',
  'app/services/',
  'app/services/billing_service.rb',
  'app/services/invoice_service.rb',
  'app/services/test_helper_service.rb',
  'app/views/',
  'app/views/index.html.erb',
  'config/',
  'config/app.json',
  'config/locales/',
  'config/locales/en.yml',
  'node_modules/',
  'node_modules/x/index.js',
];

describe('P17 sampling', () => {
  test('focus_paths come before files_to_sample', () => {
    assert.deepEqual(sampleFiles(TREE, { focus_paths: ['app/services/'], files_to_sample: ['app/controllers/a_controller.rb'] }).slice(0, 2), ['app/controllers/a_controller.rb', 'app/services/billing_service.rb']);
    assert.deepEqual(sampleFiles(TREE, { focus_paths: ['app/views/index.html.erb'], files_to_sample: ['app/controllers/'] }), ['app/views/index.html.erb', 'app/controllers/a_controller.rb', 'app/controllers/b_controller.rb', 'app/controllers/c_controller.rb']);
  });
  test('fallback_files only when nothing else matched', () => {
    assert.deepEqual(sampleFiles(TREE, { files_to_sample: ['lib/'], fallback_files: ['app/**/*_service.rb'] }), ['app/services/billing_service.rb', 'app/services/invoice_service.rb', 'app/services/test_helper_service.rb']);
    assert.deepEqual(sampleFiles(TREE, { files_to_sample: ['config/app.json'], fallback_files: ['app/**/*.rb'] }), ['config/app.json']);
  });
  test('extensions decide which files of a directory count', () => {
    assert.deepEqual(sampleFiles(TREE, { files_to_sample: ['config/'], extensions: ['.yml'] }), ['config/locales/en.yml']);
    assert.deepEqual(sampleFiles(TREE, { files_to_sample: ['config/'] }), ['config/app.json', 'config/locales/en.yml']);
  });
  test('glob_mode: an entry without metacharacters matches only that path (no directory walk)', () => {
    assert.deepEqual(sampleFiles(TREE, { files_to_sample: ['app/services'], glob_mode: true }), []);
    assert.deepEqual(sampleFiles(TREE, { files_to_sample: ['app/services'] }).length, 3);
  });
  test('max_files_per_dir caps each directory', () => {
    assert.deepEqual(sampleFiles(TREE, { files_to_sample: ['app/controllers/', 'app/services/'], max_files_per_dir: 1 }), ['app/controllers/a_controller.rb', 'app/services/billing_service.rb']);
  });
  test('prefer_keywords move matching files of a directory forward', () => {
    assert.deepEqual(sampleFiles(TREE, { files_to_sample: ['app/services/'], prefer_keywords: ['invoice'], sample_limit: 1 }), ['app/services/invoice_service.rb']);
  });
  test('ranked: files the rubric names and rubric words first, tests last, explicit files pinned', () => {
    const rubric = 'Judge the invoice flow in app/services/invoice_service.rb and the billing code.';
    // the named file first, then round-robin across areas (app/services, app/controllers, app/views)
    assert.deepEqual(sampleFiles(TREE, { files_to_sample: ['app/'], sample_strategy: 'ranked', sample_limit: 4 }, rubric), ['app/services/invoice_service.rb', 'app/controllers/a_controller.rb', 'app/views/index.html.erb', 'app/services/billing_service.rb']);
    const ranked = rankByRubric(['app/services/test_helper_service.rb', 'app/controllers/a_controller.rb', 'app/services/invoice_service.rb', 'app/services/billing_service.rb'], new Set(['app/controllers/a_controller.rb']), rubric, []);
    assert.equal(ranked[0], 'app/controllers/a_controller.rb');
    assert.equal(ranked[1], 'app/services/invoice_service.rb');
    assert.equal(ranked.at(-1), 'app/services/test_helper_service.rb');
  });
  test('random: the same sample for the same rubric and entries, another for another rubric', () => {
    const o = { files_to_sample: ['app/'], sample_strategy: 'random' as const, sample_limit: 3 };
    const a = sampleFiles(TREE, o, 'rubric one');
    assert.equal(a.length, 3);
    assert.deepEqual(sampleFiles(TREE, o, 'rubric one'), a);
    const others = ['r2', 'r3', 'r4', 'r5'].map((r) => JSON.stringify(sampleFiles(TREE, o, r)));
    assert.ok(others.some((x) => x !== JSON.stringify(a)), 'four other rubrics all gave the same sample');
    assert.deepEqual([...seededShuffle([1, 2, 3, 4, 5], 's')].sort(), [1, 2, 3, 4, 5]);
  });
  test('absolute entries: under the workspace they are relative, elsewhere they are read as they are', () => {
    assert.deepEqual(splitEntries(['/app/server/', '/app', 'lib/', '/usr/local/etc/php.ini'], '/app'), { inside: ['server', '', 'lib'], outside: ['/usr/local/etc/php.ini'] });
    assert.deepEqual(sampleFiles(TREE, { files_to_sample: ['/app/app/services/'], sample_limit: 1 }, '', '/app'), ['app/services/billing_service.rb']);
  });
  test('skipped directories never appear', () => {
    assert.ok(!sampleFiles(TREE, { sample_limit: 50 }).some((f) => f.startsWith('node_modules')));
  });
});

describe('P17 canonical inputs', () => {
  const ok = (v: unknown) => assert.equal(P17Schema.safeParse(v).success, true, JSON.stringify(P17Schema.safeParse(v).error?.issues));
  const bad = (v: unknown, path: string) => {
    const r = P17Schema.safeParse(v);
    assert.equal(r.success, false, `accepted ${JSON.stringify(v)}`);
    assert.ok(r.error!.issues.some((i) => i.path.join('.') === path), `${path} not blamed: ${JSON.stringify(r.error!.issues)}`);
  };
  test('evidence lists and their options', () => {
    ok({ rubric: 'x', evidence_type: ['rendered_dom', 'codebase'], files_to_sample: ['a/'], pages: ['/'] });
    ok({ rubric: 'x', evidence_type: ['codebase', 'http_get'], http_get: ['/api/content'] });
    ok({ rubric: 'x', evidence_type: 'prereq_responses', path_filters: ['/token'] });
    ok({ rubric: 'x', evidence_type: 'directory_listing', listing_root: '/app', listing_depth: 2 });
    bad({ rubric: 'x', evidence_type: ['codebase', 'code_files'] }, 'evidence_type');
    bad({ rubric: 'x', evidence_type: 'codebase', pages: ['/'] }, 'pages');
    bad({ rubric: 'x', evidence_type: 'codebase', http_get: ['/'] }, 'http_get');
    bad({ rubric: 'x', evidence_type: 'http_get' }, 'http_get');
    bad({ rubric: 'x', evidence_type: 'last_response', path_filters: ['/a'] }, 'path_filters');
    bad({ rubric: 'x', evidence_type: 'rendered_dom', max_files_per_dir: 3 }, 'max_files_per_dir');
    bad({ rubric: 'x', evidence_type: 'codebase', listing_depth: 2 }, 'listing_depth');
    bad({ rubric: 'x', strict_json: true, _strict_json: false }, '_strict_json');
    bad({ rubric: 'x', criteria: [{ dimension: 'A', description: 'b', extra: 1 }] }, 'criteria.0');
  });
  test('the rubric text: criteria with weights and a scoring guide on its own scale', () => {
    const t = rubricText(P17Schema.parse({ rubric_prompt: 'Main.', criteria: [{ dimension: 'Layout', weight: 3, description: 'sidebar' }, 'plain line'], scoring_guide: { text: '0 = none; 2 = all', scale: [0, 2] } }), undefined, [0, 6]);
    assert.equal(t, 'Main.\n\nCriteria:\n- Layout (weight 3): sidebar\n- plain line\n\nScoring guide (written on a 0–2 scale: map it proportionally onto the score range 0–6):\n0 = none; 2 = all');
    assert.equal(rubricText(P17Schema.parse({ rubric: 'R', scoring_guide: { text: 'g', scale: [0, 6] } }), undefined, [0, 6]), 'R\n\nScoring guide:\ng');
  });
});
