/**
 * A cancel travels to the workers on a pub/sub channel, which keeps nothing: a worker whose listening connection is
 * down when the cancel is published does not hear it. The cancel must reach the run all the same once the worker is
 * back: the run ends canceled and its process group is gone.
 */
import { Redis } from 'ioredis';
import { isPidAlive, poll, runsFor, waitFor } from './helpers/jobs-fixture.js';
import { startRedis } from './helpers/redis-server.js';
import { HOLD_JOB, holdRunningOnW1, redisRelay, redisTests } from './helpers/redis-fixture.js';
import { DEFAULT_QUEUE, cancelChannel } from '../lib/executor/redis/redis-names.js';
import type { runCli } from './helpers/server-fixture.js';

const graph = { jobs: [HOLD_JOB] };
const redisTest = redisTests();

/** A relay to Redis that, from `holdNew` until `release`, lets connections in but forwards nothing of theirs yet. */
async function startHoldingRelay(t: Parameters<typeof runCli>[0], redisUrl: string): Promise<{ url: string; holdNew: () => void; release: () => void }> {
  let holding = false;
  const held: Array<() => void> = [];
  const relay = await redisRelay(t, redisUrl, (client, upstream) => {
    const up = upstream();
    client.on('close', () => up.destroy());
    up.on('close', () => client.destroy());
    const join = () => {
      client.pipe(up);
      up.pipe(client);
    };
    if (holding) held.push(join);
    else join();
  });
  return {
    url: relay.url,
    holdNew: () => void (holding = true),
    release: () => {
      holding = false;
      for (const join of held.splice(0)) join();
    },
  };
}

redisTest('a cancel published while its worker was cut off from the cancel channel reaches the run once the worker is back', async (t) => {
  const redis = await startRedis(t);
  const relay = await startHoldingRelay(t, redis.url);
  const { platform, want: w, child } = await holdRunningOnW1(t, redis.url, relay.url, graph);

  const admin = new Redis(redis.url);
  const listener = new Redis(redis.url);
  t.teardown(() => {
    admin.disconnect();
    listener.disconnect();
  });
  // The worker's listening connection cut; its reconnect is let in but not through until the cancel is told.
  relay.holdNew();
  t.true(Number(await admin.client('KILL', 'TYPE', 'pubsub')) >= 1, "the worker's cancel listener cut");
  const told = new Promise<string>((resolve) => listener.on('message', (_channel: string, text: string) => resolve(text)));
  await listener.subscribe(cancelChannel(DEFAULT_QUEUE));
  const [, listening] = (await admin.pubsub('NUMSUB', cancelChannel(DEFAULT_QUEUE))) as [string, number];
  t.is(listening, 1, 'only this test listens for cancels: the worker does not');
  await platform.cancelWant(w);
  t.regex(await told, /"jobId"/, 'the cancel was published while the worker did not listen');
  t.true(isPidAlive(child), 'the run goes on meanwhile');
  relay.release();

  // The log has the run canceled at once; what the worker missed shows as its job left running.
  const s = await waitFor(platform, (x) => runsFor(x, 'hold/1')[0]?.status === 'canceled', 'the run canceled', 10_000);
  t.regex(runsFor(s, 'hold/1')[0]!.reason, /canceled/);
  t.true(await poll(() => !isPidAlive(child), 5000), 'its process group is gone: the cancel reached the worker');
  t.is(runsFor(s, 'hold/1').length, 1, 'canceled, not lost and run again');
});

/**
 * A relay to Redis that can make the connections that listen for cancels (those that sent a SUBSCRIBE) go silent:
 * from `silence` on, what they send and what is sent to them is dropped, and they stay open (no reset, no FIN), as
 * over a cut network or through a NAT that forgot them. Connections made after it are relayed as usual.
 */
async function startSilencingRelay(t: Parameters<typeof runCli>[0], redisUrl: string): Promise<{ url: string; silence: () => number }> {
  const listeners = new Set<{ silent: boolean }>();
  const relay = await redisRelay(t, redisUrl, (client, upstream) => {
    const up = upstream();
    const conn = { silent: false };
    client.on('close', () => up.destroy());
    up.on('close', () => client.destroy());
    client.on('data', (d: Buffer) => {
      if (conn.silent) return;
      if (/subscribe/i.test(d.toString('latin1'))) listeners.add(conn);
      up.write(d);
    });
    up.on('data', (d: Buffer) => {
      if (!conn.silent) client.write(d);
    });
  });
  return {
    url: relay.url,
    silence: () => {
      for (const conn of listeners) conn.silent = true;
      return listeners.size;
    },
  };
}

redisTest('a cancel published while its worker\'s cancel listener had gone silent (no reset) reaches the run: the worker notices and listens again', async (t) => {
  const redis = await startRedis(t);
  const relay = await startSilencingRelay(t, redis.url);
  const { platform, want: w, child } = await holdRunningOnW1(t, redis.url, relay.url, graph);
  t.is(relay.silence(), 1, "the worker's cancel listener silenced");
  await platform.cancelWant(w);
  await waitFor(platform, (x) => runsFor(x, 'hold/1')[0]?.status === 'canceled', 'the run canceled in the log', 10_000);
  // Redis still has the silent connection subscribed: only the worker's PING that goes unanswered tells.
  t.true(await poll(() => !isPidAlive(child), 15_000), 'its process group is gone: the worker listened again and read the cancel');
});
