/** The daemon's JSON API, from the page (same origin). Errors carry the server's own message. */
import type { Page } from '../../lib/api/page.js';

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

async function answer<T>(res: Response): Promise<T> {
  const body: unknown = await res.json().catch(() => undefined);
  if (!res.ok) {
    // `{error}` from the JSON API, `{code, message}` from a Connect RPC (AnalyzeGraph).
    const said = typeof body === 'object' && body !== null ? ((body as { error?: unknown }).error ?? (body as { message?: unknown }).message) : undefined;
    const error = typeof said === 'string' && said !== '' ? said : `${res.status} ${res.statusText}`;
    throw new ApiError(error, res.status);
  }
  return body as T;
}

/**
 * The daemon's answer, or an error that says it gave none: fetch's own is "Failed to fetch", which a form or a
 * list showed as it is (QA, session 36), not saying that the daemon stopped nor where to find it. A read or write
 * abandoned by the page (AbortError) stays what it is.
 */
async function reach(method: string, path: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(path, init);
  } catch (err) {
    if (err instanceof DOMException && err.name === 'AbortError') throw err;
    throw new ApiError(
      `The daemon at ${location.origin} did not answer (${method} ${path.split('?')[0]}): it may be stopped, or listening on another port; run platform ui for a link to it.`,
      0,
    );
  }
}

export async function get<T>(path: string, signal?: AbortSignal): Promise<T> {
  return answer<T>(await reach('GET', path, { headers: { accept: 'application/json' }, ...(signal ? { signal } : {}) }));
}

export async function send<T>(method: 'POST' | 'DELETE', path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
  const init: RequestInit = { method, headers: { accept: 'application/json' }, ...(signal ? { signal } : {}) };
  if (body !== undefined) {
    init.headers = { ...init.headers, 'content-type': 'application/json' };
    init.body = JSON.stringify(body);
  }
  return answer<T>(await reach(method, path, init));
}

/** What went wrong, in the server's words: `String(err)` put the error's name first ("Error: Want 'w-2' was ..."). */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** A query string from the defined values. */
export function qs(params: Record<string, string | number | undefined>): string {
  const entries = Object.entries(params).filter((e): e is [string, string | number] => e[1] !== undefined && e[1] !== '');
  return entries.length === 0 ? '' : `?${new URLSearchParams(entries.map(([k, v]) => [k, String(v)])).toString()}`;
}

export type { Page };
