import type { Command } from 'commander';
import { parsedOption, redisUrl, wholeNumber, duration, workerName } from '../option-parsers.js';

export function registerWorker(program: Command): void {
  program
    .command('worker')
    .description('take job runs from a daemon started with --executor redis://... and run them on this machine')
    .requiredOption('--redis <url>', 'the Redis the daemon hands runs to, e.g. redis://10.0.0.5:6379', redisUrl('--redis'))
    .addOption(parsedOption('--concurrency <n>', 'runs at once on this worker', wholeNumber({ min: 1 })).default(1))
    .option('--workdir <dir>', "where jobs run (default: the daemon's workspace path, as on a shared filesystem)")
    .addOption(parsedOption('--name <name>', "the name recorded on each run this worker takes (default: <hostname>-<pid>; not 'local' nor 'redis:...')", workerName))
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
      // The first SIGTERM or SIGINT stops taking runs and lets the running ones finish; the second cancels them and stops
      // within seconds, Redis answering or not; a third exits at once (the worker's watchdog kills what it ran).
      let signals = 0;
      const stop = (signal: string) => {
        signals++;
        if (signals === 1) {
          const n = worker.runningCount();
          process.stdout.write(
            n === 0
              ? `stopping (${signal})\n`
              : `stopping (${signal}): the ${n === 1 ? 'running run finishes' : `${n} running runs finish`} first (Ctrl-C or SIGTERM again to cancel ${n === 1 ? 'it' : 'them'} and stop now)\n`,
          );
          void worker.close().then(() => process.exit(worker.untoldAtClose() > 0 ? 1 : 0));
        } else if (signals === 2) {
          process.stdout.write(`stopping now (${signal} again): canceling the running runs, waiting for Redis a few seconds at most\n`);
          // Not 0 when Redis was not told a run's end: a supervisor (systemd) should not read that as a clean stop.
          void worker.close({ force: true }).then(() => process.exit(worker.untoldAtClose() > 0 ? 1 : 0));
        } else {
          process.stdout.write(`stopping at once (${signal} a third time): the runs still going are killed by the worker's watchdog within its lease\n`);
          process.exit(1);
        }
      };
      process.on('SIGTERM', () => stop('SIGTERM'));
      process.on('SIGINT', () => stop('SIGINT'));
      await worker.start();
    });
}
