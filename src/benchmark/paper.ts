/**
 * The published SaaSBench benchmark as the paper (arXiv 2605.17526) describes it: the figures
 * `benchmark stats` sets beside what it counts in the task folders, and the 30 task ids of the
 * published repository (ShadeCloak/SaaSbench, eval/task_<id>/).
 */
export const PAPER = {
  tasks: 30,
  nodes: 5370,
  totalMaxScore: 17299.1,
  perTaskMaxScore: { min: 174, max: 1489 },
  /** share of the total maxScore per backbone that the paper states */
  backboneShare: { Logic: 27.2, Deploy: 3.7 } as Record<string, number>,
};

export const PUBLISHED_TASK_IDS = [
  'aoiwqoiq', 'cqfnbfay', 'cvyocaao', 'dfhjkeb', 'egsszeqg', 'fpumriig', 'gavmyneb', 'ghmkznee', 'gmdnohlg', 'hhrdixum',
  'ididetxj', 'iyjruvfz', 'jtbxfpny', 'jzssnoqp', 'kmasmnil', 'lgzivily', 'lzdugafl', 'mjobbzsi', 'mnmtxiwb', 'orghjavi',
  'pkvwdnhj', 'qmjfeopc', 'rjhcjrst', 'sgdoserd', 'ubsmhopy', 'uybznoms', 'xayqujrv', 'ychlukjm', 'ygamciur', 'yobgvieg',
] as const;
