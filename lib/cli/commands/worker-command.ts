import type { Command } from 'commander';
import { parsedOption, redisUrl, wholeNumber, duration } from '../option-parsers.js';

export function registerWorker(program: Command): void {
  program
    .command('worker')
    .description('take job runs from a daemon started with --executor redis://... and run them on this machine')
    .requiredOption('--redis <url>', 'the Redis the daemon hands runs to, e.g. redis://10.0.0.5:6379', redisUrl('--redis'))
    .addOption(parsedOption('--concurrency <n>', 'runs at once on this worker', wholeNumber({ min: 1 })).default(1))
    .option('--workdir <dir>', "where jobs run (default: the daemon's workspace path, as on a shared filesystem)")
    .option('--name <name>', 'the name recorded on each run this worker takes (default: <hostname>-<pid>)')
    .option('--queue <name>', 'the BullMQ queue (default: platform-runs)')
    .addOption(
      parsedOption('--lease <duration>', 'how long a worker that stopped answering keeps its runs before they are lost and rebuilt elsewhere (default 30s)', duration),
    )
    .action(async (opts: { redis: string; concurrency: number; workdir?: string; name?: string; queue?: string; lease?: number }) => {
      // Loaded here: the Redis client is for this command only.
      const { QueueWorker } = await import('../../executor/redis/queue-worker.js');
      const worker = new QueueWorker({
        redisUrl: opts.redis,
        concurrency: opts.concurrency,
        ...(opts.workdir ? { workdir: opts.workdir } : {}),
        ...(opts.name ? { name: opts.name } : {}),
        ...(opts.queue ? { queue: opts.queue } : {}),
        ...(opts.lease !== undefined ? { leaseMs: opts.lease } : {}),
      });
      let stopping = false;
      const stop = (cancelRuns: boolean) => {
        if (stopping) return;
        stopping = true;
        process.stdout.write(cancelRuns ? 'stopping: canceling the running runs\n' : 'stopping: the running runs finish first (Ctrl-C again to cancel them)\n');
        void worker.close({ cancelRuns }).then(() => process.exit(0));
      };
      process.on('SIGTERM', () => stop(false));
      process.on('SIGINT', () => (stopping ? void worker.close({ cancelRuns: true }) : stop(false)));
      await worker.start();
    });
}
