import type { DataDep, DepType } from '../events/build-event.js';
import { defaultMaxConcurrentJobRuns, type BatchPolicy, type GraphDefinition, type JobDefinition, type RetentionPolicy } from './graph-definition.js';
import { GraphError } from './graph-error.js';
import { compileOutputPattern, type OutputPattern } from './output-pattern.js';
import { templateVariables } from './template.js';
import { parseSchedules } from './parse-schedules.js';
import { checkScheduleRefs } from './schedule-refs.js';
import { errorMessage } from '../errors.js';
import { CONTROL_CHARACTER, CONTROL_RANGES, quoted } from '../control-characters.js';

// `executor` is read by `platform serve` (where runs run), not by the graph.
const TOP_LEVEL_KEYS = ['max_concurrent_job_runs', 'jobs', 'schedules', 'executor', 'retention'] as const;
const JOB_KEYS = [
  'label',
  'outputs',
  'inputs',
  'args',
  'env',
  'exec',
  'config',
  'retries',
  'timeout_seconds',
  'max_concurrency',
  'version',
  'batch',
] as const;
const INPUT_KEYS = ['partition_ref', 'dep_type'] as const;
const DEP_TYPES: readonly DepType[] = ['QUERY', 'MATERIALIZE'];

/**
 * Validates a parsed `platform.json` and returns the graph with every default filled in. Strict on purpose: a
 * typo'd key, a wrong type or a template variable the outputs cannot provide is an error naming the file (`source`),
 * the job and the field (e.g. `jobs[1].args[0]`), rather than a surprise at build time.
 *
 * Throws GraphError `invalid_graph`.
 */
