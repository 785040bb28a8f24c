/**
 * Option values checked where commander reads them (`Option#argParser`): a bad value is reported by commander as
 * "error: option '--ttl <seconds>' argument 'soon' is invalid. --ttl must be a whole number.", exit code 2.
 */
import { calendarMisfit } from '../api/calendar-time.js';
import { InvalidArgumentError, Option } from 'commander';
import { parseDuration } from '../duration.js';
import { errorMessage } from '../errors.js';
import { isRedisUrl } from '../executor/redis/redis-url.js';

/** Turns the option's long name (`--ttl`) into the parser of its values. */
export type OptionParser<T> = (name: string) => (value: string) => T;

/** A usage error: exit code 2, like other command-line tools, whether or not the command goes through usageExitCode. */
class OptionValueError extends InvalidArgumentError {
  constructor(message: string) {
    super(message);
    this.exitCode = 2;
  }
}

/** An option whose values go through `parser`, which names the option in its messages. */
export function parsedOption<T>(flags: string, description: string, parser: OptionParser<T>): Option {
  const option = new Option(flags, description);
  return option.argParser(parser(option.long ?? option.name()));
}

/** Digits only (no sign, point or exponent), at least `min`, at most `max` (default: the largest safe integer). */
export function wholeNumber(range: { min?: number; max?: number; note?: string } = {}): OptionParser<number> {
  const { min = 0, max = Number.MAX_SAFE_INTEGER, note } = range;
  const bounds = max < Number.MAX_SAFE_INTEGER ? ` from ${min} to ${max}` : min > 0 ? ` of at least ${min}` : '';
  return (name) => (value) => {
    const n = Number(value);
    // Past a maximum the words above leave out (the largest safe integer), said as such: not "must be a whole number".
    if (/^\d+$/.test(value) && max >= Number.MAX_SAFE_INTEGER && n > max) throw new OptionValueError(`${name} is too large: at most ${max}; got '${value}'.`);
    if (!/^\d+$/.test(value) || n < min || n > max || !Number.isSafeInteger(n)) {
      throw new OptionValueError(`${name} must be a whole number${bounds}${note ? ` (${note})` : ''}.`);
    }
    return n;
  };
}

/** A whole number that may be negative (a priority), from -`max` to `max` when a bound is given. */
export function integer(range: { max?: number } = {}): OptionParser<number> {
  const { max } = range;
  const bounds = max === undefined ? '' : ` from ${-max} to ${max}`;
  return (name) => (value) => {
    const n = Number(value);
    if (!/^-?\d+$/.test(value) || !Number.isSafeInteger(n) || (max !== undefined && Math.abs(n) > max)) {
      throw new OptionValueError(`${name} must be a whole number${bounds}, such as 10 or -5; got '${value}'.`);
    }
    return n;
  };
}

/** A duration (90, 90s, 5m, 3h, 1d, 250ms) in milliseconds. */
export const duration: OptionParser<number> = (name) => (value) => {
  try {
    return parseDuration(value, name);
  } catch (err) {
    throw new OptionValueError(errorMessage(err));
  }
};

/**
 * A worker's name, as each run it takes records it: not one the log gives another meaning (`local`, a run on this
 * machine; `redis:<queue>`, a run waiting in a queue), which would have the next daemon take its runs for those.
 */
export const workerName: OptionParser<string> = (name) => (value) => {
  const v = value.trim();
  if (v === '') throw new OptionValueError(`${name} is empty: give a name, or leave it out for <hostname>-<pid>.`);
  if (v === 'local' || v.startsWith('redis:')) {
    throw new OptionValueError(`${name} '${value}' is taken: runs record 'local' for this machine's own and 'redis:<queue>' for those waiting in a queue; give another name.`);
  }
  return v;
};

/**
 * A duration in whole seconds (90, 90s, 5m, 3h, 1d; 0 for none), as the API's `*_seconds` fields take it; at most
 * `max` seconds when given (`words` says it as a person would: '100 years').
 */
export function seconds(range?: { max: number; words: string }): OptionParser<number> {
  return (name) => (value) => {
    if (/^0+$/.test(value.trim())) return 0;
    const ms = duration(name)(value);
    if (ms % 1000 !== 0) throw new OptionValueError(`${name} counts whole seconds; got '${value}'.`);
    const s = ms / 1000;
    if (range && s > range.max) {
      throw new OptionValueError(`${name} is at most ${range.words} (${range.max} seconds, ${Math.floor(range.max / 86_400)}d); got '${value}' (${s} seconds).`);
    }
    return s;
  };
}

