// app/evm/fork/: forking a dev chain from another Ethereum JSON-RPC endpoint (`cometh dev --fork-url`,
// anvil_reset's `forking`): the source client with failover and bounded timeouts whose calls return
// synchronously (`syncRpcClient.ts`, a worker thread does the HTTP), the source's state at the fork
// block read lazily and kept (`forkSource.ts`), and the disk cache per chain id and block
// (`forkCache.ts`). Does not own: where the fork's reads plug into the state (app/evm/stateDb.ts asks
// the source for keys local state has never written), the CLI flags (cli/devCommand.ts).
// docs/dev-chain.md "Forking".

export { ForkConfigError, ForkSourceError } from "./errors.js";
export { UNCACHED_CHAIN_IDS } from "./forkCache.js";
export {
  defaultForkCacheRoot,
  type ForkOptions,
  type ForkPoint,
  ForkSource,
  type RemoteAccount,
} from "./forkSource.js";
export { type RpcAnswer, type RpcRequest, SyncRpcClient } from "./syncRpcClient.js";