export function parseGraph(json: unknown, source = 'the job graph'): GraphDefinition {
  const fail = (path: string, message: string, jobs?: string[]): never => {
    throw new GraphError('invalid_graph', `${source}: ${path ? `${path}: ` : ''}${message}`, jobs ? { jobs } : {});
  };

  if (!isPlainObject(json)) {
    fail('', `the job graph must be a JSON object like {"jobs": [...]}, not ${describe(json)}.`);
  }
  const top = json as Record<string, unknown>;
  checkKeys(top, TOP_LEVEL_KEYS, '', 'top-level key', fail);

  let maxConcurrent = defaultMaxConcurrentJobRuns();
  if (top.max_concurrent_job_runs !== undefined) {
    const v = top.max_concurrent_job_runs;
    if (!isNonNegativeInteger(v) || v === 0) {
      fail('max_concurrent_job_runs', `must be a positive integer (got ${show(v)}); leave it out to use the number of CPUs.`);
    }
    maxConcurrent = v as number;
  }

  if (!Array.isArray(top.jobs)) {
    fail(
      'jobs',
      top.jobs === undefined
        ? 'missing: the graph needs a "jobs" array (it may be empty).'
        : `must be an array of job objects, not ${describe(top.jobs)}.`,
    );
  }
  const rawJobs = top.jobs as unknown[];

  const jobs: JobDefinition[] = [];
  const labelIndex = new Map<string, number>();
  rawJobs.forEach((raw, i) => {
    const at = `jobs[${i}]`;
    if (!isPlainObject(raw)) fail(at, `each job must be an object, not ${describe(raw)}.`);
    const obj = raw as Record<string, unknown>;

    // The label first, so that every later message can name the job.
    const label = obj.label;
    if (typeof label !== 'string' || label.length === 0) {
      fail(`${at}.label`, label === undefined ? 'missing: every job needs a "label".' : `must be a non-empty string, not ${show(label)}.`);
    }
    const name = label as string;
    if (name.trim() !== name || CONTROL_CHARACTER.test(name)) {
      fail(`${at}.label`, `${quoted(name)} has leading/trailing whitespace or control characters (${CONTROL_RANGES}); use a plain name.`);
    }
    const jobAt = `${at} (job "${name}")`;
    const failJob = (field: string, message: string): never => fail(field ? `${at}.${field} (job "${name}")` : jobAt, message, [name]);

    const previous = labelIndex.get(name);
    if (previous !== undefined) {
      fail(`${at}.label`, `duplicate label "${name}" (also used by jobs[${previous}]); every job needs its own label.`, [name]);
    }
    labelIndex.set(name, i);

    checkKeys(obj, JOB_KEYS, jobAt, 'job key', fail, [name]);

    // outputs
    if (!Array.isArray(obj.outputs) || obj.outputs.length === 0) {
      failJob(
        'outputs',
        obj.outputs === undefined
          ? 'missing: a job needs "outputs", a non-empty array of regexes matched against whole refs.'
          : `must be a non-empty array of regex strings, not ${show(obj.outputs)}.`,
      );
    }
    const outputs: string[] = [];
    const patterns: OutputPattern[] = [];
    (obj.outputs as unknown[]).forEach((out, k) => {
      if (typeof out !== 'string' || out.length === 0) failJob(`outputs[${k}]`, `must be a non-empty regex string, not ${show(out)}.`);
      try {
        patterns.push(compileOutputPattern(out as string));
      } catch (err) {
        failJob(
          `outputs[${k}]`,
          `${JSON.stringify(out)} is not a valid regular expression (${errorMessage(err)}). ` +
            'Remember that a backslash is written "\\\\" inside a JSON string.',
        );
      }
      outputs.push(out as string);
    });

    // exec
    const exec = stringArray(obj.exec, 'exec', failJob, {
      required: true,
      nonEmpty: true,
      missing: 'missing: a job needs "exec", the command to run, e.g. ["bash", "jobs/build.sh"].',
    })!;
    if (exec[0] === '') failJob('exec[0]', 'the program to run must not be an empty string.');

    // config
    const config = stringArray(obj.config, 'config', failJob, { required: false, nonEmpty: true, missing: '' });
    if (config !== undefined && config[0] === '') failJob('config[0]', 'the config program must not be an empty string.');
    if (config !== undefined) {
      for (const field of ['inputs', 'args', 'env'] as const) {
        if (obj[field] !== undefined) {
          failJob(
            field,
            `a config-program job (one with "config") gets its ${field} from the program's output, so "${field}" here would be ignored; remove "${field}" or "config".`,
          );
        }
      }
    }

    // inputs
    const inputs: DataDep[] = [];
    if (obj.inputs !== undefined) {
      if (!Array.isArray(obj.inputs)) failJob('inputs', `must be an array of {"partition_ref", "dep_type"} objects, not ${describe(obj.inputs)}.`);
      (obj.inputs as unknown[]).forEach((dep, k) => {
        const depAt = `inputs[${k}]`;
        if (!isPlainObject(dep)) failJob(depAt, `must be an object like {"partition_ref": "...", "dep_type": "MATERIALIZE"}, not ${describe(dep)}.`);
        const d = dep as Record<string, unknown>;
        checkKeys(d, INPUT_KEYS, `${at}.${depAt} (job "${name}")`, 'input key', fail, [name]);
        if (typeof d.partition_ref !== 'string' || d.partition_ref.length === 0) {
          failJob(
            `${depAt}.partition_ref`,
            d.partition_ref === undefined ? 'missing: an input needs a "partition_ref" template.' : `must be a non-empty string, not ${show(d.partition_ref)}.`,
          );
        }
        // Not given -> QUERY, following the proto default (DepType QUERY = 0). QUERY inputs are recorded but not
        // built, so forgetting dep_type can never schedule unexpected work.
        let depType: DepType = 'QUERY';
        if (d.dep_type !== undefined) {
          if (typeof d.dep_type !== 'string' || !DEP_TYPES.includes(d.dep_type as DepType)) {
            failJob(`${depAt}.dep_type`, `must be "MATERIALIZE" (build it first) or "QUERY" (recorded, not built), not ${show(d.dep_type)}.`);
          }
          depType = d.dep_type as DepType;
        }
        inputs.push({ dep_type: depType, partition_ref: d.partition_ref as string });
      });
    }

    const args = stringArray(obj.args, 'args', failJob, { required: false, nonEmpty: false, missing: '' }) ?? [];

    const env: Record<string, string> = {};
    if (obj.env !== undefined) {
      if (!isPlainObject(obj.env)) failJob('env', `must be an object of string values, not ${describe(obj.env)}.`);
      for (const [key, value] of Object.entries(obj.env as Record<string, unknown>)) {
        if (key === '' || key.includes('=') || key.includes('\0')) {
          failJob(`env`, `${JSON.stringify(key)} is not a valid environment variable name.`);
        }
        if (typeof value !== 'string') failJob(`env.${key}`, `must be a string, not ${show(value)}.`);
        env[key] = value as string;
      }
    }

    // Every template variable must be a named group of every output, or some refs could not fill it.
    const checkTemplate = (field: string, template: string): void => {
      for (const variable of templateVariables(template)) {
        for (const p of patterns) {
          if (!p.groups.includes(variable)) {
            const has = p.groups.length ? `its named groups are: ${p.groups.join(', ')}` : 'it has no named groups';
            failJob(
              field,
              `uses \${${variable}}, but output ${JSON.stringify(p.source)} has no named group "${variable}" (${has}). ` +
                `Every \${name} must be a named group (?<name>...) of every output regex of the job.`,
            );
          }
        }
      }
    };
    inputs.forEach((d, k) => checkTemplate(`inputs[${k}].partition_ref`, d.partition_ref));
    args.forEach((a, k) => checkTemplate(`args[${k}]`, a));
    for (const [key, value] of Object.entries(env)) checkTemplate(`env.${key}`, value);

    const retries = count(obj.retries, 'retries', failJob, 'number of extra attempts after a failure');
    const timeout = count(obj.timeout_seconds, 'timeout_seconds', failJob, 'seconds a run may take (0 = no limit)');
    const maxConc = count(obj.max_concurrency, 'max_concurrency', failJob, 'most runs of this job at once (0 = unlimited)');

    const job: JobDefinition = {
      label: name,
      outputs,
      inputs,
      args,
      env,
      exec,
      retries,
      timeout_seconds: timeout,
      max_concurrency: maxConc,
    };
    if (config !== undefined) job.config = config;
    if (obj.version !== undefined) {
      if (typeof obj.version !== 'string') {
        failJob('version', `must be a string (bump it when the job's code changes, so its partitions turn stale), got ${JSON.stringify(obj.version)}`);
      }
      job.version = obj.version as string;
    }
    if (obj.batch !== undefined) job.batch = parseBatch(obj.batch, job, failJob);
    jobs.push(job);
  });

  const graph: GraphDefinition = { max_concurrent_job_runs: maxConcurrent, jobs, schedules: parseSchedules(top.schedules, fail) };
  if (top.retention !== undefined) graph.retention = parseRetention(top.retention, fail);
  checkScheduleRefs(graph, fail);
  return graph;
}

