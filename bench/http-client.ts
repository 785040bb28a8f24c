/**
 * The benches' HTTP client: node's \`http\` with kept-alive connections. The benches run on the daemon's own two cores,
 * and \`fetch\` (undici) cost 1.25 ms of CPU a POST where this costs ~0.35 ms (and ~0.5 ms of latency a GET): with
 * \`fetch\`, intake and read figures measured the client as much as the daemon.
 */
import { Agent, request } from 'node:http';

const agent = new Agent({ keepAlive: true, maxSockets: 64 });

function call(url: string, method: string, path: string, body?: string): Promise<{ status: number; text: string }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = body === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) };
    const req = request({ host: u.hostname, port: u.port, path, method, agent, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** POST /api/wants; anything but 201 throws with the daemon's answer. */
export async function postWant(url: string, body: unknown): Promise<{ want_id: string }> {
  const { status, text } = await call(url, 'POST', '/api/wants', JSON.stringify(body));
  if (status !== 201) throw new Error(`POST /api/wants: ${status} ${text}`);
  return JSON.parse(text) as { want_id: string };
}

/** GET `path`, its body read whole; anything but 200 throws. */
export async function get(url: string, path: string): Promise<string> {
  const { status, text } = await call(url, 'GET', path);
  if (status !== 200) throw new Error(`GET ${path}: ${status} ${text}`);
  return text;
}
