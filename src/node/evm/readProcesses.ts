import { type ChildProcess, fork } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Socket } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { failedAnswer, type ReadProcessHooks } from "../../rpc/evm/index.js";
import type { ConnectionSharing, RpcObserver } from "../../rpc/jsonrpc/index.js";
import { isPromise } from "../../rpc/jsonrpc/index.js";
import type { Logger } from "../../util/logger.js";
import { type FromReadProcess, fromReadProcess, type ReadProcessSetup, type ToReadProcess } from "./readProcessWire.js";

/**
 * `[json-rpc] read-processes`: child processes that serve whole connections of the HTTP JSON-RPC
 * address beside the main process (docs/evm-engine.md "Read processes"). The main process accepts
 * every connection; at accept (paused, nothing read) it keeps one in N+1 and hands the others, round
 * robin, to the children with their sockets (node:child_process handle passing). A child
 * (readProcess.ts) runs the same fast HTTP path, answers eth_call (and plain state reads) itself from
 * its own LMDB read transaction, and passes every other request's body here (answered by `hooks.answer`, the main
 * fast path's own answer) or, for what the fast path gives node:http, the connection itself
 * (`hooks.adopt`).
 *
 * - Heights: each height the app publishes is sent to every child before anything here can answer
 *   with it (EvmStateDb.onPublished runs in the same synchronous step as the publication).
 * - Lifecycle: children start with the node; one that dies is started again (its connections are
 *   lost as dropped connections are); a child exits when its channel closes, so the node's death,
 *   even by SIGKILL, takes them with it; close() disconnects them and kills, by PID, one still
 *   running after 2 s.
 * - Until a child is ready (and while it is down) its turn is the main process's.
 */

export const MAX_READ_PROCESSES = 16;

export interface ReadProcessesOptions {
  /** Children, 1..16. */
  readonly size: number;
  /** What every child opens (its index is set per child). */
  readonly setup: Omit<ReadProcessSetup, "index">;
  /** The app's latest height now, and its publications (EvmStateDb.latestHeight / onPublished). */
  readonly latestHeight: () => number;
  readonly onPublished: (fn: (height: number) => void) => () => void;
  readonly log: Logger;
  /**
   * A forwarded eth_sendRawTransaction's sender, recovered in the child, for the app's CheckTx of the
   * tx with that CometBFT key (EvmApplication.hintSender).
   */
  readonly hintSender?: (key: string, sender: Uint8Array) => void;
  /** The main process's RPC metrics; the calls a child answers are recorded here too. */
  readonly observer?: RpcObserver;
  /** The child's script (tests); default readProcess beside this module (.ts through tsx from sources). */
  readonly script?: URL;
}

export interface ReadProcessStats {
  /** Connections handed to a child. */
  handed: number;
  /** Connections a child handed back to node:http here. */
  handedBack: number;
  /** Requests a child passed here. */
  forwarded: number;
  /** Children that stopped unexpectedly. */
  crashes: number;
  /** Children ready now. */
  ready: number;
}

type SlotState = "off" | "starting" | "ready" | "stopped";

/** node:net's libuv handle object behind a socket (`socket._handle`), as far as it is used here. */
interface RawHandle {
  close?: () => void;
}

interface Slot {
  readonly index: number;
  child: ChildProcess | undefined;
  state: SlotState;
  /** Connections it serves, by id: settled when they end there (max-open-connections). */
  readonly conns: Map<number, () => void>;
  /**
   * This process's libuv handle of each connection sent to it. node:child_process closes it once the
   * child acknowledges the handle; a child that dies first leaves the handles still queued for it
   * open here (only the one in flight is closed), which would keep their clients waiting: they are
   * closed when it exits (closing a closed handle does nothing).
   */
  readonly handles: Map<number, RawHandle>;
  failedStarts: number;
  lastError: string | undefined;
  restart: NodeJS.Timeout | undefined;
  exited: Promise<void> | undefined;
  /** When it was forked (performance.now()), for the start-up time in the log. */
  forkedAt: number;
}

