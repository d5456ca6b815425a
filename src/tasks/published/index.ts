export { loadPublishedTask, type PublishedFiles, type PublishedLoadResult } from './load';
export { isPublishedLayout, promptSection, publishedPaths, defaultDag } from './layout';
export { rewritePublishedCompose, WORKSPACE_VOLUME } from './compose';
export { parseTestUsers, userVariables, parseAuthHeaders } from './settings';
export { loadPackEntry, packDir, PackEntrySchema, type PackEntry } from './pack';
export { normalizePublishedDag, spellingTable } from './dialect';
