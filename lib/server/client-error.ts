/**
 * The answer to a request node's HTTP parser refuses before any handler sees it (`clientError`). One whose headers,
 * its URL included, are over what node reads (16 KiB: `GET /api/wants/<20,000 characters>`) gets a JSON error that
 * says so, as every other refusal of the API does, where node wrote a bare 431 with no body. Every other parser error
 * is answered as node answers it.
 */
import { maxHeaderSize } from 'node:http';
import type { Duplex } from 'node:stream';
import { MAX_REF_LENGTH } from '../api/schemas/common.js';

/** Node's own answers (lib/_http_server.js), for the errors this does not word itself. */
const NODE_ANSWERS: Readonly<Record<string, string>> = {
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 'HTTP/1.1 413 Payload Too Large\r\nConnection: close\r\n\r\n',
  ERR_HTTP_REQUEST_TIMEOUT: 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n',
};
const BAD_REQUEST = 'HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n';

export const HEADERS_TOO_LARGE =
  `The request's headers (its URL included) are too large: over ${Math.floor(maxHeaderSize / 1024)} KiB, the most the server reads. ` +
  `ids and refs are at most ${MAX_REF_LENGTH} characters: check the URL for one that is not, and send many refs in a JSON body ` +
  '(POST /api/partitions/lookup, POST /api/wants) rather than in the URL.';

export function answerClientError(err: Error & { code?: string }, socket: Duplex): void {
  // As node does: nothing is written to a connection that is gone, or under an answer already begun on it (a
  // pipelined request after one being answered), whose client would read the two as one.
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
  if (!socket.writable || inFlight?.headersSent) {
    socket.destroy(err);
    return;
  }
  if (err.code !== 'HPE_HEADER_OVERFLOW') {
    socket.write((err.code !== undefined ? NODE_ANSWERS[err.code] : undefined) ?? BAD_REQUEST);
    socket.destroy(err);
    return;
  }
  const body = JSON.stringify({ error: HEADERS_TOO_LARGE });
  // Ended, then closed once written: the parser has stopped reading this connection, and a client still sending its
  // headers would wait on it.
  socket.end(
    'HTTP/1.1 431 Request Header Fields Too Large\r\n' +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
    () => socket.destroy(),
  );
}
