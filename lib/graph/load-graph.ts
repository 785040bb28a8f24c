import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { emptyGraph, type GraphDefinition } from './graph-definition.js';
import { GraphError } from './graph-error.js';
import { parseGraph } from './parse-graph.js';
import { errorMessage } from '../errors.js';
import { GRAPH_FILE } from './graph-file.js';
import { jsonErrorOffset } from './json-error-offset.js';

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
      `${source}:${where.line}:${where.column}: not valid JSON (${message}). ` +
        'Fix the JSON at that spot; note that JSON allows no comments and no trailing commas.',
      {},
      { cause: err },
    );
  }
  return parseGraph(json, source);
}

/** Line/column (1-based) of the error: the `position N` V8 gives, or where a walk of the text finds it. */
function jsonErrorPosition(message: string, text: string): { line: number; column: number } {
  const m = /at position (\d+)/.exec(message);
  const offset = m ? Number(m[1]) : jsonErrorOffset(text);
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  const column = offset - (before.lastIndexOf('\n') + 1) + 1;
  return { line, column };
}
