// A reverse proxy in front of code-server that makes its pages cross-origin isolated: every
// response gets COOP `same-origin` and COEP `require-corp` (and CORP `same-origin`, so every
// resource may be embedded: they all come from this one origin), which is what vscode.dev does
// with `?vscode-coi=on`. Then `crossOriginIsolated` is true and SharedArrayBuffer exists in the
// workbench, the web-worker extension host and the workers it starts, so WebAssembly gets
// helper threads. HTTP requests and WebSocket upgrades (the remote connection) are passed
// through unchanged (the Host header included). Bound to 127.0.0.1 on a free port; `close()` ends it and its sockets.
import http from 'node:http';
import net from 'node:net';

const ISOLATION = {
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-embedder-policy': 'require-corp',
  'cross-origin-resource-policy': 'same-origin',
};

/** Starts a proxy to `http://127.0.0.1:targetPort`; resolves to { port, base, close }. */
export function startCoiProxy(targetPort) {
  const sockets = new Set();
  const server = http.createServer((req, res) => {
    // The Host header stays the proxy's: code-server checks that a WebSocket's Origin matches it.
    const up = http.request(
      { host: '127.0.0.1', port: targetPort, method: req.method, path: req.url, headers: req.headers },
      (r) => {
        const out = { ...r.headers, ...ISOLATION };
        res.writeHead(r.statusCode ?? 502, out);
        r.pipe(res);
      },
    );
    up.on('error', (e) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`proxy: ${e.message}`);
    });
    req.pipe(up);
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  // WebSockets: replay the upgrade request to code-server and splice the two sockets.
  server.on('upgrade', (req, socket, head) => {
    const up = net.connect(targetPort, '127.0.0.1', () => {
      const lines = [`${req.method} ${req.url} HTTP/${req.httpVersion}`];
      for (let i = 0; i < req.rawHeaders.length; i += 2) lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
      up.write(`${lines.join('\r\n')}\r\n\r\n`);
      if (head?.length) up.write(head);
      up.pipe(socket);
      socket.pipe(up);
    });
    sockets.add(up);
    up.on('close', () => sockets.delete(up));
    up.on('error', () => socket.destroy());
    socket.on('error', () => up.destroy());
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      resolve({
        port,
        base: `http://127.0.0.1:${port}`,
        close: () =>
          new Promise((done) => {
            for (const s of sockets) s.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}
