/**
 * The options of the commands that make a want (build, want create, backfill create) whose values go into a bounded
 * field of the request: checked by the CLI, in the option's own words, before any request. The server's refusal of
 * the same value named the field (`Field 'ttl_seconds' ...`), which the user never typed, and exited 1, not 2.
 */
import { Option } from 'commander';
import { MAX_DATA_TIMESTAMP_MS, MAX_PRIORITY, MAX_WANT_SECONDS } from '../api/schemas/wants.js';
import { textProblem } from '../orchestrator/request-checks.js';
import { integer, isoTime, parsedOption, seconds, text } from './option-parsers.js';

/** `--priority <n>`: the API's priority, -1,000,000 to 1,000,000. */
export function priorityOption(): Option {
  return parsedOption('--priority <n>', `higher runs first when runs wait for capacity (-${MAX_PRIORITY} to ${MAX_PRIORITY}, default 0)`, integer({ max: MAX_PRIORITY }));
}

/** A free-text option recorded with the request (`--comment`, `--reason`): at most 10,000 characters, no control characters. */
export function textOption(flags: string, description: string): Option {
  return parsedOption(flags, description, text(textProblem));
}

/** `--ttl` or `--sla`: whole seconds, at most 100 years, as the want's `*_seconds` fields take them. */
export function wantSecondsOption(flags: string, description: string): Option {
  return parsedOption(flags, description, seconds({ max: MAX_WANT_SECONDS, words: '100 years' }));
}

/** `--data-timestamp <iso>`: from 1970 to before the year 9900, as the want's `data_timestamp` takes it. */
export function dataTimestampOption(): Option {
  return parsedOption(
    '--data-timestamp <iso>',
    'the data time the want is about (ISO 8601, from 1970 to before the year 9900)',
    isoTime({ min: 0, max: MAX_DATA_TIMESTAMP_MS, words: 'from 1970 to before the year 9900' }),
  );
}
