// A loopback stand-in of an OpenAI-compatible chat-completions endpoint for browser tests: a real
// HTTP server on 127.0.0.1 (another port: another origin) with CORS like a hosted API, so the page
// under test sends it real cross-origin requests. It records every request (OPTIONS preflights too)
// and answers each POST with one assistant message whose content `reply` chooses.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SeenRequest {
  method: string;
  authorization: string | undefined;
  body: string;
}

export interface FakeOpenAi {
  server: Server;
  /** http://127.0.0.1:<port> */
  origin: string;
  /** The chat-completions URL a judge or writer is pointed at. */
  url: string;
  /** Every request in arrival order, preflights included. */
  seen: SeenRequest[];
  close(): Promise<void>;
}

/** Starts the fake; `reply(body)` gives the assistant message's content for each POST (default "yes"). */
export async function fakeOpenAi(reply: (body: string, req: IncomingMessage) => string = () => 'yes'): Promise<FakeOpenAi> {
  const seen: SeenRequest[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', authorization: req.headers.authorization, body });
      // connection: close, so closing the server after a test does not wait on kept-alive sockets.
      const cors = { 'access-control-allow-origin': '*', 'access-control-allow-headers': '*', 'access-control-allow-methods': 'POST, OPTIONS', connection: 'close' };
      if (req.method === 'OPTIONS') return void res.writeHead(204, cors).end();
      const content = reply(body, req);
      res.writeHead(200, { ...cors, 'content-type': 'application/json' }).end(JSON.stringify({ choices: [{ message: { role: 'assistant', content } }] }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    server,
    origin,
    url: `${origin}/v1/chat/completions`,
    seen,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