/**
 * Free text a request records (a comment, a reason): checked here as the server checks it (`problem`, naming the
 * option), so a comment too long or with a line break is the command line's mistake, not a field it never typed.
 */
export function text(problem: (value: string, name: string) => string | undefined): OptionParser<string> {
  return (name) => (value) => {
    const why = problem(value, name);
    if (why) throw new OptionValueError(why);
    return value;
  };
}

/**
 * The workspace directory (-C): not empty. '' is most often a shell variable left unset, and dropped it meant the
 * current directory's workspace, which the user did not name (as `--server-url ''` is refused).
 */
export const directory: OptionParser<string> = (name) => (value) => {
  if (value === '') throw new OptionValueError(`${name} is empty (an unset shell variable?): give the workspace's directory, or leave ${name} out to use the nearest workspace.`);
  return value;
};

/** An http(s) server's base URL (no path, query or fragment), as given but for trailing slashes. */
export const httpUrl: OptionParser<string> = (name) => (value) => {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new OptionValueError(`${name} must be an http(s) URL such as http://127.0.0.1:8080; got '${value}'.`);
  }
  // The client puts the API's paths after it: with '/api' every request went to /api/api/..., and a daemon's token
  // is sent only to a URL that is that daemon's (server-url-daemon.ts), so it said the token was missing instead.
  if (!/^\/*$/.test(url.pathname)) throw new OptionValueError(`${name} must be the daemon's base URL, such as http://127.0.0.1:8080 (no path); got '${value}'.`);
  if (/[?#]/.test(value)) throw new OptionValueError(`${name} must be the daemon's base URL, such as http://127.0.0.1:8080 (no query or fragment); got '${value}'.`);
  // A base to put paths after, and what messages name: 'http://127.0.0.1:8080/' is that server too.
  return value.replace(/\/+$/, '');
};

/**
 * An ISO 8601 time, kept as the text given (the server reads it); within `range` (epoch milliseconds, `words` saying
 * it as the message does: 'from 1970 to before the year 9900') when given.
 */
export function isoTime(range?: { min: number; max: number; words: string }): OptionParser<string> {
  return (name) => (value) => {
    const ms = Date.parse(value);
    const within = range ? ` ${range.words}` : '';
    if (Number.isNaN(ms)) throw new OptionValueError(`${name} must be an ISO 8601 time such as 2026-01-05T00:00:00Z${within}.`);
    const misfit = calendarMisfit(value);
    if (misfit) throw new OptionValueError(`${name} names no time there is: ${misfit} (got '${value}').`);
    if (range && (ms < range.min || ms > range.max)) throw new OptionValueError(`${name} must be a time${within}; got '${value}'.`);
    return value;
  };
}

/** One of a fixed set of words; `meaning` says what each is for. */
export function oneOf<T extends string>(values: readonly T[], meaning: string): OptionParser<T> {
  return (name) => (value) => {
    if (!(values as readonly string[]).includes(value)) throw new OptionValueError(`${name} must be one of ${values.join(', ')} (${meaning}).`);
    return value as T;
  };
}

/**
 * Where the daemon runs job runs: `local` (each under a supervisor, outliving the daemon), `in-process`, or a
 * `redis://host:port` URL (on `platform worker`s that take them from a BullMQ queue there).
 */
export type ExecutorChoice = 'local' | 'in-process' | `redis${string}`;

export const executorChoice: OptionParser<ExecutorChoice> = (name) => (value) => {
  if (value === 'local' || value === 'in-process') return value;
  if (isRedisUrl(value)) return value as ExecutorChoice;
  throw new OptionValueError(
    `${name} must be local (job runs outlive the daemon), in-process (they end with it) or redis://host:port (they run on platform workers; a database number after it if any: redis://host:port/2); got '${value}'.`,
  );
};

/** A redis:// URL with a host. */
export const redisUrl: OptionParser<string> = (name) => (value) => {
  if (isRedisUrl(value)) return value;
  throw new OptionValueError(`${name} must be a Redis URL such as redis://127.0.0.1:6379 (a database number after it if any: redis://127.0.0.1:6379/2); got '${value}'.`);
};
