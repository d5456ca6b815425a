import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../../src/paths';
import { normalizePublishedDag } from '../../src/tasks/published/dialect';
import { checkDag } from '../../src/tasks/validate-dag';

// P17 published spellings → canonical inputs, on small steps of our own (test/fixtures/dialect-judge).
type Case = { task: string; before?: unknown[]; inputs: Record<string, unknown> };
const CASES = (JSON.parse(readFileSync(join(repoRoot(), 'test/fixtures/dialect-judge/steps.json'), 'utf8')) as { cases: Record<string, Case> }).cases;

function load(name: string) {
  const c = CASES[name];
  assert.ok(c, `no case ${name}`);
  const chain = [...(c.before ?? []), { type: 'P17', inputs: c.inputs }];
  const at = `nodes[0].primitive_chain[${chain.length - 1}]`;
  const raw = { nodes: [{ id: 'JUDGE', prereqs: [], primitive_chain: chain, scoring: { category: 'ArchitectureQuality', subcategory: 'X', method: 'llm-judge', maxScore: 5 } }] };
  const norm = normalizePublishedDag(raw, { task: c.task, file: 'dag.json' });
  const check = checkDag(norm.dag, 'dag.json', undefined, { allowZeroMaxScore: true });
  const issues = [...norm.issues, ...check.issues].filter((i) => i.path.startsWith(at)).map((i) => `${i.path}: ${i.message}`);
  const step = (norm.dag.nodes[0] as { primitive_chain: { type: string; inputs: Record<string, unknown>; notes?: Record<string, unknown> }[] }).primitive_chain[chain.length - 1];
  const spellings = norm.spellings.filter((s) => s.primitive === 'P17').map((s) => `${s.spelling} → ${s.canonical}`);
  return { inputs: step.inputs, notes: step.notes, issues, spellings };
}

/** Loads without an issue and yields these canonical inputs (a subset) and spelling records. */
function expectCanonical(name: string, inputs: Record<string, unknown>, spellings: string[]) {
  const r = load(name);
  assert.deepEqual(r.issues, [], `${name}: ${r.issues.join('; ')}`);
  for (const [k, v] of Object.entries(inputs)) assert.deepEqual(r.inputs[k], v, `${name}: inputs.${k}`);
  for (const s of spellings) assert.ok(r.spellings.includes(s), `${name}: no spelling record "${s}" in ${JSON.stringify(r.spellings)}`);
  return r;
}

describe('P17 dialect: the rubric', () => {
  test('scoring_rubric → scoring_guide with its own scale; evaluation_criteria → criteria', () => {
    const r = expectCanonical('scoring_rubric', { scoring_guide: { text: '0 = one tier; 1 = two tiers; 2 = three tiers.', scale: [0, 2] }, criteria: '1. A schema exists. 2. Controllers exist.' }, ['scoring_rubric → scoring_guide', 'evaluation_criteria → criteria']);
    assert.equal(r.inputs.scoring_rubric, undefined);
  });
  test('weighted criteria objects are canonical as written', () => {
    expectCanonical('criteria', { criteria: [{ dimension: 'Layout', weight: 0.4, description: 'Has a sidebar' }] }, []);
  });
});

