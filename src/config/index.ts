// config/: the settings table (one entry per config.toml/app.toml key: toml key, flag, default,
// parser), NodeConfig, the home layout (`init`, `unsafe-reset-all`), genesis.json and node_key.json.
// Owns: reading, validating and writing those files; ConfigError messages naming file, key and valid
// values. Does not own: starting anything (node/), the validator key and sign state (privval/), printing
// (cli/).
export { DURATION_UNITS, formatDurationMs, formatGoDuration, parseGoDuration } from "./duration.js";
export { ConfigError, GenesisError, NodeKeyFileError } from "./errors.js";
export { decodeGenesis, encodeGenesis, loadGenesis, MAX_CHAIN_ID_LENGTH, saveGenesis } from "./genesis.js";
export {
  DEFAULT_HOME_DIR,
  HOME_ENV,
  INIT_VALIDATOR_POWER,
  type InitHomeOptions,
  type InitHomeResult,
  initHome,
  isHomeInitialized,
  type ResetHomeResult,
  randomChainId,
  resetHome,
  resolveHome,
} from "./home.js";
export { type ListenAddress, parseListenAddress } from "./listenAddress.js";
export { LOG_LEVELS, type LogLevelName, type LogLevels, parseLogLevel } from "./logLevel.js";
export {
  type AppBaseConfig,
  type BaseConfig,
  type BlockSyncConfig,
  CONFIG_FILE_PATHS,
  type ConfigOverrides,
  type ConsensusConfig,
  type EvmConfig,
  type InstrumentationConfig,
  type JsonRpcConfig,
  loadNodeConfig,
  type MempoolConfig,
  type NodeConfig,
  normalizeFlagName,
  type P2PConfig,
  type RpcConfig,
  type StateSyncConfig,
  type StorageConfig,
  type TxIndexConfig,
} from "./nodeConfig.js";
export {
  encodeNodeKeyFile,
  generateNodeKey,
  loadNodeKey,
  loadOrGenerateNodeKey,
  type NodeKey,
  nodeIdFromPubKey,
  saveNodeKey,
} from "./nodeKey.js";
export { packageVersion } from "./packageVersion.js";
export { PROXY_APPS, type ProxyApp, type ProxyAppTarget, parseProxyApp } from "./proxyApp.js";
export { renderConfigFile } from "./renderConfigFile.js";
export type { Setting, SettingKind, TomlInput } from "./setting.js";
export {
  COMETBFT_VERSION,
  type ConfigFileName,
  EVM_NAMESPACES,
  type EvmNamespace,
  listSettings,
  SETTINGS,
  type SettingEntry,
} from "./settingsTable.js";
export {
  createTestnet,
  TESTNET_PORT_STRIDE,
  TESTNET_VALIDATOR_POWER,
  type TestnetNode,
  type TestnetOptions,
  type TestnetResult,
} from "./testnet.js";
