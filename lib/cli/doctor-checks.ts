/**
 * `platform doctor`'s checks of a workspace, each a finding with what to do about it. They read files and ask the
 * daemon; the one that reads the whole event log opens it only when no daemon holds it (LevelDB allows one
 * process), so a running daemon is never disturbed.
 */
import { execTemplateSlips } from '../graph/exec-template-slips.js';
import { existsSync, statSync, statfsSync } from 'node:fs';
import { join } from 'node:path';
import { EventLog } from '../events/event-log.js';
import { GRAPH_FILE, loadGraph } from '../graph/load-graph.js';
import { graphFileMissingWithHistory, RESTORE_GRAPH_FILE } from '../graph/graph-file-missing.js';
import { serverInfoPath } from '../client/server-info.js';
import { fetchStatus, probeServer, type Probe } from '../client/server-probe.js';
import { PlatformClient } from '../client/platform-client.js';
import type { JobRunView } from '../api/views.js';
import { waitingInQueue } from '../api/run-placement.js';
import { platformDir } from '../client/workspace.js';
import { errorMessage } from '../errors.js';
import { isPidAlive } from '../system/pid-liveness.js';
import { initialState } from '../state/build-state.js';
import { reduce } from '../state/reduce.js';
import { fromSnapshot } from '../state/snapshot.js';
import { deltaPathOf, readCompactionBase, readSnapshot, readSnapshotOrWhy, stateCodeFingerprint } from '../state/snapshot-file.js';
import { logProbe, SNAPSHOT_AFTER_REPLAY_EVENTS, SNAPSHOT_MIN_NEW_EVENTS, SNAPSHOT_WHEN_QUIET_EVENTS } from '../state/state-store.js';
import { groupDigits } from '../group-digits.js';
import { launcherMode, nativeLauncherPath } from '../executor/run-launcher.js';
import { workerCountWords, type RunLauncherKind } from '../api/executor-health.js';
import { CACHE_AFTER_MS, compileCacheStatus } from './compile-cache.js';
import { DAEMON_BUNDLE } from './entry.js';
import type { BuildState } from '../state/build-state.js';

export type FindingStatus = 'ok' | 'warn' | 'error';

export interface Finding {
  check: string;
  status: FindingStatus;
  detail: string;
  /** What to do; absent when nothing is to be done. */
  fix?: string;
}

const ok = (check: string, detail: string): Finding => ({ check, status: 'ok', detail });
const warn = (check: string, detail: string, fix: string): Finding => ({ check, status: 'warn', detail, fix });
const error = (check: string, detail: string, fix: string): Finding => ({ check, status: 'error', detail, fix });

const MIB = 1024 * 1024;

export async function runChecks(root: string): Promise<Finding[]> {
  const findings: Finding[] = [];
  const dir = platformDir(root);
  findings.push(permissions(dir));
  const probe = await probeServer(root);
  findings.push(await graph(root, probe));
  findings.push(...(await daemon(root, probe)));
  findings.push(disk(dir));
  findings.push(runLauncher(probe.state === 'running' ? probe.status.executor?.launcher : undefined));
  findings.push(compileCache());
  if (probe.state === 'running' || probe.state === 'unresponsive') {
    findings.push(ok('event log', 'held by the running daemon, which read it whole at its start (stop it to check it again here)'));
    findings.push(executorCheck(probe));
    findings.push(executorConfigCheck(probe));
    findings.push(await stuckRuns(probe));
  } else {
    findings.push(...(await eventLog(dir)));
  }
  return findings;
}

/**
 * Which launcher starts local runs: the running daemon's, as its `/api/status` says (its environment chose it, not
 * this command's), else as a daemon started from this CLI would choose it.
 */
