/**
 * The dependency rules `npm run lint` (and so `npm test`) checks. docs/architecture.md explains
 * the layering they protect.
 */
module.exports = {
  forbidden: [
    {
      name: 'no-folder-cycles',
      comment: 'folders of src/ depend on each other in one direction only (docs/architecture.md "Layers")',
      severity: 'error',
      scope: 'folder',
      from: { path: '^src/' },
      to: { path: '^src/', circular: true },
    },
    {
      name: 'model-imports-nothing-of-ours',
      comment: 'src/model holds the shared shapes (zod and types); every layer may import it, it imports none',
      severity: 'error',
      from: { path: '^src/model/' },
      to: { path: '^src/', pathNot: '^src/model/' },
    },
    {
      name: 'workflows-stay-deterministic',
      comment: 'workflow code is replayed: it reaches the outside only through activities (type-only imports are erased)',
      severity: 'error',
      from: { path: '^src/workflows/' },
      to: { path: '^src/(activities|sandbox|agents|primitives|judge|runs|security|temporal|worker|cli|tasks|evaluation|report|benchmark|http)/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'no-module-cycles',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
