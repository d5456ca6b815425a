import type { DialectContext, StepDialect } from './types';
import { copy, isObject, rename, type Inputs } from './util';

/**
 * Published spellings of the schema primitives P09 (tables), P10 (columns), P11 (indexes),
 * including MongoDB collections (ygamciur). Facts: sgdoserd's P11 `expected_columns` +
 * `unique_required` ask for one (unique) index covering those columns; lgzivily's P09
 * `weighted: true` asks for credit proportional to the tables present (its node description).
 */
function p09(inputs: Inputs, ctx: DialectContext): Inputs {
  if ('weighted' in inputs) {
    const v = inputs.weighted;
    delete inputs.weighted;
    if (typeof v !== 'boolean') ctx.issue('inputs.weighted', 'must be true or false');
    else if (v) {
      inputs.partial = true;
      ctx.spelling('P09 weighted: true', 'partial: true', 'proportional credit for the fraction of tables present (reported as data.fraction)');
    }
  }
  return inputs;
}

function p10(inputs: Inputs, ctx: DialectContext): Inputs {
  rename(inputs, 'expected_fields', 'expected_columns', ctx, 'fields every document of the collection may have (read from sampled documents)');
  rename(inputs, 'schema_introspect_fallback', 'schema_fallback', ctx, 'a field absent from the sampled documents may be declared in the collection\'s $jsonSchema validator');
  rename(inputs, 'column_type_check', 'types', ctx, 'column → the type its declaration must contain');
  if (Array.isArray(inputs.expected_columns) && inputs.expected_columns.length === 0 && inputs.types !== undefined) {
    delete inputs.expected_columns;
    ctx.spelling('expected_columns: [] beside column_type_check', 'types', 'the columns to check are the typed ones');
  }
  return inputs;
}

function p11(inputs: Inputs, ctx: DialectContext): Inputs {
  if ('column' in inputs) {
    const c = inputs.column;
    delete inputs.column;
    if (typeof c !== 'string') ctx.issue('inputs.column', 'must be a column name');
    else {
      if (inputs.expected_columns === undefined && inputs.columns === undefined) inputs.columns = [c];
      else ctx.issue('inputs.column', 'column beside columns / expected_columns');
      ctx.spelling('P11 column', 'expected_indexes: [{columns: [column]}]', 'an index whose first key column is this');
    }
  }
  if ('is_unique' in inputs) {
    if ('unique_required' in inputs) ctx.issue('inputs.is_unique', 'is_unique beside unique_required');
    else inputs.unique_required = inputs.is_unique;
    delete inputs.is_unique;
    ctx.spelling('is_unique', 'expected_indexes[].unique', 'the index must be unique');
  }
  if (Array.isArray(inputs.expected_indexes)) {
    inputs.expected_indexes = inputs.expected_indexes.map((spec, i) => {
      if (Array.isArray(spec)) {
        ctx.spelling('expected_indexes: [[col, …]]', 'expected_indexes: [{columns}]', 'an index whose leading key columns are these, in order');
        return { columns: spec };
      }
      if (isObject(spec) && 'fields' in spec) {
        const s = copy(spec);
        rename(s, 'fields', 'columns', ctx, 'the index key fields, in order', `inputs.expected_indexes[${i}]`, 'expected_indexes[].fields', 'expected_indexes[].columns');
        return s;
      }
      return spec;
    });
  }
  if (inputs.expected_columns !== undefined || inputs.unique_required !== undefined || inputs.index_name !== undefined || inputs.columns !== undefined) {
    const cols = inputs.expected_columns ?? inputs.columns;
    const spec: Inputs = { columns: cols };
    if (inputs.unique_required === true) spec.unique = true;
    else if (inputs.unique_required !== undefined && inputs.unique_required !== false) ctx.issue('inputs.unique_required', 'must be true or false');
    if (inputs.index_name !== undefined) spec.name = inputs.index_name;
    if (inputs.expected_columns !== undefined) ctx.spelling('P11 expected_columns', 'expected_indexes: [{columns}]', 'an index whose leading key columns are these, in order');
    if (inputs.columns !== undefined) ctx.spelling('P11 columns', 'expected_indexes: [{columns}]', 'an index whose leading key columns are these, in order');
    if (inputs.unique_required !== undefined) ctx.spelling('unique_required', 'expected_indexes[].unique', 'the index must be unique');
    if (inputs.index_name !== undefined) ctx.spelling('index_name', 'expected_indexes[].name', 'the index must have this name (MySQL names the primary key PRIMARY)');
    if (inputs.expected_columns !== undefined && inputs.columns !== undefined) ctx.issue('inputs.columns', 'give expected_columns or columns, not both');
    delete inputs.expected_columns;
    delete inputs.columns;
    delete inputs.unique_required;
    delete inputs.index_name;
    if (cols === undefined) ctx.issue('inputs', 'an index name or uniqueness needs its columns');
    else inputs.expected_indexes = [...(Array.isArray(inputs.expected_indexes) ? inputs.expected_indexes : []), spec];
  }
  return inputs;
}

export const dbSchemaDialect: StepDialect = {
  types: ['P09', 'P10', 'P11'],
  normalize(type, raw, ctx) {
    const inputs = copy(raw);
    const out = type === 'P09' ? p09(inputs, ctx) : type === 'P10' ? p10(inputs, ctx) : p11(inputs, ctx);
    return { type, inputs: out };
  },
};
