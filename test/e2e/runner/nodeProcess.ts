// One node of the network as a child process: `bin/cometh.js start --home HOME` (as npm start runs
// it: its Node flags and environment), output appended to HOME/../logs/NAME.log. Only the PIDs started
// here are ever signalled.
import { type ChildProcess, spawn } from "node:child_process";
import { appendFileSync, closeSync, openSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { NPM_START } from "../../integration/testNode.js";
import { cometRpc, type StatusResult } from "./rpc.js";

const LAUNCHER = fileURLToPath(new URL("../../../bin/cometh.js", import.meta.url));

/** Every child started by any E2eNode of this process, for the last-resort kill at exit. */
export const LIVE_CHILDREN = new Set<ChildProcess>();

/** SIGKILLs every node process this process started and that is still alive (and nothing else). */
export function killStartedNodes(): void {
  for (const c of LIVE_CHILDREN) {
    try {
      c.kill("SIGKILL");
    } catch {
      // Already gone.
    }
  }
}

export interface NodeSpec {
  readonly name: string;
  readonly home: string;
  readonly isValidator: boolean;
  readonly power: number;
  readonly nodeId: string;
  /** Validator address (upper-case hex), "" for full nodes. */
  readonly address: string;
  readonly p2pPort: number;
  readonly rpcPort: number;
  readonly jsonRpcPort: number;
  readonly logPath: string;
}

export type NodeState = "stopped" | "running" | "paused";

export class E2eNode {
  readonly spec: NodeSpec;
  readonly rpcUrl: string;
  readonly evmUrl: string;
  readonly #args: readonly string[];
  #child: ChildProcess | undefined;
  #exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }> | undefined;
  #state: NodeState = "stopped";
  /** Set while the runner itself is stopping the process, so its exit is not "unexpected". */
  #expectingExit = false;
  starts = 0;
  /** Exits the runner did not cause, after the node's RPC had answered: [time, code/signal]. */
  readonly unexpectedExits: { t: number; how: string }[] = [];
  /** Starts retried because a port was taken (another process bound it while the node was down). */
  readonly portRetries: { t: number; line: string }[] = [];
  #ready = false;
  readonly #now: () => number;

  constructor(spec: NodeSpec, extraArgs: readonly string[], now: () => number) {
    this.spec = spec;
    this.rpcUrl = `http://127.0.0.1:${spec.rpcPort}`;
    this.evmUrl = `http://127.0.0.1:${spec.jsonRpcPort}`;
    this.#args = extraArgs;
    this.#now = now;
  }

  get name(): string {
    return this.spec.name;
  }

  get state(): NodeState {
    return this.#state;
  }

  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /**
   * Spawns the node and resolves once its RPC answers `status` (rejects if it exits first or after
   * `timeoutMs`). A node that exits at start because one of its ports is taken (EADDRINUSE: its ports
   * are free while it is down, and any process on the machine may bind them) is started again, up
   * to 3 times, 1 s apart.
   */
  async start(timeoutMs = 60_000): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.#startOnce(timeoutMs);
        return;
      } catch (err) {
        const line = /.*EADDRINUSE.*/.exec((err as Error).message)?.[0];
        if (line === undefined || attempt >= 3 || this.#child !== undefined) throw err;
        this.portRetries.push({ t: this.#now(), line: line.trim() });
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  }

  async #startOnce(timeoutMs: number): Promise<void> {
    if (this.#child !== undefined) throw new Error(`${this.name} is already running`);
    this.#ready = false;
    this.starts++;
    appendFileSync(
      this.spec.logPath,
      `\n===== e2e: start #${this.starts} of ${this.name} at +${(this.#now() / 1000).toFixed(2)} s =====\n`,
    );
    const fd = openSync(this.spec.logPath, "a");
    let child: ChildProcess;
    try {
      child = spawn(
        process.execPath,
        [...NPM_START.nodeFlags, LAUNCHER, "start", "--home", this.spec.home, ...this.#args],
        { env: { ...process.env, ...NPM_START.env }, stdio: ["ignore", fd, fd] },
      );
    } finally {
      closeSync(fd);
    }
    this.#child = child;
    LIVE_CHILDREN.add(child);
    this.#state = "running";
    this.#expectingExit = false;
    this.#exited = new Promise((resolve) => {
      child.once("exit", (code, signal) => {
        LIVE_CHILDREN.delete(child);
        if (this.#child === child) {
          this.#child = undefined;
          this.#state = "stopped";
          if (!this.#expectingExit && this.#ready) {
            this.unexpectedExits.push({ t: this.#now(), how: signal ?? `code ${code}` });
            appendFileSync(
              this.spec.logPath,
              `\n===== e2e: ${this.name} exited by itself (${signal ?? `code ${code}`}) =====\n`,
            );
          }
        }
        resolve({ code, signal });
      });
    });
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.#child !== child) {
        throw new Error(`${this.name} exited before its RPC answered:\n${this.logTail(3000)}`);
      }
      if (Date.now() > deadline) {
        this.#expectingExit = true;
        child.kill("SIGKILL");
        throw new Error(`${this.name}: RPC did not answer within ${timeoutMs} ms`);
      }
      try {
        await cometRpc<StatusResult>(this.rpcUrl, "status", {}, 1000);
        this.#ready = true;
        return;
      } catch {
        // Not listening yet.
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** SIGKILL (a crash) and wait for the exit. */
  async kill(): Promise<void> {
    const child = this.#child;
    if (child === undefined) return;
    this.#expectingExit = true;
    child.kill("SIGKILL");
    await this.#exited;
  }

  /** SIGTERM and wait for the exit; SIGKILL after `timeoutMs`. Returns whether it exited in time. */
  async stop(timeoutMs = 20_000): Promise<boolean> {
    const child = this.#child;
    if (child === undefined) return true;
    this.#expectingExit = true;
    if (this.#state === "paused") child.kill("SIGCONT");
    child.kill("SIGTERM");
    let timer: NodeJS.Timeout | undefined;
    const inTime = await Promise.race([
      this.#exited?.then(() => true),
      new Promise<boolean>((r) => {
        timer = setTimeout(() => r(false), timeoutMs);
      }),
    ]);
    clearTimeout(timer);
    if (!inTime) {
      child.kill("SIGKILL");
      await this.#exited;
    }
    return inTime === true;
  }

  pause(): void {
    if (this.#child === undefined || this.#state !== "running") throw new Error(`${this.name} is not running`);
    this.#child.kill("SIGSTOP");
    this.#state = "paused";
  }

  resume(): void {
    if (this.#child === undefined || this.#state !== "paused") return;
    this.#child.kill("SIGCONT");
    this.#state = "running";
  }

  /** The privval sign state (validators), or undefined while it cannot be read. */
  signState(): { height: number; round: number; step: number } | undefined {
    if (!this.spec.isValidator) return undefined;
    try {
      const j = JSON.parse(readFileSync(`${this.spec.home}/data/priv_validator_state.json`, "utf8")) as {
        height: string;
        round: number;
        step: number;
      };
      return { height: Number(j.height), round: Number(j.round), step: Number(j.step) };
    } catch {
      return undefined;
    }
  }

  logTail(chars: number): string {
    try {
      const text = readFileSync(this.spec.logPath, "utf8");
      return text.slice(-chars);
    } catch {
      return "";
    }
  }
}