function runLauncher(running: RunLauncherKind | null | undefined): Finding {
  // A daemon whose runs go to workers (or run in-process) starts none on this machine (null); an older one says nothing (undefined).
  if (running === null) return ok('run launcher', 'none: the running daemon starts no runs of its own on this machine');
  const mode = running ?? launcherMode();
  const whose = running ? "the running daemon's: " : '';
  if (mode === 'native') return ok('run launcher', `${whose}native (${nativeLauncherPath()}): a fork and two execs a run`);
  const slower = 'so each run costs about 1.5 ms more to start';
  if (running) {
    return warn(
      'run launcher',
      `${whose}${mode}: ${slower} (its environment's PLATFORM_LAUNCHER chose it, or ${nativeLauncherPath()} was not built when it started${mode === 'direct' ? ', or neither it nor /bin/sh could be run' : ''})`,
      'run npm run build where the native launcher was not built (a C compiler: apt-get install gcc libc6-dev), then platform stop and start the daemon without PLATFORM_LAUNCHER',
    );
  }
  if (process.env.PLATFORM_LAUNCHER === mode) return ok('run launcher', `${mode}, chosen by PLATFORM_LAUNCHER`);
  return warn(
    'run launcher',
    `${mode}: ${nativeLauncherPath()} was not built (no C compiler when platform was built), ${slower}`,
    'install a C compiler (Debian: apt-get install gcc libc6-dev) and run npm run build',
  );
}

/** Whether a daemon started now compiles from a V8 code cache (compile-cache.ts): a start ~50-80 ms slower without. */
function compileCache(): Finding {
  const status = compileCacheStatus(DAEMON_BUNDLE);
  switch (status.state) {
    case 'off':
      return ok('compile cache', 'off (PLATFORM_DISABLE_COMPILE_CACHE)');
    case 'no bundle':
      return warn('compile cache', `${status.bundle} is missing, so the daemon cannot start`, 'run npm run build');
    case 'unsafe':
      return warn(
        'compile cache',
        `not used: ${status.dir} is ${status.why}, and a cache is code the daemon runs; each daemon starts ~50-80 ms slower`,
        `chmod o-w ${status.dir}, or set PLATFORM_COMPILE_CACHE to a directory of your own`,
      );
    case 'present':
      return ok('compile cache', `${status.file} (${(status.bytes / MIB).toFixed(1)} MiB): the daemon starts from it`);
    case 'absent':
      return ok('compile cache', `none yet in ${status.dir}: the next daemon that runs ${CACHE_AFTER_MS / 1000} s writes it`);
  }
}

function permissions(dir: string): Finding {
  const mode = statSync(dir).mode & 0o777;
  if ((mode & 0o077) !== 0) {
    return warn('permissions', `${dir} is ${mode.toString(8)}: other users may read the daemon's token and the job logs`, `chmod 700 ${dir}`);
  }
  return ok('permissions', `${dir} is ${mode.toString(8)}: only its owner gets in`);
}

async function graph(root: string, probe: Probe): Promise<Finding> {
  const daemonRuns = probe.state === 'running' || probe.state === 'unresponsive';
  const file = join(root, GRAPH_FILE);
  if (!existsSync(file)) {
    // A workspace with a history: the daemon refuses to start without the file (platform.ts), and a starter written
    // by platform init would not hold the jobs its wants were made for. Said as the daemon says it.
    const events = await eventsInLog(root, probe);
    if (events === undefined) {
      return error(
        'platform.json',
        `${file} does not exist, and whether the event log holds a history could not be read (a daemon holds it, or it is damaged)`,
        `if this workspace had wants, ${RESTORE_GRAPH_FILE} If it never had any, write one (platform init makes a starter).`,
      );
    }
    if (events > 0) {
      const now = daemonRuns ? 'The running daemon goes on with the graph it read last until the file is back.' : 'No daemon starts until it is back.';
      return error('platform.json', `${graphFileMissingWithHistory(file, events)} ${now}`, RESTORE_GRAPH_FILE);
    }
    return warn('platform.json', `${file} does not exist: no job can build anything`, 'write one (platform init makes a starter)');
  }
  try {
    const g = await loadGraph(root);
    const slips = execTemplateSlips(g.jobs);
    if (slips.length > 0) return warn('platform.json', slips.join('; '), 'move the partition\'s values into args or env: those are filled in for each partition');
    return ok('platform.json', `${g.jobs.length} job${g.jobs.length === 1 ? '' : 's'}${g.schedules?.length ? `, ${g.schedules.length} schedule${g.schedules.length === 1 ? '' : 's'}` : ''}`);
  } catch (err) {
    // A running daemon goes on with the last valid graph; none starts until the file is fixed.
    const fix = daemonRuns ? 'fix platform.json; the running daemon keeps its last valid graph until then' : 'fix platform.json; no daemon starts until then';
    return error('platform.json', errorMessage(err), fix);
  }
}

