// bin/build.mjs's priming run: starts a dev chain on the new build with the Node flags of
// package.json's "dev" script (the same as "start"'s and the binary's), drives the methods a test
// suite runs over its Ethereum JSON-RPC once each, then has bin/cometh.js write the V8 code cache
// (bin/loadBundle.js) and stop. The cache then holds the bytecode of what the start-up ran and of
// what blocks, sends, receipts, snapshots, reverts and calls run, so a fresh `cometh dev` compiles
// none of it again on its first blocks (docs/dev-chain.md "Start-up"). A failure only costs that
// speed: the build goes on, and a run that finds no cache writes its own.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { request } from "node:http";
import { createServer } from "node:net";

// A contract that stores its first calldata word in slot 0, logs it and returns it: the EVM's
// calldata, storage, memory, log and return paths. Init code (12 bytes) copies the 24-byte runtime.
const INIT_CODE = "0x6018600c60003960186000f3600035600055600054600052600160206000a160206000f3";
const WORD = `0x${"2a".padStart(64, "0")}`;

/** A free TCP port on 127.0.0.1 with the next one free too (a dev chain's WebSocket server takes port + 1). */
async function freePortPair() {
  const take = (port) =>
    new Promise((resolve) => {
      const server = createServer();
      server.once("error", () => resolve(undefined));
      server.listen(port, "127.0.0.1", () => {
        const taken = server.address().port;
        server.close(() => resolve(taken));
      });
    });
  for (let attempt = 0; attempt < 20; attempt++) {
    const port = await take(0);
    if (port !== undefined && port < 65535 && (await take(port + 1)) !== undefined) return port;
  }
  throw new Error("no free pair of ports on 127.0.0.1");
}

function rpc(port, method, params = []) {
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method, params });
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        method: "POST",
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
        timeout: 10_000,
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk) => {
          text += chunk;
        });
        res.on("end", () => {
          try {
            const answer = JSON.parse(text);
            if (answer.error) reject(new Error(`${method}: ${answer.error.message}`));
            else resolve(answer.result);
          } catch (err) {
            reject(err);
          }
        });
      },
    );
    req.on("timeout", () => req.destroy(new Error(`${method}: no answer in 10 s`)));
    req.on("error", reject);
    req.end(body);
  });
}

/** What a test suite's fixtures and tests send, a few times over (the first block's path differs from later ones'). */
async function workload(port) {
  const [from, to] = await rpc(port, "eth_accounts");
  for (let pass = 0; pass < 3; pass++) {
    const snapshot = await rpc(port, "evm_snapshot");
    const deploy = await rpc(port, "eth_sendTransaction", [{ from, data: INIT_CODE }]);
    const { contractAddress } = await rpc(port, "eth_getTransactionReceipt", [deploy]);
    const call = { from, to: contractAddress, data: WORD };
    await rpc(port, "eth_estimateGas", [call]);
    await rpc(port, "eth_call", [call, "latest"]);
    const stored = await rpc(port, "eth_sendTransaction", [call]);
    await rpc(port, "eth_getTransactionReceipt", [stored]);
    await rpc(port, "eth_getStorageAt", [contractAddress, "0x0", "latest"]);
    for (let i = 0; i < 5; i++) {
      const hash = await rpc(port, "eth_sendTransaction", [{ from, to, value: "0x1" }]);
      await rpc(port, "eth_getTransactionReceipt", [hash]);
    }
    const raw = await rpc(port, "eth_signTransaction", [{ from, to, value: "0x2" }]);
    const rawHash = await rpc(port, "eth_sendRawTransaction", [raw]);
    await rpc(port, "eth_getTransactionByHash", [rawHash]);
    await rpc(port, "eth_getTransactionReceipt", [rawHash]);
    await rpc(port, "hardhat_mine", ["0x20"]);
    await rpc(port, "evm_increaseTime", [60]);
    await rpc(port, "evm_mine");
    await rpc(port, "eth_getBlockByNumber", ["latest", true]);
    await rpc(port, "eth_getLogs", [{ fromBlock: "0x0", toBlock: "latest", address: contractAddress }]);
    await rpc(port, "eth_getBalance", [to, "latest"]);
    await rpc(port, "eth_getTransactionCount", [from, "latest"]);
    await rpc(port, "eth_blockNumber");
    await rpc(port, "evm_revert", [snapshot]);
  }
}

/**
 * Primes the code cache of the build in `root` (see above). Resolves when the dev chain has stopped;
 * returns what went wrong, or undefined.
 */
export async function primeCodeCache(root) {
  const script = JSON.parse(readFileSync(`${root}/package.json`, "utf8")).scripts?.dev ?? "";
  const flags = (/ node((?: --[^ ]+)*) bin\/cometh\.js dev$/.exec(script)?.[1] ?? "").split(" ").filter(Boolean);
  let port;
  try {
    port = await freePortPair();
  } catch (err) {
    return err.message;
  }
  const child = spawn(
    process.execPath,
    [...flags, `${root}/bin/cometh.js`, "dev", "--port", String(port), "--rpc.laddr", "tcp://127.0.0.1:0", "--silent"],
    // "signal": bin/cometh.js writes the cache when SIGUSR2 comes, then stops.
    { env: { ...process.env, COMETH_PRIME_CODE_CACHE: "signal" }, stdio: ["ignore", "ignore", "pipe"] },
  );
  let stderr = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk) => {
    stderr += chunk;
  });
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  // Bounded: a chain that does not stop in time is killed (by its PID), and the cache is not written.
  const bound = setTimeout(() => child.kill("SIGKILL"), 120_000);
  let problem;
  try {
    const deadline = Date.now() + 60_000;
    for (;;) {
      try {
        await rpc(port, "eth_chainId");
        break;
      } catch (err) {
        if (child.exitCode !== null || Date.now() > deadline) throw err;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    await workload(port);
  } catch (err) {
    // Still write what was compiled so far.
    problem = `the workload failed (${err.message})`;
  }
  if (child.exitCode === null) child.kill("SIGUSR2");
  const { code, signal } = await exited;
  clearTimeout(bound);
  if (code !== 0) problem = `${problem ?? ""} exit ${code ?? signal}: ${stderr}`.trim();
  return problem;
}
