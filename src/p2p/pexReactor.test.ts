import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { silentLogger } from "../util/logger.js";
import { AddrBook } from "./addrBook.js";
import { PexProtocolError } from "./errors.js";
import { parseNetAddress } from "./netAddress.js";
import { decodePexMessage, encodePexMessage, PEX_CHANNEL, PexReactor, type PexSwitch } from "./pexReactor.js";
import type { ConnectionStatus, NetAddress, NodeInfo, Peer } from "./reactor.js";
import type { Switch } from "./switch.js";
import { createTestSwitch, dialAddress, RecordingReactor, testNodeKey } from "./testing/testSwitches.js";

let dir: string;
const running: Switch[] = [];
const books: AddrBook[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "pex-"));
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
  await Promise.all(books.splice(0).map((b) => b.stop()));
  rmSync(dir, { recursive: true, force: true });
});

let n = 0;
function newBook(): AddrBook {
  return new AddrBook({ filePath: join(dir, `book${n++}.json`), routabilityStrict: false, log: silentLogger() });
}

async function pexNode(opts: { seedMode?: boolean; seeds?: string[] } = {}) {
  const book = newBook();
  const sw = createTestSwitch({ addrBook: book });
  const pex = new PexReactor({
    book,
    log: silentLogger(),
    ensurePeersPeriodMs: 100,
    crawlPeerPeriodMs: 100,
    dialBackoffUnitMs: 10,
    ...(opts.seedMode !== undefined ? { seedMode: opts.seedMode } : {}),
    ...(opts.seeds !== undefined ? { seeds: opts.seeds } : {}),
  });
  const r = new RecordingReactor();
  sw.addReactor(pex);
  sw.addReactor(r);
  // The book's owner (the node) starts and stops it; the reactor only uses it.
  await book.start();
  books.push(book);
  await sw.start();
  running.push(sw);
  return { sw, r, book, pex };
}

describe("PEX messages", () => {
  test("default: a request is Message{pex_request: {}}", () => {
    expect([...encodePexMessage({ type: "request" })]).toEqual([0x0a, 0x00]);
    expect(decodePexMessage(Uint8Array.of(0x0a, 0x00))).toEqual({ type: "request" });
  });

  test("behavior: addresses roundtrip", () => {
    const addrs = [
      { id: testNodeKey().id, host: "1.2.3.4", port: 26656 },
      { id: testNodeKey().id, host: "::1", port: 1 },
    ];
    expect(decodePexMessage(encodePexMessage({ type: "addrs", addrs }))).toEqual({ type: "addrs", addrs });
    expect(decodePexMessage(encodePexMessage({ type: "addrs", addrs: [] }))).toEqual({ type: "addrs", addrs: [] });
  });

  test("error: empty message, garbage, a host name instead of an IP", () => {
    expect(() => decodePexMessage(new Uint8Array())).toThrow(PexProtocolError);
    expect(() => decodePexMessage(Uint8Array.of(0x0a, 0x05, 1))).toThrow(PexProtocolError);
    const named = encodePexMessage({ type: "addrs", addrs: [{ id: "a".repeat(40), host: "node0", port: 1 }] });
    expect(() => decodePexMessage(named)).toThrow(/invalid IP address node0/);
  });
});

/** A switch and peers that only record, to drive receive() directly. */
function fakes() {
  const stopped: { peer: Peer; reason: unknown }[] = [];
  const sw: PexSwitch = {
    peers: () => [],
    peer: () => undefined,
    broadcast: () => {},
    stopPeerForError: (peer, reason) => stopped.push({ peer, reason }),
    nodeId: () => "f".repeat(40),
    numPeers: () => ({ outbound: 10, inbound: 0, dialing: 0 }),
    maxNumOutboundPeers: () => 10,
    isDialingOrExistingAddress: () => false,
    isPeerPersistent: () => false,
    dialPeerWithAddress: () => Promise.reject(new PexProtocolError("no dialing in this test")),
    stopPeerGracefully: () => {},
  };
  const makePeer = (host: string, outbound = true) => {
    const id = testNodeKey().id;
    const sent: Uint8Array[] = [];
    const peer: Peer = {
      id,
      nodeInfo: { id, listenAddr: `tcp://${host}:26656` } as NodeInfo,
      isOutbound: outbound,
      isPersistent: false,
      remoteHost: host,
      remotePort: 5555,
      socketAddr: { id, host, port: 26656 },
      send: (_ch, msg) => {
        sent.push(msg);
        return Promise.resolve(true);
      },
      trySend: () => true,
      isRunning: () => true,
      status: () => ({ channels: [] }) as unknown as ConnectionStatus,
      get: () => undefined,
      set: () => {},
    };
    return { peer, sent };
  };
  return { sw, stopped, makePeer };
}