/**
 * A batched job's runs build several refs: each ref's args are templated and concatenated, and the job reads the
 * refs from PLATFORM_OUTPUTS. Its env is one for the whole run, so it must not depend on the ref.
 */
function parseBatch(raw: unknown, job: JobDefinition, failJob: FailJob): BatchPolicy {
  if (!isPlainObject(raw)) return failJob('batch', `must be an object like {"max_partitions": 50, "max_wait_ms": 2000}, not ${describe(raw)}.`);
  for (const key of Object.keys(raw)) if (key !== 'max_partitions' && key !== 'max_wait_ms') failJob(`batch.${key}`, 'unknown key; a batch takes max_partitions and max_wait_ms.');
  if (job.config !== undefined) failJob('batch', 'a config-program job builds what its program says; batching is for declarative jobs (remove "batch" or "config").');
  const max = raw.max_partitions;
  if (!isNonNegativeInteger(max) || max < 1 || max > 100_000) failJob('batch.max_partitions', `must be a whole number from 1 to 100000 (refs built by one run), got ${show(max)}.`);
  const wait = raw.max_wait_ms ?? 0;
  if (!isNonNegativeInteger(wait)) failJob('batch.max_wait_ms', `must be a whole number of milliseconds (0 or more), got ${show(wait)}.`);
  for (const [key, value] of Object.entries(job.env)) {
    if (templateVariables(value).length > 0) {
      failJob(`env.${key}`, 'a batched job\'s env is one for all the refs of a run, so it cannot use ${...}; pass per-ref values in args (concatenated per ref) or read PLATFORM_OUTPUTS.');
    }
  }
  return { max_partitions: max as number, max_wait_ms: wait as number };
}

