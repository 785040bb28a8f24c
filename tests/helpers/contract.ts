/**
 * Checks an HTTP answer against the API's OpenAPI document: the operation its method and path match, the status
 * documented for it, the media type, and a JSON body against that status's schema (ajv, JSON Schema 2020-12, the
 * dialect of OpenAPI 3.1). The document is `openApiDocument()`, the very function GET /api/openapi.json serves
 * (api-contract.test.ts checks the served one is the same).
 */
import Ajv2020Module from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { ValidateFunction } from 'ajv';
import { openApiDocument } from '../../lib/server/openapi.js';

const DOC_ID = 'https://platform.invalid/openapi.json';

export const CONTRACT_DOCUMENT = openApiDocument();

interface MediaObject {
  schema?: unknown;
}
interface ResponseObject {
  content?: Record<string, MediaObject>;
}
interface OperationObject {
  responses: Record<string, ResponseObject>;
}
type PathItem = Record<string, OperationObject>;

const paths = CONTRACT_DOCUMENT.paths as unknown as Record<string, PathItem>;

const ajv = new Ajv2020Module.default({ strict: false, allErrors: false });
addFormatsModule.default(ajv);
ajv.addSchema({ ...CONTRACT_DOCUMENT, $id: DOC_ID });
const validators = new Map<string, ValidateFunction>();

/** Templates sorted so a literal segment wins over a parameter (`/api/events/stream` before `/api/events/{id}`). */
const templates = Object.keys(paths)
  .map((template) => ({
    template,
    params: (template.match(/\{/g) ?? []).length,
    re: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}/g, '[^/]+')}$`),
  }))
  .sort((a, b) => a.params - b.params);

export function matchPath(path: string): string | undefined {
  return templates.find((t) => t.re.test(path))?.template;
}

function pointer(...segments: string[]): string {
  return segments.map((s) => encodeURIComponent(s.replace(/~/g, '~0').replace(/\//g, '~1'))).join('/');
}

function validatorFor(template: string, method: string, status: string): ValidateFunction {
  const ref = `${DOC_ID}#/${pointer('paths', template, method, 'responses', status, 'content', 'application/json', 'schema')}`;
  let v = validators.get(ref);
  if (!v) {
    v = ajv.compile({ $ref: ref });
    validators.set(ref, v);
  }
  return v;
}

const errorBody = (): ValidateFunction => {
  const ref = `${DOC_ID}#/${pointer('components', 'schemas', 'ErrorBody')}`;
  let v = validators.get(ref);
  if (!v) {
    v = ajv.compile({ $ref: ref });
    validators.set(ref, v);
  }
  return v;
};

/**
 * What is wrong with the answer, or undefined if it fits. `url` may be absolute or a path with a query. Methods
 * the document has no operations for (a CORS preflight's OPTIONS, HEAD) are not checked, nor are paths outside
 * it, but for their JSON errors, which must be `ErrorBody`s.
 */
export function contractProblem(method: string, url: string, status: number, contentType: string | null | undefined, body: string): string | undefined {
  const path = new URL(url, 'http://127.0.0.1').pathname;
  const m = method.toLowerCase();
  const media = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  const where = `${method.toUpperCase()} ${path} -> ${status}`;
  const template = matchPath(path);
  const operation = template ? paths[template]![m] : undefined;
  if (!template || !operation) {
    if (status >= 400 && media === 'application/json' && body !== '') return check(errorBody(), body, `${where} (no operation; an error)`);
    return undefined;
  }
  const answer = operation.responses[String(status)];
  if (!answer) return `${where}: status ${status} is not documented for ${m.toUpperCase()} ${template} (documented: ${Object.keys(operation.responses).join(', ')})`;
  if (!answer.content) return undefined;
  if (media === '' && body === '') return undefined;
  if (!(media in answer.content)) return `${where}: media type ${JSON.stringify(media)} is not documented (documented: ${Object.keys(answer.content).join(', ')})`;
  if (media !== 'application/json') return undefined;
  return check(validatorFor(template, m, String(status)), body, `${where} (${m.toUpperCase()} ${template})`);
}

function check(validate: ValidateFunction, body: string, where: string): string | undefined {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return `${where}: the body is not JSON: ${body.slice(0, 200)}`;
  }
  if (validate(value)) return undefined;
  const errors = (validate.errors ?? []).map((e) => `${e.instancePath || '(root)'} ${e.message ?? ''} ${JSON.stringify(e.params)}`).join('; ');
  return `${where}: the body does not fit the documented schema: ${errors}; body: ${body.slice(0, 500)}`;
}

/** Throws (failing the test that made the request) when the answer breaks the contract. */
export function assertContract(method: string, url: string, status: number, contentType: string | null | undefined, body: string): void {
  const problem = contractProblem(method, url, status, contentType, body);
  if (problem !== undefined) throw new Error(`API contract: ${problem}`);
}

/** A fetch Response checked against the contract (its JSON body read from a clone; streams are left alone). */
export async function checkedResponse(method: string, url: string, res: Response): Promise<Response> {
  // A followed redirect (GET /login -> /) answers for where it ended.
  if (res.redirected) [method, url] = ['GET', res.url];
  const type = res.headers.get('content-type');
  const media = (type ?? '').split(';')[0]!.trim().toLowerCase();
  if (media === 'text/event-stream') {
    assertContract(method, url, res.status, type, '');
    return res;
  }
  // Only JSON bodies are read here; text (a log can be large) is checked for its status and media type alone.
  const body = media === 'application/json' ? await res.clone().text() : '';
  assertContract(method, url, res.status, type, body);
  return res;
}
