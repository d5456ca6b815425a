// Public surface of the sandbox: compose loading, images, stacks, and container access.
export { loadCompose, jsonPath, type LoadComposeOptions } from './compose-load';
export { ComposeProject, ServiceSpec, MountSpec, HealthcheckSpec, DEPENDENCY_CONDITIONS } from './compose-schema';
export { parseDuration, parsePort, parseVolumeShort, parseByteSize, shellSplit, type PortSpec } from './compose-values';
export { interpolate, parseDotenv } from './interpolate';
export {
  SandboxError,
  ComposeError,
  SandboxInfraError,
  ImageMissingError,
  SandboxInputError,
} from './errors';
export { buildTag, imageExists, imageId } from './images';
export { buildImages, planImages, preflightImages, registryProblem, ImagePreflightError, type ServiceImagePlan, type BaseStatus, type PlanOptions } from './image-plan';
export { parseImageMap, checkImageMap, imageMapFromEnv, mapImage, canonicalRef, isImageRef, imageMapFlags, ImageMapError, type ImageMap } from './image-map';
export { baseImages, mapDockerfile, type BaseImage } from './dockerfile';
export { upStack, type UpStackOptions } from './stack-up';
export { StackHandle, findStack, downStack, listLabelledRollouts, labelledContainers, reapStacks } from './stack-state';
export { exec, execBytes, ExecResult, type ExecBytesResult, type ExecOptions } from './exec';
export { execDetached, type ExecDetachedOptions } from './exec-detached';
export { readFile, writeFiles, copyDirInto, type FileToWrite } from './files';
export { docker, setDockerClient, engineAnswers } from './client';
export type { SandboxBackend, OwnerOptions, SidecarSpec } from './backend';
export { createSandboxBackend, sandboxBackend, setSandboxBackend } from './factory';
export { dockerBackend } from './docker-backend';
export { dockerHostAddress, hostUrl } from './host';
export { LABEL, projectName, networkName, containerName, volumeName, RolloutKey } from './naming';
export {
  DEFAULT_AGENT_LIMITS,
  DEFAULT_SERVICE_LIMITS,
  DEFAULT_ISOLATION,
  dockerHostCpus,
  effectiveLimits,
  isolationPolicyIssues,
  stackIsolation,
  type ResourceLimits,
  type StackIsolation,
} from './isolation';
