import type { CanonicalStep, DialectContext, StepDialect } from './types';
import { copy, isObject, rename, type Inputs } from './util';

/**
 * P17 (llm_judge) as the published tasks spell it. The evaluators were forks, so one spelling can
 * name different evidence per task (jtbxfpny's `http_response_body` is every response of the node,
 * lzdugafl's the last one) and some evidence depends on the chain (rjhcjrst's `rendered_dom` with no
 * browser step is the HTML its request returned). Facts per task are in docs/compatibility.md.
 */

/** Step types whose run leaves a browser page (DOM / screenshot) in the chain. */
const CAPTURES = new Set(['SCREENSHOT', 'RENDER_DOM', 'P18', 'BROWSER_INTERACT']);
/** Step types that record an HTTP response as the chain's last. */
const REQUESTS = new Set(['P04', 'P05', 'P14', 'P23', 'P27']);

function priorTypes(ctx: DialectContext): string[] {
  const chain = ctx.chain ?? [];
  return chain.slice(0, ctx.index ?? chain.length).map((s) => (isObject(s) ? String(s.type ?? s.primitive ?? '').toUpperCase() : ''));
}

interface Mapped {
  kinds: string[];
  meaning: string;
}

/** What a published evidence_type names, for this task and chain. */
function mapEvidence(value: string, ctx: DialectContext): Mapped | null {
  const prior = priorTypes(ctx);
  const captured = prior.some((t) => CAPTURES.has(t));
  const requested = prior.some((t) => REQUESTS.has(t));
  switch (value) {
    case 'code_files':
      return { kinds: ['codebase'], meaning: 'workspace files (a listing and sampled files)' };
    case 'code_files_and_config':
      return { kinds: ['codebase'], meaning: 'workspace files and config files (files_to_sample names them; absolute paths are read from the app container)' };
    case 'frontend_code_and_dom':
      return captured
        ? { kinds: ['codebase', 'rendered_dom'], meaning: 'frontend files and the DOM the chain rendered' }
        : { kinds: ['codebase'], meaning: 'frontend files (the chain renders no page and the step names none, so no DOM: the published judge also read files only)' };
    case 'rendered_dom':
      if (!captured && requested) return { kinds: ['last_response'], meaning: 'no browser step in the chain: the HTML its last request returned (the published judge read rendered_dom, else the last body)' };
      return null;
    case 'page_html':
      return { kinds: ['rendered_dom'], meaning: 'the page the chain\'s browser step left (URL, sanitized HTML)' };
    case 'http_response_body':
      if (ctx.task === 'jtbxfpny') return { kinds: ['chain_responses'], meaning: 'every response of the chain (jtbxfpny\'s judge read the node\'s response log)' };
      return { kinds: ['last_response'], meaning: 'the chain\'s last response' };
    case 'http_response_html':
    case 'http_response_json':
    case 'api_response':
      return { kinds: ['last_response'], meaning: 'the chain\'s last response' };
    case 'http_response_payload':
    case 'http_responses':
    case 'multi_endpoint_responses':
      return { kinds: ['chain_responses'], meaning: 'every response recorded in the chain, in order' };
    case 'api_responses':
      return requested
        ? { kinds: ['chain_responses'], meaning: 'every response recorded in the chain, in order' }
        : { kinds: ['prereq_responses'], meaning: 'the responses the node\'s prerequisites recorded (the published judge read a run-wide response list)' };
    case 'http_response_headers':
      return { kinds: ['response_headers'], meaning: 'the headers of the chain\'s last response (cookie values redacted)' };
    case 'db_query_result':
      return { kinds: ['sql_result'], meaning: 'the chain\'s last SQL result' };
    case 'logs':
    case 'container_logs': {
      const producer = [...prior].reverse().find((t) => t === 'P12' || t === 'P21');
      return producer === 'P12'
        ? { kinds: ['command_output'], meaning: 'the output of the chain\'s command (P12), e.g. docker logs' }
        : { kinds: ['log_tail'], meaning: 'the log tail the chain\'s P21 kept' };
    }
    default:
      return null;
  }
}

