import { P01 } from './p01-file-exists';
import { P02 } from './p02-file-content-match';
import { P03 } from './p03-file-count';
import { P04 } from './p04-http-request';
import { P06 } from './p06-json-schema-match';
import { P07 } from './p07-json-value-assert';
import { P08 } from './p08-db-query';
import { P09 } from './p09-db-table-exists';
import { P10 } from './p10-db-column-check';
import { P12 } from './p12-docker-exec';
import { P15 } from './p15-status-code-assert';
import type { Primitive } from './types';

/** Every primitive saasbench runs. Adding one = one module + one line here. */
export const CATALOGUE: Primitive[] = [P01, P02, P03, P04, P06, P07, P08, P09, P10, P12, P15] as Primitive[];
