/** A directory's identity, its device and inode: the same whatever path leads to it, and after it is moved. */
import { statSync } from 'node:fs';

/** `<dev>:<ino>`, or undefined when the path cannot be read. */
export function dirIdentity(path: string): string | undefined {
  try {
    const st = statSync(path);
    return `${st.dev}:${st.ino}`;
  } catch {
    return undefined;
  }
}
