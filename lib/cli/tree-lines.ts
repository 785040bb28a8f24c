/** A tree as terminal lines: the root, then `├─`/`└─` branches; `more` notes what a node's listed children leave out. */
export function treeLines<N>(root: N, label: (n: N) => string, children: (n: N) => readonly N[], more: (n: N) => string | undefined): string[] {
  const out: string[] = [];
  const walk = (n: N, prefix: string, last: boolean, top: boolean) => {
    out.push(top ? label(n) : `${prefix}${last ? '└─ ' : '├─ '}${label(n)}`);
    const childPrefix = top ? '' : `${prefix}${last ? '   ' : '│  '}`;
    const kids = children(n);
    const note = more(n);
    kids.forEach((c, i) => walk(c, childPrefix, i === kids.length - 1 && note === undefined, false));
    if (note !== undefined) out.push(`${childPrefix}└─ ${note}`);
  };
  walk(root, '', true, true);
  return out;
}
