/**
 * A DAG of partitions laid out by dagre (left to right, inputs first) and drawn as SVG: each node a partition
 * coloured by its status, each edge an input. Nodes are links to the partition's page.
 */
import { Graph, layout } from '@dagrejs/dagre';
import { useMemo } from 'preact/hooks';
import { navigate } from '../router.js';

export interface DagNode {
  id: string;
  label: string;
  /** A partition status, 'absent', or '' when unknown. */
  status: string;
  /** Where a click goes. */
  href?: string;
}

const NODE_W = 210;
const NODE_H = 34;

function short(text: string): string {
  return text.length > 24 ? `…${text.slice(-23)}` : text;
}

export function Dag({ nodes, edges, label }: { nodes: DagNode[]; edges: Array<[string, string]>; label: string }) {
  const laid = useMemo(() => {
    const g = new Graph();
    g.setGraph({ rankdir: 'LR', nodesep: 14, ranksep: 50, marginx: 8, marginy: 8 });
    g.setDefaultEdgeLabel(() => ({}));
    for (const n of nodes) g.setNode(n.id, { width: NODE_W, height: NODE_H });
    for (const [from, to] of edges) if (g.hasNode(from) && g.hasNode(to)) g.setEdge(from, to);
    layout(g);
    const size = g.graph();
    return {
      width: Math.max(size.width ?? 0, NODE_W),
      height: Math.max(size.height ?? 0, NODE_H),
      places: new Map(nodes.map((n) => [n.id, g.node(n.id)] as const)),
      paths: g.edges().map((e) => ({ key: `${e.v}->${e.w}`, points: (g.edge(e).points ?? []) as Array<{ x: number; y: number }> })),
    };
  }, [nodes.map((n) => n.id).join('\n'), edges.map((e) => e.join('>')).join('\n')]);

  return (
    <div class="dag" role="group" aria-label={label}>
      <svg width={laid.width} height={laid.height} viewBox={`0 0 ${laid.width} ${laid.height}`}>
        <defs>
          <marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" markerHeight="6" orient="auto-start-reverse">
            <path d="M 0 0 L 10 5 L 0 10 z" class="dag-arrow" />
          </marker>
        </defs>
        {laid.paths.map((p) => (
          <path key={p.key} class="dag-edge" marker-end="url(#arrow)" d={p.points.map((pt, i) => `${i === 0 ? 'M' : 'L'} ${pt.x} ${pt.y}`).join(' ')} />
        ))}
        {nodes.map((n) => {
          const at = laid.places.get(n.id);
          if (!at) return null;
          const x = at.x - NODE_W / 2;
          const y = at.y - NODE_H / 2;
          const go = () => n.href && navigate(n.href);
          return (
            <g
              key={n.id}
              class={`dag-node status-${n.status || 'unknown'}`}
              data-ref={n.id}
              data-status={n.status}
              transform={`translate(${x},${y})`}
              tabIndex={n.href ? 0 : -1}
              role={n.href ? 'link' : undefined}
              aria-label={`${n.label}: ${n.status || 'unknown'}`}
              onClick={go}
              onKeyDown={(e) => e.key === 'Enter' && go()}
            >
              <rect width={NODE_W} height={NODE_H} rx="6" />
              <text x="8" y="21">
                {short(n.label)}
              </text>
              <text x={NODE_W - 8} y="21" text-anchor="end" class="dag-status">
                {n.status}
              </text>
              <title>{`${n.label} (${n.status || 'unknown'})`}</title>
            </g>
          );
        })}
      </svg>
    </div>
  );
}
