/** A plain HTTP server on 127.0.0.1 that answers as a test says (a stand-in daemon for the client's tests). */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type StubHandler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

/** Serves `handler` (given the whole request body) until the test ends; resolves with the base URL. */
export async function serveStub(
  t: { teardown: (fn: () => Promise<void>) => void },
  handler: StubHandler,
  /** Sees the server before it listens (to count its connections, say). */
  watch?: (server: Server) => void,
): Promise<string> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => handler(req, res, body));
  });
  watch?.(server);
  return listenOnLoopback(t, server);
}

/** Listens on 127.0.0.1 at a free port until the test ends (its connections closed then); resolves with the URL. */
export async function listenOnLoopback(t: { teardown: (fn: () => Promise<void>) => void }, server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A loopback port nothing listens on (it was free a moment ago). */
export async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}
