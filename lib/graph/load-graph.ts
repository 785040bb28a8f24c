import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { emptyGraph, type GraphDefinition } from './graph-definition.js';
import { GraphError } from './graph-error.js';
import { parseGraph } from './parse-graph.js';
import { errorMessage } from '../errors.js';
import { GRAPH_FILE } from './graph-file.js';

export { GRAPH_FILE };

/**
 * Reads `<workspaceRoot>/platform.json`. A missing file is an empty graph (a fresh workspace); any other problem is a
 * GraphError `invalid_graph` naming the file (and, for bad JSON, the line and column).
 */
export async function loadGraph(workspaceRoot: string): Promise<GraphDefinition> {
  const file = join(workspaceRoot, GRAPH_FILE);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return emptyGraph();
    throw new GraphError('invalid_graph', `${file}: cannot read the job graph: ${errorMessage(err)}`, {}, { cause: err });
  }
  return parseGraphText(text, file);
}

/** Pure: JSON text -> graph. Bad JSON names `source` and the position as line:column. */
export function parseGraphText(text: string, source: string): GraphDefinition {
  let json: unknown;
  try {
    json = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch (err) {
    const message = errorMessage(err);
    const where = jsonErrorPosition(message, text);
    throw new GraphError(
      'invalid_graph',
      `${source}${where ? `:${where.line}:${where.column}` : ''}: not valid JSON (${message}). ` +
        'Fix the JSON at that spot; note that JSON allows no comments and no trailing commas.',
      {},
      { cause: err },
    );
  }
  return parseGraph(json, source);
}

/** Line/column (1-based) of the `position N` that V8 puts in JSON.parse errors; end of text when it says so. */
function jsonErrorPosition(message: string, text: string): { line: number; column: number } | undefined {
  const m = /at position (\d+)/.exec(message);
  let offset: number;
  if (m) offset = Number(m[1]);
  else if (/end of JSON input/i.test(message)) offset = text.length;
  else return undefined;
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  const column = offset - (before.lastIndexOf('\n') + 1) + 1;
  return { line, column };
}
