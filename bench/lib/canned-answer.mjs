// The exact bytes of one HTTP answer, read off a raw socket, for bench/servers/canned-server.mjs:
// sqlgate's answer to a request, which a bare node:http server then sends to every request, so the
// two are compared on the same bytes.
import { Buffer } from 'node:buffer';
import net from 'node:net';
import { URL } from 'node:url';
import { clearTimeout, setTimeout } from 'node:timers';

const HEAD_END = '\r\n\r\n';
/** Headers node:http writes by itself on every answer of a kept-alive connection. */
const ADDED_BY_NODE = new Set(['date', 'connection', 'keep-alive']);

/** The status code, headers ([name, value] in order) and body of raw HTTP/1.1 answer bytes. */
function parseAnswer(raw) {
  const headEnd = raw.indexOf(HEAD_END);
  const [statusLine, ...headerLines] = raw.subarray(0, headEnd).toString('latin1').split('\r\n');
  const headers = headerLines.map((line) => {
    const colon = line.indexOf(':');
    return [line.slice(0, colon), line.slice(colon + 1).trim()];
  });
  return {
    statusCode: Number(statusLine.split(' ')[1]),
    headers,
    body: raw.subarray(headEnd + HEAD_END.length),
  };
}

/**
 * The raw bytes `url` answers to a POST of `body` to /api/query on a kept-alive connection, as a
 * load generator's request gets them. The answer must carry a Content-Length (sqlgate's JSON
 * answers do), which says where it ends.
 */
export function rawAnswer(url, body, timeoutMs = 10_000) {
  const { hostname, port } = new URL(url);
  const payload = Buffer.from(JSON.stringify(body));
  const request = Buffer.concat([
    Buffer.from(
      `POST /api/query HTTP/1.1\r\nHost: ${hostname}:${port}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${payload.length}\r\n\r\n`,
      'latin1',
    ),
    payload,
  ]);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    const chunks = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`${url} did not answer within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.on('error', reject);
    socket.on('data', (chunk) => {
      chunks.push(chunk);
      const raw = Buffer.concat(chunks);
      const headEnd = raw.indexOf(HEAD_END);
      if (headEnd === -1) return;
      const length = parseAnswer(raw).headers.find(([name]) => /^content-length$/i.test(name));
      if (!length) {
        socket.destroy();
        reject(new Error(`${url} answered without a Content-Length`));
        return;
      }
      if (raw.length < headEnd + HEAD_END.length + Number(length[1])) return;
      clearTimeout(timer);
      socket.destroy();
      resolve(raw);
    });
    socket.write(request);
  });
}

/**
 * What canned-server.mjs needs to send `raw` again (its CANNED_ANSWER): the status, the headers
 * node:http would not add by itself, as a flat [name, value, …] list (writeHead keeps their case
 * and order), and the body in base64.
 */
export function cannedAnswerOf(raw) {
  const { statusCode, headers, body } = parseAnswer(raw);
  return JSON.stringify({
    statusCode,
    headers: headers.filter(([name]) => !ADDED_BY_NODE.has(name.toLowerCase())).flat(),
    body: body.toString('base64'),
  });
}

/** The bytes of an answer with its Date header's value blanked: the one part that changes. */
export function withoutDate(raw) {
  return raw.toString('latin1').replace(/\r\nDate: [^\r]*/i, '\r\nDate: –');
}
