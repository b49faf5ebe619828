import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { ConfigError, isHomeInitialized, loadGenesis, loadNodeConfig } from "../config/index.js";
import { FilePV, formatSignerAddress, SignerServer } from "../privval/index.js";
import { bytesToHexUpper } from "../util/bytes.js";
import type { Logger } from "../util/logger.js";
import type { CliIo } from "./io.js";

export interface SignerFlags {
  addr?: string;
  chainId?: string;
  keyFile?: string;
  stateFile?: string;
}

/** Where the signer's key, sign state and chain id come from: the flags, else the home's files. */
export function signerFiles(home: string, flags: SignerFlags): { keyFile: string; stateFile: string; chainId: string } {
  let keyFile = join(home, "config", "priv_validator_key.json");
  let stateFile = join(home, "data", "priv_validator_state.json");
  let genesisFile = join(home, "config", "genesis.json");
  // A node home (config.toml) may move the files (priv_validator_key_file, ...): follow it.
  if (isHomeInitialized(home)) {
    const config = loadNodeConfig(home);
    keyFile = config.base.privValidatorKeyFile;
    stateFile = config.base.privValidatorStateFile;
    genesisFile = config.base.genesisFile;
  }
  let chainId = flags.chainId;
  if (chainId === undefined) {
    if (!existsSync(genesisFile)) {
      throw new ConfigError(
        "--chain-id",
        undefined,
        `the signer needs the chain id: pass --chain-id, or put the chain's genesis.json at ${genesisFile}`,
      );
    }
    chainId = loadGenesis(genesisFile).chainId;
  }
  return {
    keyFile: flags.keyFile === undefined ? keyFile : resolve(flags.keyFile),
    stateFile: flags.stateFile === undefined ? stateFile : resolve(flags.stateFile),
    chainId,
  };
}

/**
 * `cometh signer`: holds the validator key and its double-sign state, dials the node's
 * priv_validator_laddr and signs what the node asks for (docs/remote-signer.md). Runs until SIGINT
 * or SIGTERM.
 */
export async function runSigner(home: string, flags: SignerFlags, log: Logger, io: CliIo): Promise<void> {
  if (flags.addr === undefined || flags.addr === "") {
    throw new ConfigError(
      "cometh signer",
      "--addr",
      "is required: the node's priv_validator_laddr, e.g. tcp://127.0.0.1:26659",
    );
  }
  const files = signerFiles(home, flags);
  const pv = await FilePV.load(files.keyFile, files.stateFile);
  const server = new SignerServer({ address: flags.addr, chainId: files.chainId, key: pv, log });
  const last = pv.lastSignState();
  io.out(
    `cometh signer: validator ${bytesToHexUpper(pv.address())} on chain ${files.chainId}, last signed ${last.height}/${last.round}/${last.step}; dialing ${formatSignerAddress(server.address)}`,
  );
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, "stopping the signer");
    void server.stop().then(() => log.flush(() => io.exit(0)));
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
}