describe("PexReactor.receive", () => {
  test("error: an unsolicited address list stops and bans the peer", async () => {
    const book = newBook();
    const pex = new PexReactor({ book, log: silentLogger(), ensurePeersPeriodMs: 60_000 });
    const { sw, stopped, makePeer } = fakes();
    await pex.start(sw);
    const { peer } = makePeer("5.5.5.5");
    book.addAddress(peer.socketAddr, peer.socketAddr);
    pex.receive(PEX_CHANNEL, peer, encodePexMessage({ type: "addrs", addrs: [] }));
    expect(String(stopped[0]?.reason)).toMatch(/unsolicited/);
    expect(book.isBanned(peer.socketAddr)).toBe(true);
    await pex.stop();
  });

  test("behavior: solicited addresses go into the book, our own ID is skipped", async () => {
    const book = newBook();
    const pex = new PexReactor({ book, log: silentLogger(), ensurePeersPeriodMs: 60_000 });
    const { sw, stopped, makePeer } = fakes();
    await pex.start(sw);
    const { peer, sent } = makePeer("5.5.5.5");
    pex.addPeer(peer); // outbound: asks for addresses
    expect(sent.map((m) => decodePexMessage(m).type)).toEqual(["request"]);
    const learned: NetAddress = { id: testNodeKey().id, host: "6.6.6.6", port: 26656 };
    const self: NetAddress = { id: sw.nodeId(), host: "7.7.7.7", port: 26656 };
    pex.receive(PEX_CHANNEL, peer, encodePexMessage({ type: "addrs", addrs: [learned, self] }));
    expect(stopped).toEqual([]);
    expect(book.hasAddress(learned)).toBe(true);
    expect(book.hasAddress(self)).toBe(false);
    await pex.stop();
  });

  test("behavior: requests are rate-limited per peer; answers leave out private IDs", async () => {
    const book = newBook();
    const pex = new PexReactor({ book, log: silentLogger(), ensurePeersPeriodMs: 60_000 });
    const { sw, stopped, makePeer } = fakes();
    await pex.start(sw);
    const open: NetAddress = { id: testNodeKey().id, host: "6.6.6.6", port: 26656 };
    const hidden: NetAddress = { id: testNodeKey().id, host: "6.6.6.7", port: 26656 };
    book.addAddress(open, open);
    book.addAddress(hidden, hidden);
    book.addPrivateIds([hidden.id]);
    const { peer, sent } = makePeer("5.5.5.5", false);
    const request = encodePexMessage({ type: "request" });
    pex.receive(PEX_CHANNEL, peer, request); // free
    pex.receive(PEX_CHANNEL, peer, request); // starts the clock
    expect(stopped).toEqual([]);
    await Promise.resolve();
    expect(sent).toHaveLength(2);
    const answer = decodePexMessage(sent[0] as Uint8Array);
    expect(answer).toEqual({ type: "addrs", addrs: [open] });
    pex.receive(PEX_CHANNEL, peer, request); // too soon
    expect(stopped).toHaveLength(1);
    expect(String(stopped[0]?.reason)).toMatch(/sent next PEX request too soon/);
    await pex.stop();
  });
});

describe("PEX over the network", () => {
  test("behavior: C learns A's address from B and dials it", async () => {
    const b = await pexNode();
    const a = await pexNode();
    a.sw.dialPeersAsync([dialAddress(b.sw)]);
    await b.r.until(() => b.sw.peer(a.sw.nodeId()) !== undefined, "B has A");
    expect(b.book.hasAddress(parseNetAddress(dialAddress(a.sw)))).toBe(true);

    const c = await pexNode();
    c.sw.dialPeersAsync([dialAddress(b.sw)]);
    await c.r.until(() => c.sw.peer(a.sw.nodeId()) !== undefined, "C dials A");
    expect(c.sw.peer(a.sw.nodeId())?.isOutbound).toBe(true);
    expect(c.book.hasAddress(parseNetAddress(dialAddress(a.sw)))).toBe(true);
  });

  test("behavior: an empty book dials the seeds; a seed answers, disconnects, and its addresses are dialed", async () => {
    const seed = await pexNode({ seedMode: true });
    const a = await pexNode();
    seed.book.addAddress(parseNetAddress(dialAddress(a.sw)), seed.sw.listenAddress());

    const c = await pexNode({ seeds: [dialAddress(seed.sw)] });
    await c.r.until(() => c.sw.peer(a.sw.nodeId()) !== undefined, "C reaches A through the seed");
    await c.r.until(
      () => c.r.removed.some((x) => x.peer.id === seed.sw.nodeId()),
      "the seed disconnects C after answering",
    );
  });

  test("behavior: the book is saved when its owner stops it", async () => {
    const b = await pexNode();
    const a = await pexNode();
    a.sw.dialPeersAsync([dialAddress(b.sw)]);
    await b.r.until(() => b.sw.peer(a.sw.nodeId()) !== undefined, "B has A");
    await b.sw.stop();
    await b.book.stop();
    const reloaded = new AddrBook({ filePath: b.book.filePath, routabilityStrict: false, log: silentLogger() });
    expect(await reloaded.load()).toBe(true);
    expect(reloaded.hasAddress(parseNetAddress(dialAddress(a.sw)))).toBe(true);
  });
});
