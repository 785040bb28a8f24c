/**
 * The characters no partition ref or job label may hold: the C0 controls, DEL and the C1 controls. A terminal acts
 * on a C1 control as on any other (NEL ends the line, CSI starts an escape sequence), so a ref holding one would
 * rewrite what `platform` prints wherever the ref is shown.
 */

/** The ranges as regular-expression source, for a character class (`[...]`, `[^...]`); one source for all checks. */
export const CONTROL_RANGES_SOURCE = '\\u0000-\\u001f\\u007f-\\u009f';

export const CONTROL_CHARACTER = new RegExp(`[${CONTROL_RANGES_SOURCE}]`);

/** The ranges as a message names them. */
export const CONTROL_RANGES = 'U+0000-U+001F, U+007F-U+009F';

/** `text` as a JSON string, DEL and C1 controls escaped too: JSON.stringify escapes only those below U+0020. */
export function quoted(text: string): string {
  return escapeControls(JSON.stringify(text));
}

/** JSON text with DEL and the C1 controls written as `\u` escapes (still the same JSON), safe to print. */
export function escapeControls(json: string): string {
  return json.replace(/[\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
