import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

/** The launcher (bin/cometh.js): the compiled build when fresh, else the sources through tsx. */
const LAUNCHER = fileURLToPath(new URL("../../bin/cometh.js", import.meta.url));

export interface RunnerIo {
  out(line: string): void;
  err(line: string): void;
}

/**
 * The runner's own Node flags (bin/cometh.js's heap settings) carry over to the nodes, as
 * child_process.fork does, except the inspector's: one debug port cannot serve every node.
 */
const NODE_FLAGS = process.execArgv.filter((f) => !/^--(inspect|debug)/.test(f));

/**
 * Runs every node of a testnet as a child process (`cometh start --home <node home>`), prefixing
 * each output line with the node's name. Resolves when all children have exited; `stop()` sends
 * SIGTERM to each child (only the processes it started).
 */

export function runTestnetNodes(
  nodes: readonly { readonly name: string; readonly home: string }[],
  io: RunnerIo,
  extraArgs: readonly string[] = [],
): { done: Promise<number>; stop(): void } {
  const children: ChildProcess[] = [];
  const exits: Promise<number>[] = [];
  for (const n of nodes) {
    const child = spawn(process.execPath, [...NODE_FLAGS, LAUNCHER, "start", "--home", n.home, ...extraArgs], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    children.push(child);
    const pipe = (stream: NodeJS.ReadableStream | null, write: (line: string) => void) => {
      let buf = "";
      stream?.setEncoding("utf8");
      stream?.on("data", (chunk: string) => {
        buf += chunk;
        let nl = buf.indexOf("\n");
        while (nl >= 0) {
          write(`${n.name} | ${buf.slice(0, nl)}`);
          buf = buf.slice(nl + 1);
          nl = buf.indexOf("\n");
        }
      });
    };
    pipe(child.stdout, io.out);
    pipe(child.stderr, io.err);
    exits.push(
      new Promise((resolve) => {
        child.on("exit", (code, signal) => {
          io.err(`${n.name} | exited (${signal ?? `code ${code}`})`);
          resolve(code ?? (signal === "SIGTERM" || signal === "SIGINT" ? 0 : 1));
        });
      }),
    );
  }
  return {
    done: Promise.all(exits).then((codes) => (codes.every((c) => c === 0) ? 0 : 1)),
    stop: () => {
      for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGTERM");
    },
  };
}