const MAX_FAILED_STARTS = 5;
const CLOSE_GRACE_MS = 2000;

export class ReadProcesses {
  readonly #opts: ReadProcessesOptions;
  readonly #slots: Slot[];
  #hooks: ReadProcessHooks | undefined;
  /** Round robin over the main process (0) and the children (1..size). */
  #turn = 0;
  #nextConn = 0;
  #closing: Promise<void> | undefined;
  readonly #unsubscribe: () => void;
  readonly #stats = { handed: 0, handedBack: 0, forwarded: 0, crashes: 0 };

  constructor(opts: ReadProcessesOptions) {
    if (!Number.isInteger(opts.size) || opts.size < 1 || opts.size > MAX_READ_PROCESSES) {
      throw new RangeError(`read-processes takes 1 to ${MAX_READ_PROCESSES} children; got ${opts.size}`);
    }
    this.#opts = opts;
    this.#slots = Array.from({ length: opts.size }, (_, i) => ({
      index: i + 1,
      child: undefined,
      state: "off" as SlotState,
      conns: new Map(),
      handles: new Map(),
      failedStarts: 0,
      lastError: undefined,
      restart: undefined,
      exited: undefined,
      forkedAt: 0,
    }));
    this.#unsubscribe = opts.onPublished((h) => this.#publish(h));
  }

  stats(): ReadProcessStats {
    return { ...this.#stats, ready: this.#slots.filter((s) => s.state === "ready").length };
  }

  /** The PIDs of the children running now (ready or starting). */
  pids(): number[] {
    const out: number[] = [];
    for (const s of this.#slots) if (s.child?.pid !== undefined && s.child.exitCode === null) out.push(s.child.pid);
    return out;
  }

  /** Forks every child; resolves once each is ready or has given up (bounded by `timeoutMs`). */
  async start(timeoutMs = 60_000): Promise<void> {
    for (const s of this.#slots) if (s.state === "off" && s.restart === undefined) this.#spawn(s);
    const deadline = Date.now() + timeoutMs;
    while (this.#slots.some((s) => s.state === "starting" || (s.state === "off" && s.restart !== undefined))) {
      if (Date.now() > deadline || this.#closing !== undefined) return;
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  /** The server's side (startEvmRpc's `readProcesses`): connections are taken from now on. */
  share(hooks: ReadProcessHooks): ConnectionSharing {
    this.#hooks = hooks;
    return { take: (socket) => this.#take(socket), close: () => this.close() };
  }

  /** Disconnects every child (it exits when its channel closes), killing one still running after 2 s. */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    this.#unsubscribe();
    const exits: Promise<void>[] = [];
    for (const s of this.#slots) {
      if (s.restart !== undefined) clearTimeout(s.restart);
      s.restart = undefined;
      const child = s.child;
      if (child === undefined || s.exited === undefined) {
        s.state = "stopped";
        continue;
      }
      if (child.connected) child.disconnect();
      const grace = setTimeout(() => {
        if (child.pid !== undefined && child.exitCode === null) child.kill("SIGKILL");
      }, CLOSE_GRACE_MS);
      exits.push(s.exited.finally(() => clearTimeout(grace)));
    }
    await Promise.all(exits);
  }

  #take(socket: Socket): Promise<void> | undefined {
    if (this.#closing !== undefined || this.#hooks === undefined) return undefined;
    this.#turn = (this.#turn + 1) % (this.#slots.length + 1);
    if (this.#turn === 0) return undefined;
    const slot = this.#slots[this.#turn - 1] as Slot;
    const child = slot.child;
    if (slot.state !== "ready" || child === undefined || !child.connected) return undefined;
    this.#nextConn = this.#nextConn >= 0x7fffffff ? 1 : this.#nextConn + 1;
    const c = this.#nextConn;
    const raw = (socket as unknown as { _handle?: RawHandle | null })._handle;
    return new Promise<void>((resolve) => {
      slot.conns.set(c, resolve);
      if (raw !== undefined && raw !== null) slot.handles.set(c, raw);
      this.#stats.handed++;
      // The socket here is closed once sent; a send that fails loses the connection (as a dropped one).
      const sent = child.send({ t: "conn", c } satisfies ToReadProcess, socket, (err) => {
        if (err === null) return;
        socket.destroy();
        this.#ended(slot, c);
      });
      if (!sent && !child.connected) {
        socket.destroy();
        this.#ended(slot, c);
      }
    });
  }

  #ended(slot: Slot, c: number): void {
    const done = slot.conns.get(c);
    if (done === undefined) return;
    slot.conns.delete(c);
    slot.handles.delete(c);
    done();
  }

  #publish(height: number): void {
    for (const s of this.#slots) {
      if (s.state === "ready") this.#send(s, { t: "height", h: height });
    }
  }

  #send(slot: Slot, m: ToReadProcess): void {
    const child = slot.child;
    if (child === undefined || !child.connected) return;
    try {
      child.send(m);
    } catch (err) {
      // The channel closed meanwhile: the exit handler restarts the child.
      slot.lastError = (err as Error).message;
    }
  }

  #spawn(slot: Slot): void {
    slot.restart = undefined;
    if (this.#closing !== undefined) return;
    let child: ChildProcess;
    try {
      child = startChild(this.#opts.script, { ...this.#opts.setup, index: slot.index });
    } catch (err) {
      slot.lastError = (err as Error).message;
      this.#exited(slot, undefined, null);
      return;
    }
    slot.child = child;
    slot.state = "starting";
    slot.lastError = undefined;
    slot.forkedAt = performance.now();
    child.on("message", (raw: unknown, handle: unknown) => this.#message(slot, child, raw, handle));
    child.on("error", (err) => {
      slot.lastError = err.message;
    });
    slot.exited = new Promise((resolve) => {
      child.once("exit", (code, signal) => {
        this.#exited(slot, child, code ?? signal);
        resolve();
      });
    });
  }

  #message(slot: Slot, child: ChildProcess, raw: unknown, handle: unknown): void {
    if (slot.child !== child) return;
    let m: FromReadProcess;
    try {
      m = fromReadProcess(raw);
    } catch (err) {
      this.#opts.log.error({ process: slot.index, err }, "a read process sent a malformed message; ignored");
      if (handle !== undefined && handle !== null) (handle as Socket).destroy?.();
      return;
    }
    switch (m.t) {
      case "ready":
        slot.state = "ready";
        slot.failedStarts = 0;
        // First the height: the channel is ordered, so no connection reaches the child before it.
        this.#send(slot, { t: "height", h: this.#opts.latestHeight() });
        this.#opts.log.info(
          { process: slot.index, pid: child.pid, startMs: Math.round(performance.now() - slot.forkedAt) },
          "Read process ready",
        );
        return;
      case "failed":
        slot.lastError = m.error;
        return;
      case "error":
        this.#opts.log.error({ process: slot.index, err: m.error }, "EVM RPC HTTP handler failed");
        return;
      case "closed":
        this.#ended(slot, m.c);
        return;
      case "back": {
        const socket = handle as Socket | undefined;
        const hooks = this.#hooks;
        if (socket === undefined || socket === null || hooks === undefined || this.#closing !== undefined) {
          socket?.destroy();
          this.#ended(slot, m.c);
          return;
        }
        this.#stats.handedBack++;
        socket.once("close", () => this.#ended(slot, m.c));
        hooks.adopt(socket, Buffer.from(m.p, "base64"), m.f === 1);
        return;
      }
      case "forward": {
        const hooks = this.#hooks;
        if (hooks === undefined) return;
        this.#stats.forwarded++;
        if (m.h !== undefined && this.#opts.hintSender !== undefined) {
          for (const [key, sender] of m.h) this.#opts.hintSender(key, new Uint8Array(Buffer.from(sender, "hex")));
        }
        const r = m.r;
        const answer = hooks.answer(m.b, m.s);
        const reply = (a: string | Buffer) =>
          this.#send(slot, { t: "answer", r, a: typeof a === "string" ? a : a.toString("utf8") });
        // hooks.answer turns a failure into the fast path's 500 itself; a rejection is answered alike.
        if (isPromise(answer)) answer.then(reply, () => reply(failedAnswer()));
        else reply(answer);
        return;
      }
      case "observed": {
        const observer = this.#opts.observer;
        if (observer === undefined) return;
        const now = performance.now();
        for (let i = 0; i < m.n.length; i++) {
          observer.method(m.n[i] as string).done(now - (m.d[i] as number), m.f[i] === 1);
        }
        return;
      }
    }
  }

  #exited(slot: Slot, child: ChildProcess | undefined, code: number | string | null): void {
    if (child !== undefined && slot.child !== child) return;
    const wasStarting = slot.state === "starting" || child === undefined;
    slot.child = undefined;
    // Its connections are gone with it (clients see them dropped), those still on their way to it too.
    for (const h of slot.handles.values()) {
      try {
        h.close?.();
      } catch {
        // already closed
      }
    }
    slot.handles.clear();
    for (const done of slot.conns.values()) done();
    slot.conns.clear();
    if (this.#closing !== undefined) {
      slot.state = "stopped";
      return;
    }
    this.#stats.crashes++;
    const why = `${slot.lastError ?? "no error reported"}; exit ${code}`;
    slot.failedStarts = wasStarting ? slot.failedStarts + 1 : 0;
    if (slot.failedStarts >= MAX_FAILED_STARTS) {
      slot.state = "stopped";
      this.#opts.log.error(
        { process: slot.index, attempts: slot.failedStarts, reason: why },
        "a read process keeps failing to start; it is left stopped (its connections stay with the main process)",
      );
      return;
    }
    slot.state = "off";
    const delay = Math.min(5000, 100 * 2 ** slot.failedStarts);
    this.#opts.log.error(
      { process: slot.index, reason: why, restartInMs: delay },
      "a read process stopped; restarting it",
    );
    slot.restart = setTimeout(() => this.#spawn(slot), delay);
    slot.restart.unref();
  }
}

/**
 * Forks the child: readProcess.mjs beside this module in the bundle (bin/build.mjs builds it as its own
 * entry), or readProcess.ts through tsx's loader when running from the TypeScript sources. It gets the
 * main process's Node flags (the heap settings of `npm start`), less an inspector's.
 */
function startChild(script: URL | undefined, setup: ReadProcessSetup): ChildProcess {
  const here = import.meta.url;
  const target = script ?? new URL(here.endsWith(".ts") ? "./readProcess.ts" : "./readProcess.mjs", here);
  const flags = process.execArgv.filter((a) => !a.startsWith("--inspect") && !a.startsWith("--debug"));
  const execArgv = target.pathname.endsWith(".ts") ? [...flags, "--import", tsxLoaderUrl()] : flags;
  return fork(fileURLToPath(target), [JSON.stringify(setup)], {
    execArgv,
    stdio: ["ignore", "inherit", "inherit", "ipc"],
    serialization: "json",
  });
}

let tsxLoader: string | undefined;

/** tsx's loader (its package's `.` export), as a file URL for `--import`. */
function tsxLoaderUrl(): string {
  if (tsxLoader !== undefined) return tsxLoader;
  const require = createRequire(import.meta.url);
  const pkgFile = require.resolve("tsx/package.json");
  const pkg = JSON.parse(readFileSync(pkgFile, "utf8")) as { exports: Record<string, unknown> };
  const entry = typeof pkg.exports["."] === "string" ? (pkg.exports["."] as string) : "./dist/loader.mjs";
  tsxLoader = pathToFileURL(join(dirname(pkgFile), entry)).href;
  return tsxLoader;
}
