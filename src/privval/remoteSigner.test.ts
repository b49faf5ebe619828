import { spawnSync } from "node:child_process";
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import {
  type BlockId,
  generateEd25519PrivKey,
  type Proposal,
  SIGNED_MSG_TYPE,
  type Vote,
  verifyProposal,
  verifyVote,
} from "../types/index.js";
import { EMPTY_BYTES } from "../util/bytes.js";
import { createLogger, silentLogger } from "../util/logger.js";
import { RemoteSignerError, SignerAddressError, SignerConnectionError } from "./errors.js";
import { FilePV } from "./filePV.js";
import { SignerClient, type SignerClientOptions } from "./signerClient.js";
import { formatSignerAddress, parseSignerAddress, SignerConnection } from "./signerConnection.js";
import { decodeSignerMessage, encodeSignerMessage, type SignerMessage } from "./signerMessages.js";
import { SignerServer } from "./signerServer.js";

const CHAIN = "remote-chain";
const T0 = 1_700_000_000_123_456_789n;
const log = process.env.COMETH_TEST_LOG ? createLogger({ level: process.env.COMETH_TEST_LOG }) : silentLogger();
/** Short timings so the fault tests end quickly; the behaviour is the same at CometBFT's 5 s. */
const FAST: Partial<SignerClientOptions> = {
  timeoutReadWriteMs: 400,
  startWaitMs: 3000,
  connectWaitMs: 200,
  requestTimeoutMs: 1500,
  retryDelayMs: 20,
};

let dir: string;
const cleanups: (() => Promise<void> | void)[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "cometh-remote-signer-"));
});
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  rmSync(dir, { recursive: true, force: true });
});

async function filePV(name = "a"): Promise<FilePV> {
  mkdirSync(join(dir, name), { recursive: true });
  return FilePV.generate(join(dir, name, "key.json"), join(dir, name, "state.json"));
}

function blockId(fill: number): BlockId {
  return { hash: new Uint8Array(32).fill(fill), partSetHeader: { total: 1, hash: new Uint8Array(32).fill(fill + 1) } };
}

function vote(address: Uint8Array, o: Partial<Vote> = {}): Vote {
  return {
    type: SIGNED_MSG_TYPE.prevote,
    height: 5,
    round: 0,
    blockId: blockId(1),
    timestamp: T0,
    validatorAddress: address,
    validatorIndex: 0,
    signature: EMPTY_BYTES,
    extension: EMPTY_BYTES,
    extensionSignature: EMPTY_BYTES,
    ...o,
  };
}

function proposal(o: Partial<Proposal> = {}): Proposal {
  return {
    type: 32,
    height: 5,
    round: 0,
    polRound: -1,
    blockId: blockId(3),
    timestamp: T0,
    signature: EMPTY_BYTES,
    ...o,
  };
}