describe('P17 dialect: evidence by task and chain', () => {
  test('rendered_dom stays a DOM after a browser step and is the last response without one', () => {
    const a = load('dom_with_render');
    assert.deepEqual([a.issues, a.inputs.evidence_type, a.spellings], [[], 'rendered_dom', []]);
    expectCanonical('dom_without_render', { evidence_type: 'last_response' }, ['evidence_type: rendered_dom → evidence_type: last_response']);
  });
  test('frontend_code_and_dom: code files, plus the DOM only when the chain renders one', () => {
    expectCanonical('code_and_dom_no_render', { evidence_type: 'codebase', sample_strategy: 'ranked' }, ['evidence_type: frontend_code_and_dom → evidence_type: codebase', 'sample_strategy: layout_and_styles → sample_strategy: ranked']);
    expectCanonical('code_and_dom_render', { evidence_type: ['codebase', 'rendered_dom'] }, ['evidence_type: frontend_code_and_dom → evidence_type: codebase + rendered_dom']);
  });
  test('http_response_body is every response in jtbxfpny and the last one elsewhere', () => {
    expectCanonical('body_jtbxfpny', { evidence_type: 'chain_responses' }, ['evidence_type: http_response_body → evidence_type: chain_responses']);
    expectCanonical('body_other', { evidence_type: 'last_response' }, ['evidence_type: http_response_body → evidence_type: last_response']);
  });
  test('payload / multi-endpoint spellings are the chain\'s responses; json the last; an empty files_to_sample is dropped', () => {
    const p = expectCanonical('payload', { evidence_type: 'chain_responses' }, ['evidence_type: http_response_payload → evidence_type: chain_responses', 'files_to_sample: [] → (absent)']);
    assert.equal('files_to_sample' in p.inputs, false);
    expectCanonical('multi', { evidence_type: 'chain_responses' }, ['evidence_type: multi_endpoint_responses → evidence_type: chain_responses']);
    expectCanonical('json', { evidence_type: 'last_response' }, ['evidence_type: http_response_json → evidence_type: last_response']);
  });
  test('api_responses without a request in the chain are the prerequisites\' responses, filtered by path', () => {
    expectCanonical('api_responses_prereqs', { evidence_type: 'prereq_responses', path_filters: ['/token'], max_evidence_chars: 30000 }, ['evidence_type: api_responses → evidence_type: prereq_responses', 'api_path_filters → path_filters']);
  });
  test('db_query_result → sql_result; logs after P12 → command_output; container_logs after P21 → log_tail; page_html → rendered_dom', () => {
    expectCanonical('db', { evidence_type: 'sql_result' }, ['evidence_type: db_query_result → evidence_type: sql_result']);
    expectCanonical('logs_p12', { evidence_type: 'command_output' }, ['evidence_type: logs → evidence_type: command_output']);
    expectCanonical('logs_p21', { evidence_type: 'log_tail' }, ['evidence_type: container_logs → evidence_type: log_tail']);
    expectCanonical('page_html', { evidence_type: 'rendered_dom' }, ['evidence_type: page_html → evidence_type: rendered_dom']);
  });
  test('http_response_headers → the last response\'s headers, with the files beside them; files beside a DOM', () => {
    expectCanonical('headers', { evidence_type: ['response_headers', 'codebase'], files_to_sample: ['config/application.rb'] }, ['evidence_type: http_response_headers → evidence_type: response_headers', 'files_to_sample (beside a page or headers) → files_to_sample + evidence codebase']);
    expectCanonical('dom_with_files', { evidence_type: ['rendered_dom', 'codebase'] }, ['files_to_sample (beside a page or headers) → files_to_sample + evidence codebase']);
  });
  test('evidence_paths: JSONPaths read the last response, other entries are more files', () => {
    expectCanonical('evidence_paths', { evidence_type: ['codebase', 'last_response'], response_paths: ['$.entry.message'], files_to_sample: ['lib/sanitize.rb', 'src/**/*.rb'] }, ['evidence_paths: $.… → response_paths + evidence last_response', 'evidence_paths: files → files_to_sample']);
  });
  test('directory_listing with base_dir / depth', () => {
    expectCanonical('listing', { evidence_type: 'directory_listing', listing_root: '/app', listing_depth: 2 }, ['base_dir → listing_root', 'depth → listing_depth']);
  });
  test('an evidence type no task spells is left for the canonical schema to reject', () => {
    const c = CASES.db;
    const raw = { nodes: [{ id: 'J', prereqs: [], primitive_chain: [{ type: 'P17', inputs: { ...c.inputs, evidence_type: 'telepathy' } }], scoring: { category: 'X', subcategory: 'X', method: 'llm-judge', maxScore: 5 } }] };
    const norm = normalizePublishedDag(raw, { task: 'x', file: 'dag.json' });
    const check = checkDag(norm.dag, 'dag.json');
    assert.ok(check.issues.some((i) => i.path.endsWith('inputs.evidence_type')), JSON.stringify(check.issues));
  });
});

