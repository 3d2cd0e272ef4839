/**
 * The network between the local GitHub's webhook deliveries and the App: the URL the App is
 * registered with. It forwards each delivery to the App process of the moment, so an App can be
 * killed and a new one started behind the same URL; while no App is up, a delivery fails (the
 * connection is reset) and the local GitHub records it as failed — it is never redelivered.
 *
 * It also reorders: a fraction of deliveries is held back for a while (answered 202 at once, as the
 * App itself does) so later deliveries overtake them. The local GitHub sends one delivery to a hook
 * after another and only shuffles deliveries caused by the same API call, so "x % of webhooks
 * reordered" cannot be asked of it directly.
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { prng } from "../helpers/gen-plan.js";

export interface WebhookNetwork {
  url: string;
  /** Where deliveries go now; undefined = the App is down. */
  target: string | undefined;
  /**
   * Several Apps behind the one URL (replicas): a load balancer sends each delivery to the next
   * replica that is up, round-robin. Set instead of `target`; an entry is undefined while that
   * replica is down.
   */
  targets?: (string | undefined)[];
  /** Deliveries forwarded to each replica (by index in `targets`). */
  perTarget: number[];
  /** Deliveries received, held back (reordered), forwarded, and failed because the App was down. */
  stats: { received: number; reordered: number; forwarded: number; refused: number };
  /** Resolves when no held-back delivery is waiting. */
  idle(): Promise<void>;
  /** Whether a delivery is held back or being forwarded. */
  busy(): boolean;
  close(): Promise<void>;
}

export async function startNetwork(options: { seed: number; reorderRate: number; holdMs: [number, number] }): Promise<WebhookNetwork> {
  const random = prng(options.seed ^ 0x5bd1e995);
  const held = new Set<Promise<void>>();
  let forwarding = 0;
  const net: WebhookNetwork = {
    busy: () => held.size > 0 || forwarding > 0,
    url: "",
    target: undefined,
    perTarget: [],
    stats: { received: 0, reordered: 0, forwarded: 0, refused: 0 },
    async idle() {
      while (held.size) await Promise.all([...held]);
    },
    close: async () => {
      await net.idle();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };

  let turn = 0;
  /** The App a delivery goes to now: the one target, or the next replica that is up. */
  function pick(): string | undefined {
    if (!net.targets) return net.target;
    const n = net.targets.length;
    for (let k = 0; k < n; k++) {
      const i = (turn + k) % n;
      const t = net.targets[i];
      if (t) {
        turn = i + 1;
        net.perTarget[i] = (net.perTarget[i] ?? 0) + 1;
        return t;
      }
    }
    return undefined;
  }

  /** Sends one delivery to the App; resolves with its status, or 0 when the App is down. */
  function forward(target: string | undefined, req: IncomingMessage, body: Buffer): Promise<number> {
    if (!target) return Promise.resolve(0);
    forwarding++;
    return new Promise<number>((resolve) => {
      const url = new URL(target);
      const headers = { ...req.headers, host: url.host, "content-length": String(body.length) };
      const out = httpRequest({ host: url.hostname, port: url.port, path: url.pathname, method: "POST", headers }, (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      });
      out.on("error", () => resolve(0));
      out.end(body);
    }).finally(() => forwarding--);
  }

  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      net.stats.received++;
      const up = net.targets ? net.targets.some(Boolean) : !!net.target;
      if (!up) {
        // Nobody listens: the local GitHub sees the connection fail.
        net.stats.refused++;
        req.socket.destroy();
        return;
      }
      if (options.reorderRate > 0 && random() < options.reorderRate) {
        net.stats.reordered++;
        const [min, max] = options.holdMs;
        const wait = Math.round(min + random() * (max - min));
        res.writeHead(202).end();
        const p = new Promise<void>((r) => setTimeout(r, wait))
          .then(() => forward(pick(), req, body))
          .then((status) => {
            if (status === 0) net.stats.refused++;
            else net.stats.forwarded++;
          });
        held.add(p);
        void p.finally(() => held.delete(p));
        return;
      }
      void forward(pick(), req, body).then((status) => {
        if (status === 0) {
          net.stats.refused++;
          req.socket.destroy();
          return;
        }
        net.stats.forwarded++;
        res.writeHead(status).end();
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  net.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/github/webhooks`;
  return net;
}
