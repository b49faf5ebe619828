import { formatDialString, type Peer, parseNetAddress } from "../../p2p/index.js";
import type { PeerControl, PeerView } from "../../rpc/evm/index.js";
import { ComethError } from "../../util/errors.js";

/** What the Ethereum JSON-RPC needs of the p2p switch (p2p/ Switch satisfies it). */
export interface EvmSwitchView {
  isListening(): boolean;
  peers(): readonly Peer[];
  peer(id: string): Peer | undefined;
  listenAddress(): { readonly host: string; readonly port: number };
  dialPeersAsync(addrs: readonly string[], opts?: { persistent?: boolean }): void;
  stopPeerGracefully(peer: Peer): void;
}

/** A clear refusal of a malformed peer URL (the RPC answers it as a server error, as geth does). */
export class InvalidPeerUrlError extends ComethError {}

/** `id@host:port`, parsed and checked as the switch would; geth's "invalid enode" error otherwise. */
function parsePeerUrl(url: string): ReturnType<typeof parseNetAddress> {
  try {
    return parseNetAddress(url);
  } catch (err) {
    throw new InvalidPeerUrlError(
      `invalid peer url ${JSON.stringify(url)} (want id@host:port): ${(err as Error).message}`,
    );
  }
}

/** admin_peers, admin_addPeer/removePeer (and the trusted variants) over CometBFT's switch. */
export class EvmPeerAdapter implements PeerControl {
  readonly #sw: EvmSwitchView;

  constructor(sw: EvmSwitchView) {
    this.#sw = sw;
  }

  peers(): PeerView[] {
    return this.#sw.peers().map((p) => ({
      id: p.id,
      name: p.nodeInfo.moniker,
      remoteAddress: formatDialString({ host: p.remoteHost, port: p.remotePort }),
      inbound: !p.isOutbound,
    }));
  }

  /** Dials `url` (persistent peers are redialed when lost); true once the dial is queued. */
  addPeer(url: string, persistent: boolean): boolean {
    parsePeerUrl(url);
    this.#sw.dialPeersAsync([url], { persistent });
    return true;
  }

  /** Disconnects the peer with `url`'s id when connected; true, as geth answers, either way. */
  removePeer(url: string): boolean {
    const addr = parsePeerUrl(url);
    const peer = this.#sw.peer(addr.id);
    if (peer !== undefined) this.#sw.stopPeerGracefully(peer);
    return true;
  }

  peerCount(): number {
    return this.#sw.peers().length;
  }

  listening(): boolean {
    return this.#sw.isListening();
  }

  /** The bound p2p address (the configured one may say port 0); undefined before the switch listens. */
  boundListenAddr(): string | undefined {
    const bound = this.#sw.listenAddress();
    return bound.port === 0 ? undefined : `tcp://${formatDialString(bound)}`;
  }
}
