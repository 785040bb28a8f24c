/**
 * `${name}` templates of declarative jobs: inputs[].partition_ref, args and env values. `name` is a named group of
 * the job's output regex. Any other `$` is literal.
 */

const VARIABLE = /\$\{([^}]*)\}/g;

/** A template split once into literal text and variable names, so filling is a join. */
export interface CompiledTemplate {
  source: string;
  /** Literal pieces; `literals.length === variables.length + 1`. */
  literals: string[];
  variables: string[];
}

/** The variable names used in a template, in order of appearance (repeats kept). */
export function templateVariables(template: string): string[] {
  return [...template.matchAll(VARIABLE)].map((m) => m[1]!);
}

export function compileTemplate(template: string): CompiledTemplate {
  const literals: string[] = [];
  const variables: string[] = [];
  let last = 0;
  for (const m of template.matchAll(VARIABLE)) {
    literals.push(template.slice(last, m.index));
    variables.push(m[1]!);
    last = m.index! + m[0].length;
  }
  literals.push(template.slice(last));
  return { source: template, literals, variables };
}

/** Fills a compiled template; a variable without a value (an optional group that did not take part) becomes ''. */
export function fillCompiledTemplate(template: CompiledTemplate, groups: Record<string, string>): string {
  if (template.variables.length === 0) return template.source;
  let out = template.literals[0]!;
  for (let i = 0; i < template.variables.length; i++) {
    out += (groups[template.variables[i]!] ?? '') + template.literals[i + 1]!;
  }
  return out;
}

/** Replaces every `${name}` with `groups[name]` ('' when absent). */
export function fillTemplate(template: string, groups: Record<string, string>): string {
  return template.replace(VARIABLE, (_all, name: string) => groups[name] ?? '');
}