/**
 * How many events the workspace's log holds: asked of the running daemon (it holds the log; LevelDB allows one
 * process), else read from the log itself. Undefined when neither can tell (a daemon that does not answer, a log
 * that cannot be opened).
 */
async function eventsInLog(root: string, probe: Probe): Promise<number | undefined> {
  if (probe.state === 'running') {
    try {
      const client = new PlatformClient(probe.url, probe.info.token ? { token: probe.info.token } : {});
      return (await client.listEvents({ limit: 1 })).latest_id;
    } catch {
      return undefined;
    }
  }
  if (probe.state === 'unresponsive') return undefined;
  const belDir = join(platformDir(root), 'bel');
  if (!existsSync(belDir)) return 0;
  let log: EventLog;
  try {
    log = await EventLog.open(belDir);
  } catch {
    return undefined;
  }
  try {
    return log.latestId();
  } finally {
    await log.close();
  }
}

async function daemon(root: string, probe: Probe): Promise<Finding[]> {
  switch (probe.state) {
    case 'absent':
      return [ok('daemon', 'none running (the next platform command starts one)')];
    case 'stale':
      return [warn('daemon', `${serverInfoPath(root)} is stale: ${probe.reason}`, probe.stopFirst ? 'platform stop, then any command starts a new one' : 'nothing: the next command replaces it')];
    case 'unresponsive':
      return [warn('daemon', `pid ${probe.info.pid} does not answer: ${probe.reason}`, `wait, or platform stop; see ${join(platformDir(root), 'server.log')}`)];
    case 'running': {
      const findings = [ok('daemon', `pid ${probe.info.pid} on ${probe.url}, version ${probe.status.version}`)];
      const mode = statSync(serverInfoPath(root)).mode & 0o777;
      if (!probe.info.token) findings.push(warn('token', 'server.json holds no token: the daemon serves anyone on this host', 'platform stop; the next command starts a daemon that requires one'));
      else if ((mode & 0o077) !== 0) findings.push(error('token', `server.json is ${mode.toString(8)}: other users can read the token`, `chmod 600 ${serverInfoPath(root)}`));
      else {
        try {
          await fetchStatus(probe.url, 2_000, probe.info.token);
          findings.push(ok('token', 'server.json is 600 and its token is the daemon\'s'));
        } catch (err) {
          findings.push(error('token', `the daemon refuses the token of server.json (${errorMessage(err)})`, 'platform stop, then any command starts a new daemon'));
        }
      }
      return findings;
    }
  }
}

function disk(dir: string): Finding {
  const s = statfsSync(dir);
  const free = s.bavail * s.bsize;
  const share = s.blocks > 0 ? s.bavail / s.blocks : 1;
  const detail = `${(free / MIB).toFixed(0)} MiB free (${(share * 100).toFixed(0)}%) on the disk holding ${dir}`;
  if (free < 100 * MIB) return error('disk', detail, 'free space: writes are refused (507) when it is full');
  if (free < 1024 * MIB || share < 0.05) return warn('disk', detail, 'free space soon: writes are refused (507) when it is full');
  return ok('disk', detail);
}

/** Runs the daemon says are running whose process is gone on this machine. */
async function stuckRuns(probe: Probe): Promise<Finding> {
  if (probe.state !== 'running') return ok('job runs', 'not checked: the daemon does not answer');
  let runs: JobRunView[];
  try {
    const client = new PlatformClient(probe.url, probe.info.token ? { token: probe.info.token } : {});
    runs = (await client.listJobRuns({ status: 'running', limit: 1000 })).data;
  } catch (err) {
    return warn('job runs', `could not list the running runs: ${errorMessage(err)}`, 'run platform doctor again');
  }
  const gone = runs.filter((r) => r.worker === 'local' && r.pid !== null && r.pid > 0 && !isPidAlive(r.pid));
  if (gone.length > 0) {
    return warn(
      'job runs',
      `${gone.length} running by the log but gone from this machine: ${gone.slice(0, 5).map((r) => `${r.job_run_id} (pid ${r.pid})`).join(', ')}`,
      'the daemon records them when it notices (within seconds); if they stay, platform stop and start again re-attaches or rebuilds them',
    );
  }
  const local = runs.filter((r) => r.worker === 'local').length;
  const waiting = runs.filter((r) => waitingInQueue(r.worker) !== undefined).length;
  const remote = runs.length - local - waiting;
  const parts = [`${local} running here, each with its process`, remote > 0 ? `${remote} on workers` : '', waiting > 0 ? `${waiting} handed to a queue, no worker has taken yet` : ''];
  return ok('job runs', parts.filter((p) => p !== '').join('; '));
}

