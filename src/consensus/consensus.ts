import type { ChainState } from "../types/index.js";
import { type ConsensusOptions, ConsensusState } from "./consensusState.js";
import type { ConsensusDeps } from "./deps.js";
import { makeGenesisState } from "./genesisState.js";
import { handshake } from "./handshake.js";
import type { ConsensusMessage } from "./messages.js";
import type { PeerStateView } from "./peerState.js";
import type { ConsensusStateView, RoundStateView } from "./views.js";

/** The running consensus engine, as node/ and the RPC see it. */
export interface Consensus {
  /** Opens the WAL, replays the current height, starts round 0 at start_time. */
  start(): Promise<void>;
  /** Stops after the input being handled and closes the WAL. */
  stop(): Promise<void>;
  /** dump_consensus_state round_state. */
  roundStateView(): RoundStateView;
  /** dump_consensus_state peers. */
  peerStateViews(): PeerStateView[];
  /** consensus_state. */
  consensusStateView(): ConsensusStateView;
  /** The state after the last committed block. */
  chainState(): ChainState;
  /** A consensus message from a peer (p2p calls this). */
  receivePeerMessage(peerId: string, msg: ConsensusMessage): void;
  /** A peer connected (`nodeAddress` = `<id>@<ip>:<port>` for the dump); it gets our round step. */
  addPeer(peerId: string, nodeAddress?: string): void;
  removePeer(peerId: string): void;
  /** Resolves once block `height` is committed and applied; rejects if consensus halts or stops. */
  waitForHeight(height: number): Promise<void>;
  /**
   * The validator's signer is reachable again (a remote signer reconnected): a vote of the current
   * step whose signing failed is signed now. Without this a lone validator whose signer blinked
   * would wait forever, since no timeout follows a vote it never cast.
   */
  retrySigning(): void;
  /** Resolves once no input is queued or being handled (tests). */
  idle(): Promise<void>;
  isIdle(): boolean;
  /** Why consensus halted (CONSENSUS FAILURE), if it did. */
  haltError(): Error | undefined;
  /**
   * Between two inputs, `run` rolls the stores back; consensus continues from the state it returns.
   * Only under a rewindable block-production policy (a dev chain's MiningPolicy); rejects otherwise.
   */
  rewind(run: () => Promise<ChainState>): Promise<void>;
}

/**
 * Builds consensus: loads the chain state (or the genesis state), runs the ABCI handshake so app,
 * block store and state agree, and sets up the state machine. Call start() to begin.
 */
export async function createConsensus(
  opts: ConsensusOptions,
  deps: ConsensusDeps,
  start: { handshake: boolean } = { handshake: true },
): Promise<Consensus> {
  const stored = deps.stateStore.load();
  const initial = stored ?? makeGenesisState(deps.genesis);
  // State sync restores the app instead (node/): no InitChain, no replay; start() adopts the stored state.
  const { state } = !start.handshake
    ? { state: initial }
    : await handshake(
        {
          app: deps.app,
          blockStore: deps.blockStore,
          stateStore: deps.stateStore,
          genesis: deps.genesis,
          events: deps.events,
          clock: deps.clock,
          log: deps.log,
          ...(deps.failPoint === undefined ? {} : { failPoint: deps.failPoint }),
        },
        initial,
      );
  const cs = new ConsensusState(opts, deps, state);
  return {
    start: () => cs.start(),
    stop: () => cs.stop(),
    roundStateView: () => cs.roundStateView(),
    peerStateViews: () => cs.peerStateViews(),
    consensusStateView: () => cs.consensusStateView(),
    chainState: () => cs.state,
    receivePeerMessage: (peerId, msg) => cs.receivePeerMessage(peerId, msg),
    addPeer: (peerId, nodeAddress) => cs.addPeer(peerId, nodeAddress),
    removePeer: (peerId) => cs.removePeer(peerId),
    waitForHeight: (h) => cs.waitForHeight(h),
    retrySigning: () => cs.retrySigning(),
    idle: () => cs.idle(),
    isIdle: () => cs.isIdle(),
    haltError: () => cs.haltError(),
    rewind: (run) => cs.rewind(run),
  };
}