/** Named published strategies: the evaluators that had them ranked files by the rubric (gmdnohlg, ychlukjm) or ignored the name. */
const RANKED = ['structure_and_key_files', 'controllers_and_serializers', 'auth_and_resource_boundaries', 'layout_and_styles', 'state_and_boundary_views'];

/** Move a count key onto sample_limit; two keys that disagree are an issue. */
function toLimit(inputs: Inputs, key: string, ctx: DialectContext, meaning: string): void {
  if (!(key in inputs)) return;
  rename(inputs, key, 'sample_limit', ctx, meaning);
}

function scaleOf(text: string): [number, number] | undefined {
  const anchors = [...text.matchAll(/(?:^|[;,.\n]\s*)(\d+)\s*=/g)].map((m) => Number(m[1]));
  return anchors.length >= 2 ? [Math.min(...anchors), Math.max(...anchors)] : undefined;
}

export const judgeDialect: StepDialect = {
  types: ['P17'],
  normalize(_type: string, raw: Inputs, ctx: DialectContext): CanonicalStep {
    const inputs = copy(raw);

    // the rubric
    if (typeof inputs.scoring_rubric === 'string') {
      const text = inputs.scoring_rubric;
      delete inputs.scoring_rubric;
      const scale = scaleOf(text);
      inputs.scoring_guide = { text, ...(scale ? { scale } : {}) };
      ctx.spelling('scoring_rubric', 'scoring_guide', 'an anchored scoring guide appended to the rubric (its own scale, when it differs, is mapped onto score_range)');
    }
    rename(inputs, 'evaluation_criteria', 'criteria', ctx, 'the criteria the judge scores along, appended to the rubric');

    // the evidence
    let kinds: string[] | undefined;
    if (typeof inputs.evidence_type === 'string') {
      const m = mapEvidence(inputs.evidence_type, ctx);
      if (m) {
        kinds = m.kinds;
        ctx.spelling(`evidence_type: ${inputs.evidence_type}`, `evidence_type: ${m.kinds.join(' + ')}`, m.meaning);
      } else kinds = [inputs.evidence_type];
    }
    const all = kinds ?? (typeof inputs.evidence_source === 'string' ? [inputs.evidence_source] : ['codebase']);
    const has = (k: string) => all.includes(k) || (k === 'codebase' && all.includes('code_files'));
    const visual = has('screenshot') || has('rendered_dom');

    if (Array.isArray(inputs.files_to_sample) && inputs.files_to_sample.length === 0) {
      delete inputs.files_to_sample;
      ctx.spelling('files_to_sample: []', '(absent)', has('codebase') ? 'no entries: the whole workspace is sampled' : 'no files: this evidence samples none');
    }
    if ('fallback_files' in inputs && visual && !has('codebase')) {
      all.push('codebase');
      rename(inputs, 'fallback_files', 'files_to_sample', ctx, 'source files shown beside the page (qmjfeopc\'s judge also showed them instead of a page it found unusable; here the page is judged as rendered)', 'inputs', 'fallback_files (beside a page)', 'files_to_sample + evidence codebase');
    }
    if (Array.isArray(inputs.files_to_sample) && inputs.files_to_sample.length && !has('codebase') && (visual || has('response_headers'))) {
      all.push('codebase');
      ctx.spelling('files_to_sample (beside a page or headers)', 'files_to_sample + evidence codebase', 'source files shown beside the page or headers (gavmyneb\'s judge read them beside headers, and instead of a DOM under 200 characters)');
    }
    if (Array.isArray(inputs.evidence_paths)) {
      const paths = inputs.evidence_paths.filter((p): p is string => typeof p === 'string');
      delete inputs.evidence_paths;
      const json = paths.filter((p) => p.startsWith('$'));
      const files = paths.filter((p) => !p.startsWith('$'));
      if (json.length) {
        inputs.response_paths = json;
        if (!all.includes('last_response')) all.push('last_response');
        ctx.spelling('evidence_paths: $.…', 'response_paths + evidence last_response', 'values of the chain\'s last response at these JSONPaths, shown beside the other evidence');
      }
      if (files.length) {
        inputs.files_to_sample = [...(Array.isArray(inputs.files_to_sample) ? inputs.files_to_sample : []), ...files];
        if (!has('codebase')) all.push('codebase');
        ctx.spelling('evidence_paths: files', 'files_to_sample', 'more workspace files or globs to sample');
      }
    }
    for (const k of ['url', 'urls_to_sample'] as const) {
      if (!(k in inputs)) continue;
      const v = inputs[k];
      delete inputs[k];
      const list = typeof v === 'string' ? [v] : v;
      if (!visual) ctx.issue(`inputs.${k}`, `${k} needs screenshot or rendered_dom evidence`);
      else if (inputs.pages !== undefined) ctx.issue(`inputs.${k}`, 'pages are named twice');
      else {
        inputs.pages = list;
        ctx.spelling(k, 'pages', 'the pages the judge sees: captured by the judge step unless the chain\'s last capture is that page');
      }
    }
    if ('api_probe_url' in inputs) {
      const v = inputs.api_probe_url;
      delete inputs.api_probe_url;
      inputs.http_get = typeof v === 'string' ? [v] : v;
      all.push('http_get');
      ctx.spelling('api_probe_url', 'http_get + evidence http_get', 'a GET the judge step sends in the chain\'s session; the response is evidence beside the files');
    }
    rename(inputs, 'base_dir', 'listing_root', ctx, 'the directory whose tree the judge sees');
    rename(inputs, 'depth', 'listing_depth', ctx, 'how many levels of the tree are listed');
    rename(inputs, 'api_path_filters', 'path_filters', ctx, 'keep the responses whose path contains one of these');
    rename(inputs, 'scan_patterns', 'fallback_files', ctx, 'globs sampled when files_to_sample yields no file');
    rename(inputs, '_glob_mode', 'glob_mode', ctx, 'every files_to_sample entry is a glob pattern');
    rename(inputs, '_strict_json', 'strict_json', ctx, 'only a JSON object reply is read (no prose fallbacks)');

    // sampling
    const s = inputs.sample_strategy;
    if (s === 'stratified_dirs') {
      inputs.sample_strategy = 'first';
      ctx.spelling('sample_strategy: stratified_dirs', 'sample_strategy: first', 'the listed directories taken round-robin (the canonical order), max_files_per_dir each');
    } else if (s === 'random_n') {
      inputs.sample_strategy = 'random';
      ctx.spelling('sample_strategy: random_n', 'sample_strategy: random', 'a pseudo-random sample seeded by the rubric and entries (the same on every run)');
    } else if (typeof s === 'string' && RANKED.includes(s)) {
      inputs.sample_strategy = 'ranked';
      ctx.spelling(`sample_strategy: ${s}`, 'sample_strategy: ranked', 'files ranked by relevance to the rubric, round-robin across areas');
    }
    toLimit(inputs, 'n', ctx, 'how many files are sampled');
    toLimit(inputs, 'max_files', ctx, 'how many files are sampled');
    toLimit(inputs, 'max_total_files', ctx, 'how many files are sampled');
    toLimit(inputs, 'sample_count', ctx, 'how many files are sampled (the published judge computed it and never applied it)');
    rename(inputs, 'per_file_chars', 'max_chars_per_file', ctx, 'each file is cut to this many characters');
    for (const k of ['sample_extensions', 'accepted_file_extensions']) {
      if (!(k in inputs)) continue;
      if (has('codebase')) rename(inputs, k, 'extensions', ctx, 'which files count when a directory is walked');
      else {
        inputs[`_${k}`] = inputs[k];
        delete inputs[k];
        ctx.spelling(k, 'notes', 'kept as a note: this evidence samples no files');
      }
    }

    if (kinds || all.length > 1) {
      const uniq = [...new Set(all)];
      inputs.evidence_type = uniq.length === 1 ? uniq[0] : uniq;
    }
    return { type: 'P17', inputs };
  },
};