/**
 * The executor the daemon uses is the one configured: an edit of platform.json's "executor" is not applied live, and a
 * daemon that found runs in flight on another executor keeps that one until they end.
 */
function executorConfigCheck(probe: Probe): Finding {
  if (probe.state !== 'running') return ok('executor config', 'not checked: the daemon does not answer');
  const c = probe.status.executor_config;
  if (!c) return ok('executor config', c === null ? 'not said: the server was given its executor' : 'not said by this daemon (an older version)');
  if (!c.differs) return ok('executor config', `in use as configured (${c.configured_by}): ${c.in_use}`);
  const fix =
    c.held_runs !== null && c.held_runs > 0
      ? `wait for the ${c.held_runs} job run${c.held_runs === 1 ? '' : 's'} on ${c.in_use} to end (platform job-runs list --status running), then restart the daemon: platform stop (the next command starts it on ${c.configured}); or now: platform stop --cancel-runs (they are built again on ${c.configured})`
      : `restart the daemon to use it: platform stop (the next command starts it on ${c.configured})`;
  return warn('executor config', c.note ?? `configured ${c.configured}, in use ${c.in_use}`, fix);
}

/** The executor the daemon hands runs to can run them: Redis answers, a worker takes from the queue. */
function executorCheck(probe: Probe): Finding {
  if (probe.state !== 'running') return ok('executor', 'not checked: the daemon does not answer');
  const e = probe.status.executor;
  if (!e) return ok('executor', 'not said by this daemon (an older version)');
  if (!e.reachable) return error('executor', `${e.kind}, ${e.where}: ${e.problem ?? 'does not answer'}`, 'start Redis there, or fix the executor in platform.json and restart the daemon (platform stop)');
  if (e.problem) return warn('executor', `${e.kind}, ${e.where}: ${e.problem}`, 'start a platform worker against it');
  const counted = workerCountWords(e);
  return ok('executor', `${e.kind}, ${e.where}${counted !== null ? `: ${counted}` : ''}`);
}

/**
 * Reads every event (each must decode, ids dense from the first: 1, or where a compaction left the log, on top of
 * its base), then checks the snapshot against the fold.
 */
async function eventLog(dir: string): Promise<Finding[]> {
  const belDir = join(dir, 'bel');
  if (!existsSync(belDir)) return [ok('event log', 'none yet (no want was ever made)')];
  let log: EventLog;
  try {
    log = await EventLog.open(belDir);
  } catch (err) {
    return [error('event log', `${belDir} cannot be opened: ${errorMessage(err)}`, 'restore .platform/bel from a backup; the daemon will not start on it')];
  }
  try {
    let state: BuildState = initialState();
    const first = log.firstId();
    const basePath = join(dir, 'compacted.bin');
    if (first > 1) {
      const { snapshot: base, why } = await readCompactionBase(basePath, logProbe(log));
      if (!base && (await readSnapshot(join(dir, 'snapshot.bin'), stateCodeFingerprint(), logProbe(log)))) {
        return [
          warn(
            'event log',
            `${belDir} was compacted (it starts at event ${first}) and its base ${basePath} is ${why}; snapshot.bin still holds the state`,
            'start the daemon once (platform start): it starts from snapshot.bin and writes a new compacted.bin at once; until then an upgrade of platform would refuse this workspace',
          ),
        ];
      }
      if (!base) {
        return [
          error(
            'event log',
            `${belDir} was compacted (it starts at event ${first}) but its base ${basePath} is ${why}: the state of the removed events is lost`,
            'restore .platform/ (bel/ and compacted.bin together) from a backup; the daemon will not start on it',
          ),
        ];
      }
      state = fromSnapshot(base);
    }
    const from = state.last_event_id + 1;
    let expected = from;
    try {
      for await (const batch of log.replay(from)) {
        for (const event of batch) {
          if (event.event_id !== expected) throw new Error(`event ${expected} is missing (the next is ${event.event_id})`);
          state = reduce(state, event);
          expected++;
        }
      }
    } catch (err) {
      return [error('event log', `${belDir} is damaged: ${errorMessage(err)}`, 'restore .platform/bel from a backup; the daemon will not start on it')];
    }
    const findings = [
      ok(
        'event log',
        first > 1
          ? `events ${first}..${log.latestId()} (compacted: the state before is in compacted.bin, at event ${from - 1}), those after it decoded, ids dense`
          : `${expected - 1} events, each decoded, ids dense from 1`,
      ),
    ];
    findings.push(await snapshot(dir, log, state, from - 1));
    const lost = [...state.job_runs_by_status.running].map(([, id]) => state.job_runs.get(id)!).filter((r) => r.worker === 'local' && r.pid > 0 && !isPidAlive(r.pid));
    findings.push(
      lost.length > 0
        ? warn('job runs', `${lost.length} running by the log with no process left: ${lost.slice(0, 5).map((r) => r.job_run_id).join(', ')}`, 'the next daemon records their real end, or rebuilds them')
        : ok('job runs', `${state.job_runs_by_status.running.size} running by the log, each with its process`),
    );
    return findings;
  } finally {
    await log.close();
  }
}

