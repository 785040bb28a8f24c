/**
 * An event id in a path past what the server can read exactly: the 400 names the id as it was sent and says what
 * the largest is, as the query parameters' 400 does (a real server and event log in a temp workspace).
 */
import test from 'ava';
import { rawRequest, startServer } from './helpers/server-fixture.js';

test("an event id too large to be one names the id as sent and the largest there is, not a rounded number", async (t) => {
  const f = await startServer(t);
  for (const id of ['9007199254740993', '18446744073709551616', '99999999999999999999']) {
    const res = await rawRequest(`${f.url}/api/events/${id}`);
    t.is(res.status, 400, res.body);
    const { error } = JSON.parse(res.body) as { error: string };
    t.true(error.includes(id), `the id as sent: ${error}`);
    t.true(error.includes(String(Number.MAX_SAFE_INTEGER)), `the largest id: ${error}`);
  }
  // The largest id itself is an id, of no event yet.
  const largest = await rawRequest(`${f.url}/api/events/${Number.MAX_SAFE_INTEGER}`);
  t.is(largest.status, 404, largest.body);
});