describe('P17 dialect: sampling', () => {
  test('stratified_dirs → first with the per-directory cap; max_total_files → sample_limit', () => {
    expectCanonical('stratified', { sample_strategy: 'first', max_files_per_dir: 4, sample_limit: 12 }, ['sample_strategy: stratified_dirs → sample_strategy: first', 'max_total_files → sample_limit']);
  });
  test('random_n with n → random, sample_limit', () => {
    expectCanonical('random', { sample_strategy: 'random', sample_limit: 5 }, ['sample_strategy: random_n → sample_strategy: random', 'n → sample_limit']);
  });
  test('structure_and_key_files → ranked', () => {
    expectCanonical('ranked', { sample_strategy: 'ranked', max_score: 6 }, ['sample_strategy: structure_and_key_files → sample_strategy: ranked']);
  });
  test('max_files, per-file limits and sample_extensions', () => {
    expectCanonical('limits', { sample_limit: 6, max_lines_per_file: 120, max_chars_per_file: 3000, extensions: ['.json', '.ts'] }, ['max_files → sample_limit', 'sample_extensions → extensions']);
  });
  test('two count keys that disagree are an issue naming the second', () => {
    const r = load('limits_disagree');
    assert.equal(r.issues.length, 1, r.issues.join('; '));
    assert.match(r.issues[0], /inputs\.sample_count: "sample_count" and "sample_limit" are both given with different values/);
  });
  test('per_file_chars, prefer_keywords, max_evidence_chars', () => {
    expectCanonical('per_file', { max_chars_per_file: 3500, prefer_keywords: ['email'], max_evidence_chars: 35000 }, ['per_file_chars → max_chars_per_file']);
  });
  test('scan_patterns → fallback_files; sample_count → sample_limit; accepted_file_extensions → extensions on code, a note elsewhere', () => {
    expectCanonical('scan', { fallback_files: ['app/**/*.rb'], sample_limit: 5, extensions: ['.rb'] }, ['scan_patterns → fallback_files', 'sample_count → sample_limit', 'accepted_file_extensions → extensions']);
    const dom = expectCanonical('extensions_on_dom', { evidence_type: 'rendered_dom' }, ['accepted_file_extensions → notes']);
    assert.deepEqual(dom.notes, { _accepted_file_extensions: ['.rb'] });
  });
  test('_glob_mode and _strict_json are read (not left as notes)', () => {
    const r = expectCanonical('globs_strict', { glob_mode: true, strict_json: true }, ['_glob_mode → glob_mode', '_strict_json → strict_json']);
    assert.equal(r.notes, undefined);
  });
  test('aoiwqoiq\'s step is canonical apart from code_files', () => {
    expectCanonical('aoiwqoiq', { evidence_type: 'codebase', evidence_source: 'codebase', prompt: 'Look for serializers.', sample_limit: 18, retry_on_parse_error: true }, ['evidence_type: code_files → evidence_type: codebase']);
  });
  test('no evidence_type: the codebase', () => {
    const r = expectCanonical('no_evidence_type', { files_to_sample: ['/app/server/policies/'] }, []);
    assert.equal(r.inputs.evidence_type, undefined);
  });
});

describe('P17 dialect: pages and requests of the judge step', () => {
  test('focus_paths stay; api_probe_url → http_get evidence beside the code', () => {
    expectCanonical('focus_probe', { evidence_type: ['codebase', 'http_get'], http_get: ['{{API_V3_PREFIX}}/content'], focus_paths: ['/app/server/controllers/content.js'] }, ['api_probe_url → http_get + evidence http_get']);
  });
  test('fallback_files beside a page → files shown with the DOM; url → pages', () => {
    expectCanonical('fallback_dom', { evidence_type: ['rendered_dom', 'codebase'], files_to_sample: ['/app/client/src/components/tasks'], pages: ['/'] }, ['fallback_files (beside a page) → files_to_sample + evidence codebase', 'url → pages']);
  });
  test('urls_to_sample → pages', () => {
    expectCanonical('urls', { evidence_type: 'screenshot', pages: ['/login', '/files'] }, ['urls_to_sample → pages']);
  });
  test('url on code evidence is an issue', () => {
    const r = load('url_on_code');
    assert.deepEqual(r.issues, ['nodes[0].primitive_chain[0].inputs.url: url needs screenshot or rendered_dom evidence']);
  });
});
