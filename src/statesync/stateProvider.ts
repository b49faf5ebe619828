import { type ChainState, type Commit, hashConsensusParams } from "../types/index.js";
import { bytesEqual } from "../util/bytes.js";
import type { Logger } from "../util/logger.js";
import { LightClientError } from "./errors.js";
import { LightClient, type TrustOptions } from "./lightClient.js";
import { HttpLightProvider, type LightProvider } from "./lightProvider.js";

/** What the syncer needs of the chain at a snapshot height, all verified (statesync.StateProvider). */
export interface StateProvider {
  /** The app hash after block `height` (in header height + 1). */
  appHash(height: number): Promise<Uint8Array>;
  /** The commit of block `height`. */
  commit(height: number): Promise<Commit>;
  /** The chain state after block `height`, as the node would have it had it executed the blocks. */
  state(height: number): Promise<ChainState>;
}

/**
 * The light-client state provider (CometBFT statesync/stateprovider.go): the first RPC server is
 * the primary, the others witnesses; the state at H is assembled from the verified light blocks
 * H, H+1 and H+2 and the consensus params of H+1, checked against header H+1's consensus hash.
 */
export class LightClientStateProvider implements StateProvider {
  readonly #lc: LightClient;
  readonly #primary: LightProvider;
  readonly #initialHeight: number;
  readonly #chainId: string;

  constructor(opts: {
    chainId: string;
    initialHeight: number;
    /** Light providers, or RPC server addresses (`rpc_servers`); the first is the primary. */
    servers: readonly (string | LightProvider)[];
    trust: TrustOptions;
    log: Logger;
  }) {
    const providers = opts.servers.map((s) => (typeof s === "string" ? new HttpLightProvider(s) : s));
    const [primary, ...witnesses] = providers;
    if (primary === undefined || witnesses.length === 0) {
      throw new LightClientError("at least two RPC servers are required (rpc_servers)");
    }
    this.#primary = primary;
    this.#chainId = opts.chainId;
    this.#initialHeight = opts.initialHeight;
    this.#lc = new LightClient({ chainId: opts.chainId, primary, witnesses, trust: opts.trust, log: opts.log });
  }

  /** Checks the trusted header now, so bad trust options fail before any snapshot is fetched. */
  initialize(): Promise<void> {
    return this.#lc.initialize();
  }

  async appHash(height: number): Promise<Uint8Array> {
    // Header H+1 holds the app hash of H; H+2 and H are needed for the state: fetch them now so a
    // snapshot is not restored before H+2 exists.
    const next = await this.#lc.verifyLightBlockAtHeight(height + 1);
    await this.#lc.verifyLightBlockAtHeight(height + 2);
    await this.#lc.verifyLightBlockAtHeight(height);
    return next.header.appHash;
  }

  async commit(height: number): Promise<Commit> {
    return (await this.#lc.verifyLightBlockAtHeight(height)).commit;
  }

  async state(height: number): Promise<ChainState> {
    const last = await this.#lc.verifyLightBlockAtHeight(height);
    const current = await this.#lc.verifyLightBlockAtHeight(height + 1);
    const next = await this.#lc.verifyLightBlockAtHeight(height + 2);
    const params = await this.#primary.consensusParams(current.header.height);
    if (!bytesEqual(hashConsensusParams(params), current.header.consensusHash)) {
      throw new LightClientError(
        `consensus params of height ${current.header.height} from ${this.#primary.address} do not match its header's consensus hash`,
      );
    }
    return {
      chainId: this.#chainId,
      initialHeight: this.#initialHeight,
      lastBlockHeight: last.header.height,
      lastBlockTime: last.header.time,
      lastBlockId: last.commit.blockId,
      appHash: current.header.appHash,
      lastResultsHash: current.header.lastResultsHash,
      lastValidators: last.validators,
      validators: current.validators,
      nextValidators: next.validators,
      // As CometBFT: the light client cannot know when they last changed; these heights are safe.
      lastHeightValidatorsChanged: next.header.height,
      consensusParams: params,
      lastHeightConsensusParamsChanged: current.header.height,
      appVersion: current.header.version.app,
    };
  }
}
