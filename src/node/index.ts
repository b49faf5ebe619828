// node/: the composition root. Owns: building the subsystems in dependency order (stores → app →
// mempool → events/indexer → consensus → RPC), wiring them through their narrow interfaces (the
// RPC's services, consensus's deps), and stopping them in reverse. Does not own: any protocol
// logic, wire formats or printing (cli/ prints what startNode returns).

export { formatDevAccounts } from "../app/index.js";
export { assertDataDirFree, DataDirLockedError } from "./dataDirLock.js";
export { ANVIL_COMPAT_VERSION, DevChain } from "./devChain.js";
export {
  DB_FILES,
  type DevStartOptions,
  isDevChainGenesis,
  type RunningNode,
  type StartNodeOptions,
  startNode,
} from "./node.js";
export { ShutdownStack } from "./shutdownStack.js";
