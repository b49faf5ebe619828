// The runner owns the p2p links: every node's persistent_peers point at per-link TCP proxies on
// 127.0.0.1 (one listener per ordered pair "from dials to"), and pex is off, so nodes reach each other
// only through them. Cutting a link drops its connections and refuses new ones until it is healed.
import { createServer, type Server, Socket } from "node:net";

class LinkProxy {
  readonly from: string;
  readonly to: string;
  port = 0;
  #server: Server | undefined;
  #blocked = false;
  readonly #pairs = new Set<[Socket, Socket]>();
  readonly #upstreamPort: () => number;
  /** Connections accepted and connections dropped because the link was cut (for the report). */
  accepted = 0;
  refused = 0;

  constructor(from: string, to: string, upstreamPort: () => number) {
    this.from = from;
    this.to = to;
    this.#upstreamPort = upstreamPort;
  }

  async listen(): Promise<void> {
    const server = createServer({ noDelay: true }, (client) => this.#onConnection(client));
    this.#server = server;
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => resolve());
    });
    this.port = (server.address() as { port: number }).port;
  }

  #onConnection(client: Socket): void {
    client.on("error", () => {});
    if (this.#blocked) {
      this.refused++;
      client.resetAndDestroy();
      return;
    }
    this.accepted++;
    const upstream = new Socket();
    upstream.on("error", () => {});
    const pair: [Socket, Socket] = [client, upstream];
    this.#pairs.add(pair);
    const close = () => {
      this.#pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.once("close", close);
    upstream.once("close", close);
    upstream.connect({ host: "127.0.0.1", port: this.#upstreamPort(), noDelay: true }, () => {
      client.pipe(upstream);
      upstream.pipe(client);
    });
  }

  setBlocked(blocked: boolean): void {
    this.#blocked = blocked;
    if (!blocked) return;
    for (const [a, b] of this.#pairs) {
      a.resetAndDestroy();
      b.resetAndDestroy();
    }
    this.#pairs.clear();
  }

  async close(): Promise<void> {
    this.setBlocked(true);
    const server = this.#server;
    if (server !== undefined) await new Promise((r) => server.close(r));
  }
}

/**
 * Every link of a full mesh, with cuts per node and one partition at a time. A node that lost a
 * persistent peer which had dialed it redials the address in that peer's NodeInfo (CometBFT does the
 * same), which would bypass the proxies: every node advertises `refusingPort` (p2p.external_address),
 * where connections are reset at once, so links come back only from the dialing side, through its proxy.
 */
export class Links {
  readonly #proxies = new Map<string, LinkProxy>();
  #refuser: Server | undefined;
  refusingPort = 0;
  readonly #cut = new Set<string>();
  #groups: readonly (readonly string[])[] | undefined;

  static async create(names: readonly string[], p2pPort: (name: string) => number): Promise<Links> {
    const links = new Links();
    const refuser = createServer((s) => {
      s.on("error", () => {});
      s.resetAndDestroy();
    });
    links.#refuser = refuser;
    await new Promise<void>((resolve, reject) => {
      refuser.once("error", reject);
      refuser.listen(0, "127.0.0.1", () => resolve());
    });
    links.refusingPort = (refuser.address() as { port: number }).port;
    for (const from of names) {
      for (const to of names) {
        if (from === to) continue;
        const proxy = new LinkProxy(from, to, () => p2pPort(to));
        await proxy.listen();
        links.#proxies.set(`${from}>${to}`, proxy);
      }
    }
    return links;
  }

  /** The port `from` dials to reach `to`. */
  port(from: string, to: string): number {
    const p = this.#proxies.get(`${from}>${to}`);
    if (p === undefined) throw new Error(`no link ${from} -> ${to}`);
    return p.port;
  }

  cut(node: string): void {
    this.#cut.add(node);
    this.#apply();
  }

  heal(node: string): void {
    this.#cut.delete(node);
    this.#apply();
  }

  partition(groups: readonly (readonly string[])[]): void {
    this.#groups = groups;
    this.#apply();
  }

  healPartition(): void {
    this.#groups = undefined;
    this.#apply();
  }

  #blocked(a: string, b: string): boolean {
    if (this.#cut.has(a) || this.#cut.has(b)) return true;
    const g = this.#groups;
    if (g === undefined) return false;
    return g.findIndex((x) => x.includes(a)) !== g.findIndex((x) => x.includes(b));
  }

  #apply(): void {
    for (const p of this.#proxies.values()) p.setBlocked(this.#blocked(p.from, p.to));
  }

  stats(): { accepted: number; refused: number } {
    let accepted = 0;
    let refused = 0;
    for (const p of this.#proxies.values()) {
      accepted += p.accepted;
      refused += p.refused;
    }
    return { accepted, refused };
  }

  async close(): Promise<void> {
    await Promise.all([...this.#proxies.values()].map((p) => p.close()));
    const refuser = this.#refuser;
    if (refuser !== undefined) await new Promise((r) => refuser.close(r));
  }
}
