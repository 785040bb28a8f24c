/**
 * What a command does with how a follow came out: nothing more for a successful want (exit 0); the reasons for one
 * that is not (exit 1); on Ctrl-C, cancel the want if asked, say what became of it (exit 130). A second Ctrl-C
 * while canceling leaves at once.
 */
import type { PlatformClient } from '../client/platform-client.js';
import { errorMessage } from '../errors.js';
import type { FollowResult } from './follow-want.js';

export const EXIT_INTERRUPTED = 130;

/** The exit code; a want that is not successful throws its message (the entry prints it and exits 1). */
export async function settleFollow(client: PlatformClient, rootId: string, result: FollowResult, cancelOnInterrupt: boolean): Promise<number> {
  if (result.kind === 'successful') return 0;
  if (result.kind === 'unsuccessful') throw new Error(result.message);
  const leave = () => process.exit(EXIT_INTERRUPTED);
  process.once('SIGINT', leave);
  try {
    if (cancelOnInterrupt) {
      try {
        const w = await client.cancelWant(rootId);
        process.stderr.write(`platform: interrupted; want ${rootId} is ${w.status}.\n`);
      } catch (err) {
        process.stderr.write(`platform: interrupted; canceling want ${rootId} failed: ${errorMessage(err)}\n`);
      }
    } else {
      process.stderr.write(`platform: interrupted; want ${rootId} keeps building; \`platform want cancel ${rootId}\` to stop it.\n`);
    }
  } finally {
    process.off('SIGINT', leave);
  }
  return EXIT_INTERRUPTED;
}