/** Resolves at the next state change the signer reports. */
class States {
  readonly seen: string[] = [];
  #waiters: { state: string; resolve: () => void }[] = [];
  readonly on = (state: "connected" | "disconnected") => {
    this.seen.push(state);
    for (const w of this.#waiters.filter((x) => x.state === state)) w.resolve();
    this.#waiters = this.#waiters.filter((x) => x.state !== state);
  };
  next(state: "connected" | "disconnected"): Promise<void> {
    return new Promise((resolve) => this.#waiters.push({ state, resolve }));
  }
}

function startSigner(address: string, pv: FilePV, states?: States, chainId = CHAIN): SignerServer {
  const server = new SignerServer({
    address,
    chainId,
    key: pv,
    log,
    timeoutReadWriteMs: 400,
    retryDelayMs: 20,
    maxRetryDelayMs: 100,
    ...(states === undefined ? {} : { onState: states.on }),
  });
  cleanups.push(() => server.stop());
  return server;
}

async function listen(laddr = "tcp://127.0.0.1:0", opts: Partial<SignerClientOptions> = FAST): Promise<SignerClient> {
  const client = await SignerClient.listen(laddr, CHAIN, log, opts);
  cleanups.push(() => client.close());
  return client;
}

describe("messages", () => {
  const key = generateEd25519PrivKey(new Uint8Array(32).fill(7));
  const address = new Uint8Array(20).fill(9);
  const cases: SignerMessage[] = [
    { kind: "pubKeyRequest", chainId: CHAIN },
    { kind: "pubKeyResponse", pubKey: { type: "ed25519", bytes: key.bytes.slice(32) } },
    { kind: "pubKeyResponse", error: { code: 0, description: "unable to provide pubkey" } },
    { kind: "signVoteRequest", vote: vote(address), chainId: CHAIN },
    { kind: "signedVoteResponse", vote: vote(address, { signature: new Uint8Array(64).fill(1) }) },
    { kind: "signedVoteResponse", error: { code: 2, description: "no connection" } },
    { kind: "signProposalRequest", proposal: proposal(), chainId: CHAIN },
    { kind: "signedProposalResponse", proposal: proposal({ signature: new Uint8Array(64).fill(2) }) },
    { kind: "signedProposalResponse", error: { code: 0, description: "conflicting data" } },
    { kind: "pingRequest" },
    { kind: "pingResponse" },
  ];
  test.each(cases.map((c) => [c.kind, c] as const))("behavior: %s round-trips", (_, m) => {
    expect(decodeSignerMessage(encodeSignerMessage(m))).toEqual(m);
  });

  test("default: the oneof field numbers and inner layout of proto/tendermint/privval/types.proto", () => {
    // Message{ping_request (7): {}} and Message{pub_key_request (1): {chain_id (1): "c"}}.
    expect(Buffer.from(encodeSignerMessage({ kind: "pingRequest" })).toString("hex")).toBe("3a00");
    expect(Buffer.from(encodeSignerMessage({ kind: "pingResponse" })).toString("hex")).toBe("4200");
    expect(Buffer.from(encodeSignerMessage({ kind: "pubKeyRequest", chainId: "c" })).toString("hex")).toBe(
      "0a030a0163",
    );
    // A refusal keeps the non-nullable (empty) vote in field 1, then RemoteSignerError in field 2.
    expect(
      Buffer.from(encodeSignerMessage({ kind: "signedVoteResponse", error: { code: 0, description: "x" } })).toString(
        "hex",
      ),
    ).toBe("22070a001203120178");
    // An empty Message (no oneof set) is what CometBFT's signer answers to a message it does not know.
    expect(decodeSignerMessage(new Uint8Array(0))).toEqual({ kind: "empty" });
  });

  test("error: malformed bytes are a SignerProtocolError, not a crash", () => {
    expect(() => decodeSignerMessage(Uint8Array.from([0x1a, 0x05, 0x0a, 0xff]))).toThrowErrorMatchingInlineSnapshot(
      `[SignerProtocolError: malformed privval message: premature EOF]`,
    );
  });
});

describe("addresses", () => {
  test("default: tcp, bare host:port (tcp) and unix, as CometBFT reads them", () => {
    expect(parseSignerAddress("tcp://127.0.0.1:26659")).toEqual({ kind: "tcp", host: "127.0.0.1", port: 26659 });
    expect(parseSignerAddress("127.0.0.1:26659")).toEqual({ kind: "tcp", host: "127.0.0.1", port: 26659 });
    expect(parseSignerAddress("tcp://[::1]:1")).toEqual({ kind: "tcp", host: "::1", port: 1 });
    expect(parseSignerAddress("unix:///tmp/s.sock")).toEqual({ kind: "unix", path: "/tmp/s.sock" });
    expect(formatSignerAddress(parseSignerAddress("tcp://[::1]:1"))).toBe("tcp://[::1]:1");
  });

  test("error: other protocols and missing ports are refused with the form to use", () => {
    expect(() => parseSignerAddress("udp://1.2.3.4:5")).toThrow(SignerAddressError);
    expect(() => parseSignerAddress("tcp://1.2.3.4")).toThrowErrorMatchingInlineSnapshot(
      `[SignerAddressError: "tcp://1.2.3.4" is not host:port. Use tcp://127.0.0.1:26659]`,
    );
  });
});

describe.each(["tcp", "unix"] as const)("node and signer over %s", (transport) => {
  const laddr = () => (transport === "tcp" ? "tcp://127.0.0.1:0" : `unix://${join(dir, "signer.sock")}`);

  test("default: the node gets the key, and votes and proposals come back signed by it", async () => {
    const pv = await filePV();
    const client = await listen(laddr());
    startSigner(client.laddr, pv);
    await client.waitForSigner();
    expect(client.pubKey()).toEqual(pv.pubKey());
    expect(client.address()).toEqual(pv.address());

    const v = await client.signVote(CHAIN, vote(pv.address()));
    expect(verifyVote(CHAIN, v, pv.pubKey())).toBe(true);
    const pc = await client.signVote(CHAIN, vote(pv.address(), { type: SIGNED_MSG_TYPE.precommit }));
    expect(verifyVote(CHAIN, pc, pv.pubKey())).toBe(true);
    const p = await client.signProposal(CHAIN, proposal({ height: 6 }));
    expect(verifyProposal(CHAIN, p, pv.pubKey())).toBe(true);
    expect(pv.lastSignState()).toEqual({ height: 6, round: 0, step: 1 });
  });

  test("error: the signer's guard refuses a conflicting vote, and the node is told why (no retry)", async () => {
    const pv = await filePV();
    const client = await listen(laddr());
    startSigner(client.laddr, pv);
    await client.waitForSigner();
    await client.signVote(CHAIN, vote(pv.address()));
    const err = await client.signVote(CHAIN, vote(pv.address(), { blockId: blockId(8) })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RemoteSignerError);
    expect((err as Error).message).toMatchInlineSnapshot(`"the remote signer refused: conflicting data (code 0)"`);
    // An older height is refused too; the same vote again is signed again (same signature).
    await expect(client.signVote(CHAIN, vote(pv.address(), { height: 4 }))).rejects.toThrow(/height regression/);
    const again = await client.signVote(CHAIN, vote(pv.address()));
    expect(verifyVote(CHAIN, again, pv.pubKey())).toBe(true);
  });

  test("error: a request for another chain is refused", async () => {
    const pv = await filePV();
    const client = await listen(laddr());
    startSigner(client.laddr, pv);
    await client.waitForSigner();
    await expect(client.signVote("other-chain", vote(pv.address()))).rejects.toThrowErrorMatchingInlineSnapshot(
      `[RemoteSignerError: the remote signer refused: unable to sign vote (code 0)]`,
    );
    await expect(client.signProposal("other-chain", proposal())).rejects.toThrow(/unable to sign proposal/);
    expect(pv.lastSignState().height).toBe(0);
  });

  test("behavior: when the signer goes away requests fail fast, and it is used again when it dials back", async () => {
    const pv = await filePV();
    const client = await listen(laddr());
    const states = new States();
    const first = startSigner(client.laddr, pv, states);
    await client.waitForSigner();
    await client.signVote(CHAIN, vote(pv.address()));

    await first.stop();
    const started = Date.now();
    const err = await client.signVote(CHAIN, vote(pv.address(), { height: 6 })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SignerConnectionError);
    expect((err as Error).message).toMatch(/no remote signer connected/);
    // connectWaitMs, not the whole retry budget.
    expect(Date.now() - started).toBeLessThan(1000);
    expect(pv.lastSignState().height).toBe(5);

    const connected = states.next("connected");
    startSigner(client.laddr, pv, states);
    await connected;
    await client.waitForSigner();
    const v = await client.signVote(CHAIN, vote(pv.address(), { height: 6 }));
    expect(verifyVote(CHAIN, v, pv.pubKey())).toBe(true);
  });

  test("behavior: pings keep an idle connection past the signer's read deadline", async () => {
    const pv = await filePV();
    const client = await listen(laddr());
    const states = new States();
    startSigner(client.laddr, pv, states);
    await client.waitForSigner();
    // Three read deadlines (400 ms each) without a request: only the node's pings keep it.
    await new Promise((r) => setTimeout(r, 1300));
    expect(states.seen).toEqual(["connected"]);
    expect(client.isConnected()).toBe(true);
  });

  test("behavior: a second signer waits until the first one's connection drops", async () => {
    // Two signers with the same key and their own sign state: which one signed shows who is used.
    const priv = generateEd25519PrivKey();
    mkdirSync(join(dir, "a"));
    mkdirSync(join(dir, "b"));
    const pvA = await FilePV.generate(join(dir, "a", "key.json"), join(dir, "a", "state.json"), priv);
    const pvB = await FilePV.generate(join(dir, "b", "key.json"), join(dir, "b", "state.json"), priv);
    const client = await listen(laddr());
    const first = startSigner(client.laddr, pvA);
    await client.waitForSigner();
    startSigner(client.laddr, pvB);
    await client.signVote(CHAIN, vote(pvA.address()));
    await client.signVote(CHAIN, vote(pvA.address(), { height: 6 }));
    expect([pvA.lastSignState().height, pvB.lastSignState().height]).toEqual([6, 0]);
    await first.stop();
    // The node may not have seen the drop yet: the request then fails on the old connection and is
    // retried on the next one.
    await client.signVote(CHAIN, vote(pvA.address(), { height: 7 }));
    expect([pvA.lastSignState().height, pvB.lastSignState().height]).toEqual([6, 7]);
  });

  test("error: a signer holding another key is refused, and start says why", async () => {
    const other = await filePV("b");
    const client = await listen(laddr(), { ...FAST, startWaitMs: 600 });
    // The node learns its key from the first signer...
    const pv = await filePV();
    const states = new States();
    const first = startSigner(client.laddr, pv, states);
    await client.waitForSigner();
    await first.stop();
    await until(() => !client.isConnected());
    // ...and a signer with another key is not used.
    startSigner(client.laddr, other);
    await expect(client.waitForSigner()).rejects.toThrow(/refused: the signer that connected has key ed25519:/);
    await expect(client.signVote(CHAIN, vote(pv.address()))).rejects.toThrow(SignerConnectionError);
  });

  test("error: with no signer, start fails after its wait with what to do", async () => {
    const err = await SignerClient.start(laddr(), CHAIN, log, { ...FAST, startWaitMs: 150 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SignerConnectionError);
    expect((err as Error).message).toMatch(/no remote signer connected to .* \(waited 150 ms\)\. Start the signer/);
  });
});

describe("faults on the wire", () => {
  test("error: bytes that are not the protocol close that connection only; a real signer is served next", async () => {
    const pv = await filePV();
    const client = await listen(`unix://${join(dir, "s.sock")}`);
    const junk = connect(parseUnix(client.laddr));
    await new Promise((r) => junk.once("connect", r));
    junk.write(Buffer.from("GET / HTTP/1.1\r\n\r\n"));
    const closed = new Promise((r) => junk.once("close", r));
    junk.on("error", () => {});
    junk.resume();
    await closed;
    startSigner(client.laddr, pv);
    await client.waitForSigner();
    await client.signVote(CHAIN, vote(pv.address()));
  });

  test("error: a signer that answers a vote with a proposal is a protocol error, not a signature", async () => {
    const pv = await filePV();
    const client = await listen(`unix://${join(dir, "s.sock")}`);
    // A hand-made signer: gives the key, then answers everything with a signed proposal.
    const socket = connect(parseUnix(client.laddr));
    await new Promise((r) => socket.once("connect", r));
    const conn = await SignerConnection.open(socket, undefined, 1000);
    cleanups.push(() => conn.close());
    void (async () => {
      for (;;) {
        const req = await conn.read(5000).catch(() => undefined);
        if (req === undefined) return;
        const answer: SignerMessage =
          req.kind === "pubKeyRequest"
            ? { kind: "pubKeyResponse", pubKey: pv.pubKey() }
            : req.kind === "pingRequest"
              ? { kind: "pingResponse" }
              : { kind: "signedProposalResponse", proposal: proposal({ signature: new Uint8Array(64) }) };
        await conn.write(answer, 1000).catch(() => {});
      }
    })();
    await client.waitForSigner();
    await expect(client.signVote(CHAIN, vote(pv.address()))).rejects.toThrowErrorMatchingInlineSnapshot(
      `[SignerProtocolError: the remote signer answered with signedProposalResponse, expected signedVoteResponse]`,
    );
  });

  test("error: a stale unix socket file is replaced; a live one and a regular file are not touched", async () => {
    // A process killed with SIGKILL leaves its socket file behind.
    const path = join(dir, "stale.sock");
    const script = `require("node:net").createServer().listen(${JSON.stringify(path)}, () => process.kill(process.pid, "SIGKILL"))`;
    spawnSync(process.execPath, ["-e", script]);
    expect(lstatSync(path).isSocket()).toBe(true);
    const client = await listen(`unix://${path}`);
    expect(client.laddr).toBe(`unix://${path}`);

    // The same path again: the first node's listener is live, so the second cannot take it.
    await expect(SignerClient.listen(`unix://${path}`, CHAIN, log, FAST)).rejects.toThrow(/EADDRINUSE/);
    const pv = await filePV();
    startSigner(client.laddr, pv);
    await client.waitForSigner();

    const file = join(dir, "file");
    writeFileSync(file, "keep me");
    await expect(SignerClient.listen(`unix://${file}`, CHAIN, log, FAST)).rejects.toThrow(
      /cannot listen for the remote signer on unix:\/\/.*file: listen EADDRINUSE/,
    );
    expect(readFileSync(file, "utf8")).toBe("keep me");
  });
});

/** Waits for a condition the code under test reaches on its own (a socket's close), bounded. */
async function until(cond: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`condition not reached in ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

function parseUnix(laddr: string): string {
  const a = parseSignerAddress(laddr);
  if (a.kind !== "unix") throw new Error("not unix");
  return a.path;
}
