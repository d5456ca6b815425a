// Two zod layers: `Raw*` accepts exactly the compose subset saasbench supports (strict objects, so
// any other key is rejected with the list of supported ones), and the normalized schemas describe
// what the rest of the sandbox consumes. Normalized values are plain JSON (they can travel through
// Temporal payloads).
import { z } from 'zod';

/** A strict object whose unknown-key error names the key and the supported alternatives. */
function strict<T extends z.ZodRawShape>(shape: T, where: string) {
  const keys = Object.keys(shape).join(', ');
  return z.strictObject(shape, {
    error: (iss) =>
      iss.code === 'unrecognized_keys'
        ? `key "${iss.keys[0]}" is not supported by saasbench in ${where} (supported: ${keys})`
        : undefined,
  });
}

const str = (what: string) => z.string({ error: `must be a string (${what})` });
const StrOrList = z.union([z.string(), z.array(z.string())], { error: 'must be a string or a list of strings' });
const Scalar = z.union([z.string(), z.number(), z.boolean(), z.null()], { error: 'must be a scalar value' });
const MapOrList = z.union([z.record(z.string(), Scalar), z.array(z.string())], {
  error: 'must be a map or a list of "KEY=VALUE" strings',
});
const Duration = z.string({ error: 'must be a duration string such as "5s" or "1m30s"' });

const RawHealthcheck = strict(
  {
    test: z.union([z.string(), z.array(z.string()).min(1)], { error: 'must be a string or a non-empty list' }).optional(),
    interval: Duration.optional(),
    timeout: Duration.optional(),
    start_period: Duration.optional(),
    start_interval: Duration.optional(),
    retries: z.number({ error: 'must be a non-negative integer' }).int().nonnegative().optional(),
    disable: z.boolean({ error: 'must be true or false' }).optional(),
  },
  'a healthcheck',
);

const RawBuild = z.union(
  [
    z.string(),
    strict(
      {
        context: str('build context path').optional(),
        dockerfile: str('Dockerfile path').optional(),
        args: MapOrList.optional(),
      },
      'build',
    ),
  ],
  { error: 'must be a context path or {context, dockerfile, args}' },
);

const RawPort = z.union(
  [
    z.string(),
    z.number(),
    strict(
      {
        target: z.number({ error: 'must be a port number' }).int(),
        published: z.union([z.string(), z.number()]).optional(),
        protocol: z.enum(['tcp', 'udp'], { error: 'must be tcp or udp' }).optional(),
        host_ip: z.string().optional(),
        mode: z.literal('host', { error: 'only mode "host" is supported' }).optional(),
        name: z.string().optional(),
      },
      'a port',
    ),
  ],
  { error: 'must be a port string, a number or {target, published, protocol}' },
);

const RawVolumeMount = z.union(
  [
    z.string(),
    strict(
      {
        type: z.enum(['volume', 'bind'], { error: 'must be "volume" or "bind"' }),
        source: z.string().optional(),
        target: z.string({ error: 'must be an absolute container path' }),
        read_only: z.boolean().optional(),
      },
      'a volume mount',
    ),
  ],
  { error: 'must be "source:target[:ro]" or {type, source, target, read_only}' },
);

export const DEPENDENCY_CONDITIONS = ['service_started', 'service_healthy', 'service_completed_successfully'] as const;

const RawDependsOn = z.union(
  [
    z.array(z.string()),
    z.record(
      z.string(),
      z.union([
        z.null(),
        strict(
          {
            condition: z.enum(DEPENDENCY_CONDITIONS, { error: `must be one of ${DEPENDENCY_CONDITIONS.join(', ')}` }).optional(),
            restart: z.boolean().optional(),
            required: z.boolean().optional(),
          },
          'depends_on',
        ),
      ]),
    ),
  ],
  { error: 'must be a list of service names or a map of service -> {condition}' },
);

/**
 * A service's networks. Every service of a rollout joins the rollout's one bridge, so the names only
 * matter for their aliases; fixed addresses cannot be honoured on a per-rollout network.
 */
const RawServiceNetworks = z.union(
  [
    z.array(z.string()),
    z.record(
      z.string(),
      z.union([
        z.null(),
        strict(
          {
            aliases: z.array(z.string(), { error: 'must be a list of host names' }).optional(),
            priority: z.number().optional(),
          },
          'a service network (one network per rollout: fixed addresses are not supported)',
        ),
      ]),
    ),
  ],
  { error: 'must be a list of network names or a map of network -> {aliases}' },
);

export const PULL_POLICIES = ['always', 'missing', 'if_not_present', 'never', 'build'] as const;

const RawUlimit = z.union([
  z.number().int(),
  strict({ soft: z.number().int(), hard: z.number().int() }, 'an ulimit'),
]);

export const RawService = strict(
  {
    image: str('image reference').optional(),
    build: RawBuild.optional(),
    environment: MapOrList.optional(),
    env_file: StrOrList.optional(),
    ports: z.array(RawPort, { error: 'must be a list' }).optional(),
    volumes: z.array(RawVolumeMount, { error: 'must be a list' }).optional(),
    depends_on: RawDependsOn.optional(),
    healthcheck: RawHealthcheck.optional(),
    command: z.union([z.string(), z.array(z.string()), z.null()], { error: 'must be a string or a list' }).optional(),
    entrypoint: z.union([z.string(), z.array(z.string()), z.null()], { error: 'must be a string or a list' }).optional(),
    working_dir: str('absolute path').optional(),
    tmpfs: StrOrList.optional(),
    container_name: z.string().optional(),
    restart: z.string().optional(),
    stdin_open: z.boolean({ error: 'must be true or false' }).optional(),
    tty: z.boolean({ error: 'must be true or false' }).optional(),
    init: z.boolean({ error: 'must be true or false' }).optional(),
    dns: StrOrList.optional(),
    hostname: z.string().optional(),
    user: z.union([z.string(), z.number()]).optional(),
    labels: MapOrList.optional(),
    extra_hosts: MapOrList.optional(),
    shm_size: z.union([z.string(), z.number()]).optional(),
    ulimits: z.record(z.string(), RawUlimit).optional(),
    networks: RawServiceNetworks.optional(),
    pull_policy: z.enum(PULL_POLICIES, { error: `must be one of ${PULL_POLICIES.join(', ')}` }).optional(),
    /** documentation only: every port of a service is reachable on the rollout's network */
    expose: z.array(z.union([z.string(), z.number()]), { error: 'must be a list of ports' }).optional(),
  },
  'a service',
);

