/** Each page has a URL of its own (history API), so deep links and reloads land on the same page. */
import { useEffect, useState } from 'preact/hooks';

const listeners = new Set<() => void>();

export function navigate(to: string): void {
  if (to === location.pathname + location.search) return;
  history.pushState(null, '', to);
  for (const l of listeners) l();
}

window.addEventListener('popstate', () => {
  for (const l of listeners) l();
});

export interface Location {
  path: string;
  query: URLSearchParams;
}

export function useLocation(): Location {
  const [, setTick] = useState(0);
  useEffect(() => {
    const l = () => setTick((n) => n + 1);
    listeners.add(l);
    return () => listeners.delete(l);
  }, []);
  return { path: location.pathname, query: new URLSearchParams(location.search) };
}

/** Replaces the query (filters) without a new history entry per keystroke. */
export function setQuery(params: Record<string, string>): void {
  const q = new URLSearchParams(Object.entries(params).filter(([, v]) => v !== ''));
  const text = q.toString();
  history.replaceState(null, '', `${location.pathname}${text ? `?${text}` : ''}`);
  for (const l of listeners) l();
}

/** The page of a paged view, as the URL keeps it (`?offset=`): 0 when absent or not a whole number. */
export function queryOffset(query: URLSearchParams): number {
  const n = Number(query.get('offset'));
  return Number.isSafeInteger(n) && n > 0 ? n : 0;
}

/**
 * Moves a paged view to `offset`, in the URL as the filters are (the first page has none), so that a reload or a
 * shared link opens the same page. The rest of the query is kept.
 */
export function setOffset(offset: number): void {
  setQuery({ ...Object.fromEntries(new URLSearchParams(location.search)), offset: offset > 0 ? String(offset) : '' });
}

/** A path segment decoded; undefined when it is not percent-encoded UTF-8 (`%ZZ`, `%E0%A4%A`), which a typed or cut link can be. */
export function decodeSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/** The first segment of `path` that is not percent-encoded UTF-8, if one is not. */
export function malformedSegment(path: string): string | undefined {
  return path.split('/').find((s) => decodeSegment(s) === undefined);
}

/** `/wants/:id` against `/wants/w-1` -> {id: 'w-1'}; undefined when it does not match, or a parameter is not decodable. */
export function match(pattern: string, path: string): Record<string, string> | undefined {
  const p = pattern.split('/');
  const a = path.split('/');
  if (p.length !== a.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < p.length; i++) {
    if (p[i]!.startsWith(':')) {
      const value = decodeSegment(a[i]!);
      if (value === undefined) return undefined;
      params[p[i]!.slice(1)] = value;
    } else if (p[i] !== a[i]) return undefined;
  }
  return params;
}

/** `/partitions/a/b/c` -> {ref: 'a/b/c'}: every segment after `/partitions/`, each decoded; undefined when one is not decodable. */
export function partitionPath(path: string): Record<string, string> | undefined {
  const segments = path.split('/').slice(2).map(decodeSegment);
  if (segments.length === 0 || segments.some((s) => s === undefined || s === '')) return undefined;
  return { ref: segments.join('/') };
}