type Fail = (path: string, message: string, jobs?: string[]) => never;
type FailJob = (field: string, message: string) => never;

function checkKeys(
  obj: Record<string, unknown>,
  allowed: readonly string[],
  at: string,
  what: string,
  fail: Fail,
  jobs?: string[],
): void {
  for (const key of Object.keys(obj)) {
    if (allowed.includes(key)) continue;
    const guess = closest(key, allowed);
    fail(
      at,
      `unknown ${what} ${JSON.stringify(key)}${guess ? ` (did you mean "${guess}"?)` : ''}; allowed: ${allowed.join(', ')}.`,
      jobs,
    );
  }
}

function stringArray(
  value: unknown,
  field: string,
  failJob: FailJob,
  opts: { required: boolean; nonEmpty: boolean; missing: string },
): string[] | undefined {
  if (value === undefined) {
    if (opts.required) failJob(field, opts.missing);
    return undefined;
  }
  if (!Array.isArray(value) || (opts.nonEmpty && value.length === 0)) {
    failJob(field, `must be ${opts.nonEmpty ? 'a non-empty' : 'an'} array of strings, not ${show(value)}.`);
  }
  const arr = value as unknown[];
  arr.forEach((v, k) => {
    if (typeof v !== 'string') failJob(`${field}[${k}]`, `must be a string, not ${show(v)}.`);
  });
  return [...(arr as string[])];
}

function count(value: unknown, field: string, failJob: FailJob, meaning: string): number {
  if (value === undefined) return 0;
  if (!isNonNegativeInteger(value)) failJob(field, `must be a non-negative integer, the ${meaning}; got ${show(value)}.`);
  return value as number;
}

function isNonNegativeInteger(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  return `a ${typeof v} (${show(v)})`;
}

function show(v: unknown): string {
  const s = JSON.stringify(v) ?? String(v);
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

/** The allowed key nearest to `key` by edit distance, if it is close enough to be a likely typo. */
function closest(key: string, allowed: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of allowed) {
    const d = editDistance(key.toLowerCase(), candidate);
    if (d < bestDistance) {
      bestDistance = d;
      best = candidate;
    }
  }
  return bestDistance <= Math.max(2, Math.floor(key.length / 3)) ? best : undefined;
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length]!;
}

function parseRetention(raw: unknown, fail: (path: string, message: string) => never): RetentionPolicy {
  if (!isPlainObject(raw)) return fail('retention', 'must be an object like {"job_logs_days": 30}.');
  const r = raw as Record<string, unknown>;
  for (const key of Object.keys(r)) {
    if (key !== 'job_logs_days' && key !== 'events_keep') fail(`retention.${key}`, 'unknown key; retention has "job_logs_days" and "events_keep".');
  }
  const policy: RetentionPolicy = {};
  const days = r.job_logs_days;
  if (days !== undefined) {
    if (typeof days !== 'number' || !Number.isFinite(days) || days <= 0) {
      fail('retention.job_logs_days', `must be a number of days above 0 (e.g. 30, or 0.5 for 12 hours), got ${JSON.stringify(days)}.`);
    }
    policy.job_logs_days = days;
  }
  const keep = r.events_keep;
  if (keep !== undefined) {
    if (typeof keep !== 'number' || !Number.isSafeInteger(keep) || keep < 1) {
      fail('retention.events_keep', `must be a whole number of events of at least 1 (e.g. 1000000), got ${JSON.stringify(keep)}.`);
    }
    policy.events_keep = keep;
  }
  return policy;
}