/** `baseId`: the last event the compaction base holds (0 when the log was never compacted): a start replays those after it. */
async function snapshot(dir: string, log: EventLog, full: BuildState, baseId: number): Promise<Finding> {
  const path = join(dir, 'snapshot.bin');
  if (!existsSync(path)) return ok('snapshot', noSnapshotYet(full.last_event_id - baseId));
  const { state: loaded, why, image, delta, otherVersion } = await readSnapshotOrWhy(path, stateCodeFingerprint(), logProbe(log));
  if (!loaded) {
    return warn(
      'snapshot',
      `${path} cannot be used: ${why}`,
      `nothing: a start replays the log instead, and a new one is written as when there is none (a start past ${groupDigits(SNAPSHOT_AFTER_REPLAY_EVENTS)} events replayed, a clean stop past ${groupDigits(SNAPSHOT_MIN_NEW_EVENTS)} new)`,
    );
  }
  // A delta that cannot be used costs a start more replay, nothing else: said, not warned of.
  const withDelta = otherVersion
    ? ' (written by another version of platform: a start reads its records and builds every index again, then writes its own)'
    : !delta ? '' : delta.unused === undefined ? ` (the image at event ${image.last_event_id} and its delta)` : ` (its delta ${deltaPathOf(path)} not used: ${delta.unused})`;
  let state = loaded;
  for await (const batch of log.replay(loaded.last_event_id + 1)) for (const e of batch) state = reduce(state, e);
  const same = state.wants.size === full.wants.size && state.job_runs.size === full.job_runs.size && state.partitions.size === full.partitions.size && state.builds.size === full.builds.size;
  if (!same) return error('snapshot', `${path} and the log disagree`, `remove ${path}: the next start replays the log`);
  return ok('snapshot', `at event ${loaded.last_event_id}${withDelta}; with the events after it, the same state as the whole log`);
}

/**
 * When a workspace without a snapshot gets one, by the store's own thresholds (state-store.ts): a start writes one
 * only after a replay of SNAPSHOT_AFTER_REPLAY_EVENTS or more (a shorter one is fast), a clean stop once
 * SNAPSHOT_MIN_NEW_EVENTS or more came since the last. "The next start ... writes one" was said of any log.
 */
function noSnapshotYet(toReplay: number): string {
  const replays = `none: the next start replays the log's ${groupDigits(toReplay)} event${toReplay === 1 ? '' : 's'}`;
  if (toReplay >= SNAPSHOT_AFTER_REPLAY_EVENTS) return `${replays}, then writes one`;
  return (
    `${replays} (a start writes one only after replaying ${groupDigits(SNAPSHOT_AFTER_REPLAY_EVENTS)} or more); ` +
    `a clean stop (platform stop) writes one once ${groupDigits(SNAPSHOT_MIN_NEW_EVENTS)} or more events came since the last, ` +
    `a running daemon once ${groupDigits(SNAPSHOT_WHEN_QUIET_EVENTS)} or more came and the log rests`
  );
}