export const RawCompose = strict(
  {
    version: z.union([z.string(), z.number()]).optional(),
    name: z.string().optional(),
    services: z.record(z.string(), RawService, { error: 'must be a map of service name -> service' }),
    volumes: z
      .record(
        z.string(),
        z.union(
          [
            z.null(),
            strict(
              {
                driver: z.literal('local', { error: 'only the "local" driver is supported (volumes are created per rollout)' }).optional(),
                name: z.string().optional(),
                labels: MapOrList.optional(),
              },
              'a top-level volume (per-rollout local volumes: no driver_opts, no external volumes)',
            ),
          ],
          { error: 'must be empty or {driver: local, name}' },
        ),
      )
      .optional(),
    networks: z
      .record(
        z.string(),
        z.union(
          [
            z.null(),
            strict(
              {
                driver: z
                  .literal('bridge', { error: 'only "bridge" is supported: every network maps onto the rollout\'s own bridge (never the host\'s network)' })
                  .optional(),
                name: z.string().optional(),
                internal: z.boolean().optional(),
                labels: MapOrList.optional(),
              },
              'a top-level network (every network maps onto the rollout\'s own bridge: no external or host networks, no IPAM)',
            ),
          ],
          { error: 'must be empty or {driver: bridge, name}' },
        ),
      )
      .optional(),
  },
  'the top level',
);

// ---- normalized ----------------------------------------------------------------------------

export const HealthcheckSpec = z.object({
  /** Docker's form: ["CMD", ...], ["CMD-SHELL", "..."] or ["NONE"]. */
  test: z.array(z.string()).optional(),
  intervalNs: z.number().optional(),
  timeoutNs: z.number().optional(),
  startPeriodNs: z.number().optional(),
  startIntervalNs: z.number().optional(),
  retries: z.number().optional(),
});
export type HealthcheckSpec = z.infer<typeof HealthcheckSpec>;

export const MountSpec = z.discriminatedUnion('type', [
  z.object({ type: z.literal('volume'), source: z.string(), target: z.string(), readOnly: z.boolean() }),
  /** `source` is an absolute host path. */
  z.object({ type: z.literal('bind'), source: z.string(), target: z.string(), readOnly: z.boolean() }),
  z.object({ type: z.literal('anonymous'), target: z.string() }),
]);
export type MountSpec = z.infer<typeof MountSpec>;

export const ServiceSpec = z.object({
  name: z.string(),
  image: z.string().optional(),
  build: z
    .object({
      /** Absolute directory. */
      context: z.string(),
      /** Absolute path of the Dockerfile (may lie outside the context). */
      dockerfile: z.string(),
      args: z.record(z.string(), z.string()),
    })
    .optional(),
  environment: z.record(z.string(), z.string()),
  ports: z.array(z.object({ target: z.number(), protocol: z.enum(['tcp', 'udp']) })),
  mounts: z.array(MountSpec),
  dependsOn: z.record(z.string(), z.enum(DEPENDENCY_CONDITIONS)),
  /** `null` = compose `disable: true` (overrides any image HEALTHCHECK). */
  healthcheck: HealthcheckSpec.nullable().optional(),
  command: z.array(z.string()).optional(),
  entrypoint: z.array(z.string()).optional(),
  workingDir: z.string().optional(),
  tmpfs: z.record(z.string(), z.string()),
  stdinOpen: z.boolean(),
  tty: z.boolean(),
  /** Defaults to true: PID 1 must reap the detached processes the harness starts. */
  init: z.boolean(),
  dns: z.array(z.string()),
  hostname: z.string().optional(),
  user: z.string().optional(),
  labels: z.record(z.string(), z.string()),
  extraHosts: z.array(z.string()),
  shmSize: z.number().optional(),
  ulimits: z.array(z.object({ name: z.string(), soft: z.number(), hard: z.number() })),
  /** extra DNS names on the rollout network (compose `networks.<n>.aliases`); the service name always resolves */
  aliases: z.array(z.string()).default([]),
  /** compose `pull_policy` (unset: an `image` is used when present, pulled when not, built when it has a `build`) */
  pullPolicy: z.enum(PULL_POLICIES).optional(),
});
export type ServiceSpec = z.infer<typeof ServiceSpec>;

export const ComposeProject = z.object({
  name: z.string().optional(),
  /** Absolute path of the compose file and its directory. */
  file: z.string(),
  dir: z.string(),
  services: z.record(z.string(), ServiceSpec),
  volumes: z.record(z.string(), z.object({})),
  /** networks the file declares or uses; all of them are the rollout's one bridge */
  networks: z.array(z.string()).default([]),
  /** Topological start order (dependencies first). */
  order: z.array(z.string()),
  /** Non-fatal findings: unset variables, ignored keys. */
  warnings: z.array(z.string()),
});
export type ComposeProject = z.infer<typeof ComposeProject>;
