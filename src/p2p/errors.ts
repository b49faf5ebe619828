import { ComethError } from "../util/errors.js";

/** Base of every error the p2p switch, address book and PEX reactor throw (p2p/errors.go, p2p/pex/errors.go). */
export class P2PError extends ComethError {
  constructor(message: string, opts: { cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
  }
}

/** An address string without `<id>@` (ErrNetAddressNoID). */
export class NetAddressNoIdError extends P2PError {
  readonly addr: string;
  constructor(addr: string) {
    super(`address (${addr}) does not contain ID. Write it as <40 hex id>@<host>:<port>`);
    this.addr = addr;
  }
}

/** An address whose ID, host or port is malformed (ErrNetAddressInvalid). */
export class NetAddressInvalidError extends P2PError {
  readonly addr: string;
  constructor(addr: string, problem: string) {
    super(`invalid address (${addr}): ${problem}. Write it as <40 hex id>@<host>:<port>`);
    this.addr = addr;
  }
}

/** A node ID that is not 40 lowercase-or-uppercase hex characters (p2p.validateID). */
export class InvalidNodeIdError extends P2PError {
  readonly id: string;
  constructor(id: string, problem: string) {
    super(`invalid node ID "${id}": ${problem}. A node ID is 40 hex characters (20 bytes)`);
    this.id = id;
  }
}

/** Two reactors registered the same channel ID (CometBFT panics in AddReactor). */
export class ChannelConflictError extends P2PError {
  readonly channelId: number;
  constructor(channelId: number, existing: string, added: string) {
    const hex = channelId.toString(16).toUpperCase().padStart(2, "0");
    super(`channel ${hex} has multiple reactors ${existing} & ${added}. Give each reactor its own channel IDs`);
    this.channelId = channelId;
  }
}

/** The switch was asked to do something that needs it running. */
export class SwitchNotRunningError extends P2PError {
  constructor(what: string) {
    super(`cannot ${what}: the switch is not running. Call start() first`);
  }
}

/** A peer with that ID is already connected (ErrSwitchDuplicatePeerID / ErrRejected isDuplicate). */
export class SwitchDuplicatePeerIdError extends P2PError {
  readonly id: string;
  constructor(id: string) {
    super(`duplicate peer ID ${id}: already connected`);
    this.id = id;
  }
}

/** Another peer already connects from that IP and allow_duplicate_ip is false (ErrSwitchDuplicatePeerIP). */
export class SwitchDuplicatePeerIpError extends P2PError {
  readonly host: string;
  constructor(host: string) {
    super(`duplicate peer IP ${host}: already connected. Set [p2p] allow_duplicate_ip = true to allow it`);
    this.host = host;
  }
}

/** The dialed or accepted node is this node (ErrSwitchConnectToSelf / ErrRejected isSelf). */
export class SwitchConnectToSelfError extends P2PError {
  readonly addr: string;
  constructor(addr: string) {
    super(`connect to self: ${addr}`);
    this.addr = addr;
  }
}

/** The connection upgrade failed or the peer proved a different key than dialed (ErrSwitchAuthenticationFailure). */
export class SwitchAuthenticationFailureError extends P2PError {
  readonly addr: string;
  constructor(addr: string, cause: unknown) {
    super(`failed to authenticate peer ${addr}: ${errorText(cause)}`, { cause });
    this.addr = addr;
  }
}

/** Inbound or outbound peer limit reached (CometBFT logs "already have enough ... peers"). */
export class TooManyPeersError extends P2PError {
  constructor(direction: "inbound" | "outbound", have: number, max: number) {
    super(
      `already have enough ${direction} peers (${have} of max ${max}). ` +
        `Raise [p2p] max_num_${direction}_peers or list the peer in unconditional_peer_ids`,
    );
  }
}

/** We are already dialing that ID or connected to it (ErrCurrentlyDialingOrExistingAddress). */
export class CurrentlyDialingOrExistingAddressError extends P2PError {
  readonly addr: string;
  constructor(addr: string) {
    super(`connection with ${addr} has been established or dialed`);
    this.addr = addr;
  }
}

/** Dialing the TCP address failed or timed out. */
export class DialError extends P2PError {
  readonly addr: string;
  constructor(addr: string, cause: unknown) {
    super(`dial ${addr} failed: ${errorText(cause)}`, { cause });
    this.addr = addr;
  }
}

/** The address book refused an address; `reason` says why (pex ErrAddrBook*). */
export class AddrBookRejectedError extends P2PError {
  readonly reason: AddrBookRejectReason;
  readonly addr: string;
  constructor(reason: AddrBookRejectReason, addr: string, detail = "") {
    super(
      `cannot add address ${addr} to the address book: ${ADDR_BOOK_REASONS[reason]}${detail ? ` (${detail})` : ""}`,
    );
    this.reason = reason;
    this.addr = addr;
  }
}

export const ADDR_BOOK_REASONS = {
  invalid: "invalid address",
  banned: "address is banned",
  private: "address is private",
  privateSrc: "source is private",
  self: "cannot add ourselves",
  nonRoutable: "address is not routable (set [p2p] addr_book_strict = false on private networks)",
} as const;
export type AddrBookRejectReason = keyof typeof ADDR_BOOK_REASONS;

/** addrbook.json exists but cannot be read or parsed (CometBFT panics). */
export class AddrBookFileError extends P2PError {
  readonly path: string;
  constructor(path: string, problem: string, cause?: unknown) {
    super(`address book ${path}: ${problem}. Fix or delete the file`, { cause });
    this.path = path;
  }
}

/** The PEX reactor was registered on a switch that cannot dial (it needs numPeers, dialPeerWithAddress, ...). */
export class UnsupportedSwitchError extends P2PError {
  constructor(missing: string) {
    super(`the switch lacks ${missing}. Register PexReactor on the p2p Switch`);
  }
}

/** A PEX protocol violation by a peer: unsolicited address list, requests too often, bad message. */
export class PexProtocolError extends P2PError {}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
