import { writeFileSync } from "node:fs";
import { makeMixedNetwork } from "./mixedNetwork.js";

const net = await makeMixedNetwork({
  goValidators: Number(process.argv[2] ?? 0),
  comethValidators: Number(process.argv[3] ?? 1),
  timeoutCommit: "300ms",
});
await net.startValidators();
writeFileSync(
  "/tmp/rpcdiff/net.json",
  JSON.stringify(
    net.nodes.map((n) => ({
      name: n.name,
      kind: n.kind,
      rpc: n.rpcUrl,
      pid: n.pid,
      home: n.home,
      pk: n.validatorPubKey,
    })),
  ),
);
console.log("UP", net.dir);
process.on("SIGTERM", async () => {
  await net.close();
  process.exit(0);
});
setInterval(() => {}, 1 << 30);
