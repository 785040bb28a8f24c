import type { DataDep, DepType, JobConfig } from '../events/build-event.js';

/**
 * Pure parsing of a config program's `JobConfigResponse` JSON into fully-filled `JobConfig`s.
 *
 * Accepts both the snake_case field names of the proto and proto3 canonical JSON (lowerCamelCase), enum values as
 * names or numbers, and omitted or null fields as their defaults (proto3 JSON leaves defaults out). Unknown fields are
 * rejected, as a stock proto3 JSON parser does, so that a typo such as "input" does not silently drop inputs.
 */

export class JobConfigResponseError extends Error {
  override readonly name = 'JobConfigResponseError';
}

const DEP_TYPE_BY_NUMBER: readonly DepType[] = ['QUERY', 'MATERIALIZE'];

export function parseJobConfigResponse(value: unknown): JobConfig[] {
  const top = object(value, '');
  checkKeys(top, ['configs'], '');
  const configs = top.configs;
  if (configs === undefined || configs === null) return [];
  if (!Array.isArray(configs)) throw bad('configs', 'must be an array of JobConfig objects', configs);
  return configs.map((c, i) => normalizeJobConfig(c, `configs[${i}]`));
}

export function normalizeJobConfig(value: unknown, at: string): JobConfig {
  const c = object(value, at);
  checkKeys(c, ['outputs', 'inputs', 'args', 'env'], at);
  const inputs = c.inputs;
  const out: JobConfig = {
    outputs: strings(c.outputs, `${at}.outputs`),
    inputs: [],
    args: strings(c.args, `${at}.args`),
    env: {},
  };
  if (inputs !== undefined && inputs !== null) {
    if (!Array.isArray(inputs)) throw bad(`${at}.inputs`, 'must be an array of DataDep objects', inputs);
    out.inputs = inputs.map((d, k) => dataDep(d, `${at}.inputs[${k}]`));
  }
  if (c.env !== undefined && c.env !== null) {
    const env = object(c.env, `${at}.env`);
    for (const [key, v] of Object.entries(env)) {
      if (typeof v !== 'string') throw bad(`${at}.env.${key}`, 'must be a string', v);
      out.env[key] = v;
    }
  }
  return out;
}

function dataDep(value: unknown, at: string): DataDep {
  const d = object(value, at);
  checkKeys(d, ['dep_type', 'depType', 'partition_ref', 'partitionRef'], at);
  const ref = d.partition_ref ?? d.partitionRef;
  if (typeof ref !== 'string' || ref.length === 0) throw bad(`${at}.partition_ref`, 'must be a non-empty string', ref);
  const raw = d.dep_type ?? d.depType;
  let depType: DepType;
  if (raw === undefined || raw === null) depType = 'QUERY'; // proto default (QUERY = 0), omitted by proto3 JSON
  else if (typeof raw === 'number' && DEP_TYPE_BY_NUMBER[raw] !== undefined) depType = DEP_TYPE_BY_NUMBER[raw]!;
  else if (raw === 'QUERY' || raw === 'MATERIALIZE') depType = raw;
  else throw bad(`${at}.dep_type`, 'must be "QUERY" (0) or "MATERIALIZE" (1)', raw);
  return { dep_type: depType, partition_ref: ref };
}

function object(value: unknown, at: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw bad(at || 'the response', 'must be a JSON object', value);
  }
  return value as Record<string, unknown>;
}

function strings(value: unknown, at: string): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw bad(at, 'must be an array of strings', value);
  value.forEach((v, k) => {
    if (typeof v !== 'string') throw bad(`${at}[${k}]`, 'must be a string', v);
  });
  return [...(value as string[])];
}

function checkKeys(obj: Record<string, unknown>, allowed: readonly string[], at: string): void {
  for (const key of Object.keys(obj)) {
    if (!allowed.includes(key)) {
      throw new JobConfigResponseError(
        `${at ? `${at}: ` : ''}unknown field ${JSON.stringify(key)} (expected one of ${allowed.join(', ')})`,
      );
    }
  }
}

function bad(at: string, what: string, got: unknown): JobConfigResponseError {
  let shown = JSON.stringify(got) ?? String(got);
  if (shown.length > 80) shown = `${shown.slice(0, 77)}...`;
  return new JobConfigResponseError(`${at} ${what}, not ${shown}`);
}
