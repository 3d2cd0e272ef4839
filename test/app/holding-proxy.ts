/**
 * A proxy between the App and the local GitHub that can hold GitHub's answer to a request: the
 * request has done its work at GitHub (a pull request is open), but the App does not know it until
 * the test lets the answer through. What a slow network, or a process paused between two lines,
 * does to the App — made to happen at one chosen request.
 */
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface Held {
  /** Resolves once GitHub answered the request (its work is done there) and the answer is held. */
  arrived: Promise<void>;
  /** Lets the answer through. */
  release(): void;
}

export interface HoldingProxy {
  /** The proxy's base URL, standing for the local GitHub's (`http://127.0.0.1:<port>`). */
  url: string;
  /** Hold the answer to the next request `match` picks (by method and path). */
  hold(match: (method: string, path: string) => boolean): Held;
  close(): Promise<void>;
}

export async function holdingProxy(target: string): Promise<HoldingProxy> {
  const to = new URL(target);
  const holds: { match: (method: string, path: string) => boolean; arrived: () => void; released: Promise<void> }[] = [];

  function forward(req: IncomingMessage, res: ServerResponse, body: Buffer): void {
    const method = req.method ?? "GET";
    const path = (req.url ?? "/").split("?")[0]!;
    const i = holds.findIndex((h) => h.match(method, path));
    const held = i >= 0 ? holds.splice(i, 1)[0] : undefined;
    const out = httpRequest(
      { hostname: to.hostname, port: to.port, method, path: req.url, headers: { ...req.headers, host: to.host } },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on("data", (c: Buffer) => chunks.push(c));
        answer.on("end", () => {
          const send = () => {
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            res.end(Buffer.concat(chunks));
          };
          if (!held) return send();
          held.arrived();
          void held.released.then(send);
        });
      },
    );
    out.on("error", (e) => {
      res.writeHead(502);
      res.end(String(e));
    });
    out.end(body);
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => forward(req, res, Buffer.concat(chunks)));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    hold(match) {
      let arrived!: () => void;
      let release!: () => void;
      const held: Held = { arrived: new Promise((r) => (arrived = r)), release: () => release() };
      holds.push({ match, arrived, released: new Promise((r) => (release = r)) });
      return held;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
