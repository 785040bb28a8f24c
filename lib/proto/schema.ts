/**
 * Runtime protobuf schema of platform.v1, loaded with protobufjs from `proto/platform/v1/*.proto` (edition 2023).
 *
 * Two roots are offered over the same files:
 * - `snakeRoot()` keeps the field names as written (`keepCase: true`, e.g. `partition_ref`). Used for storage (the
 *   build event log) and for our snake_case JSON API. `schema` exposes its types.
 * - `canonicalRoot()` uses protobufjs' default camelCase field names (`partitionRef`), the names of canonical proto3
 *   JSON, for the Connect RPC binding. `canonicalSchema` exposes its types.
 *
 * Both produce and accept the same binary wire format. Roots are loaded synchronously on first use and cached.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import type { Enum, Root, Service, Type } from 'protobufjs';
import { errorMessage } from '../errors.js';

export type { Enum, Root, Service, Type };

/** The .proto files of the schema, relative to {@link protoDir}. Imports between them resolve against that dir. */
export const PROTO_FILES: readonly string[] = ['platform/v1/platform.proto', 'platform/v1/events.proto'];

/** Fully qualified name of the RPC service. */
export const PLATFORM_SERVICE = 'platform.v1.PlatformService';

let cachedPackageRoot: string | undefined;

/** The package root: the nearest ancestor directory of this module that holds a package.json. */
export function packageRoot(): string {
  if (cachedPackageRoot !== undefined) return cachedPackageRoot;
  const start = path.dirname(fileURLToPath(import.meta.url));
  let dir = start;
  for (;;) {
    if (existsSync(path.join(dir, 'package.json'))) {
      cachedPackageRoot = dir;
      return dir;
    }
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`no package.json found in ${start} or any of its ancestors`);
    dir = parent;
  }
}

/** The directory holding the .proto sources (`<package root>/proto`). */
export function protoDir(): string {
  return path.join(packageRoot(), 'proto');
}

function loadRoot(keepCase: boolean): Root {
  const dir = protoDir();
  const root = new protobuf.Root();
  // Imports such as "platform/v1/platform.proto" are relative to the proto dir, not to the importing file.
  // google/protobuf/*.proto common types are bundled with protobufjs and never reach resolvePath.
  root.resolvePath = (_origin: string, target: string): string =>
    path.isAbsolute(target) ? target : path.join(dir, target);
  try {
    root.loadSync([...PROTO_FILES], { keepCase });
    root.resolveAll();
  } catch (err) {
    const message = errorMessage(err);
    throw new Error(`cannot load protobuf schema from ${dir}: ${message}`, { cause: err });
  }
  return root;
}

let snake: Root | undefined;
let canonical: Root | undefined;

/** Root with field names as written in the .proto files (snake_case). Loaded once. */
export function snakeRoot(): Root {
  return (snake ??= loadRoot(true));
}

/** Root with protobufjs' default camelCase field names (canonical proto3 JSON names). Loaded once. */
export function canonicalRoot(): Root {
  return (canonical ??= loadRoot(false));
}

/** The reflected types of platform.v1. */
export interface PlatformSchema {
  readonly DepType: Enum;
  readonly DataDep: Type;
  readonly JobConfig: Type;
  readonly PartitionManifest: Type;
  readonly Task: Type;
  readonly JobGraph: Type;
  readonly JobConfigRequest: Type;
  readonly JobConfigResponse: Type;
  readonly GraphAnalyzeRequest: Type;
  readonly GraphAnalyzeResponse: Type;
  readonly BuildEvent: Type;
  readonly WantCreated: Type;
  readonly WantCanceled: Type;
  readonly JobRunQueued: Type;
  readonly JobRunStarted: Type;
  readonly JobRunSucceeded: Type;
  readonly JobRunFailed: Type;
  readonly JobRunCanceled: Type;
  readonly JobRunDepMissed: Type;
  readonly PartitionTainted: Type;
  readonly Timestamp: Type;
  readonly PlatformService: Service;
}

const MESSAGE_NAMES = [
  'DataDep',
  'JobConfig',
  'PartitionManifest',
  'Task',
  'JobGraph',
  'JobConfigRequest',
  'JobConfigResponse',
  'GraphAnalyzeRequest',
  'GraphAnalyzeResponse',
  'BuildEvent',
  'WantCreated',
  'WantCanceled',
  'JobRunQueued',
  'JobRunStarted',
  'JobRunSucceeded',
  'JobRunFailed',
  'JobRunCanceled',
  'JobRunDepMissed',
  'PartitionTainted',
] as const;

/** An object whose properties look the types up in `getRoot()` on first access, then keep them. */
function lazySchema(getRoot: () => Root): PlatformSchema {
  const target: Record<string, unknown> = {};
  const define = (name: string, lookup: (root: Root) => Enum | Type | Service): void => {
    Object.defineProperty(target, name, {
      enumerable: true,
      configurable: true,
      get() {
        const value = lookup(getRoot());
        Object.defineProperty(target, name, { value, enumerable: true, writable: false, configurable: false });
        return value;
      },
    });
  };
  define('DepType', (root) => root.lookupEnum('platform.v1.DepType'));
  for (const name of MESSAGE_NAMES) define(name, (root) => root.lookupType(`platform.v1.${name}`));
  define('Timestamp', (root) => root.lookupType('google.protobuf.Timestamp'));
  define('PlatformService', (root) => root.lookupService(PLATFORM_SERVICE));
  return target as unknown as PlatformSchema;
}

/** Types of the snake_case root (storage, JSON API). */
export const schema: PlatformSchema = lazySchema(snakeRoot);

/** Types of the camelCase root (canonical proto3 JSON, Connect RPCs). */
export const canonicalSchema: PlatformSchema = lazySchema(canonicalRoot);

/** The `platform.v1.PlatformService` service of the given root (default: the canonical camelCase root). */
export function platformService(root: Root = canonicalRoot()): Service {
  return root.lookupService(PLATFORM_SERVICE);
}
