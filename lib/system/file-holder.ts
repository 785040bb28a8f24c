/**
 * Which process has a file open, by its open descriptors (`/proc/<pid>/fd`): readable for this user's processes only,
 * which is where a workspace's other holder is. For error messages: it names the process to stop.
 */
import { readdirSync, readFileSync, readlinkSync, realpathSync } from 'node:fs';

export interface FileHolder {
  pid: number;
  /** Its command line, arguments joined by spaces ('' when unreadable). */
  command: string;
}

/** The first process other than this one holding `path` open; undefined when none is found (or /proc is absent). */
export function fileHolder(path: string): FileHolder | undefined {
  let target: string;
  let pids: string[];
  try {
    target = realpathSync(path);
    pids = readdirSync('/proc').filter((e) => /^\d+$/.test(e) && Number(e) !== process.pid);
  } catch {
    return undefined;
  }
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      let link: string;
      try {
        link = readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        continue;
      }
      if (link !== target) continue;
      let command = '';
      try {
        command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter((a) => a !== '').join(' ');
      } catch {
        // gone meanwhile, or not ours to read: the pid is still worth naming
      }
      return { pid: Number(pid), command };
    }
  }
  return undefined;
}
