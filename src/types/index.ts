/**
 * types/ owns CometBFT v0.38's domain values and everything that must be byte-identical to it:
 * blocks, headers, commits, votes, proposals, evidence, validator sets (proposer rotation, commit
 * verification), consensus params, ABCI shapes; their protobuf encodings (protoCodec), merkle
 * trees and proofs, the header/data/commit/validators/params/results/evidence hashes, vote and
 * proposal sign bytes, part sets, bit arrays, Ed25519/secp256k1 keys and addresses, BFT time,
 * and Go's Vote.String() text.
 *
 * It does not own JSON or other wire shapes (rpc/, config/, privval/), storage (store/), I/O,
 * clocks or the consensus state machine. canonical.ts is internal (sign-bytes schema).
 *
 * Imports point one way: the plain declarations (blockTypes.ts, evidenceTypes.ts, paramsTypes.ts,
 * abci.ts, blockId.ts, validator.ts, ...) import no codec; protoCodec.ts imports them; the hashing
 * and validation (block.ts, evidence.ts, params.ts, validatorSet.ts, results.ts) import both.
 */
export * from "./abci.js";
export * from "./bitArray.js";
export * from "./block.js";
export * from "./blockId.js";
export * from "./blockTypes.js";
export * from "./commit.js";
export * from "./evidence.js";
export * from "./evidenceTypes.js";
export * from "./genesis.js";
export * from "./keys.js";
export * from "./merkle.js";
export * from "./params.js";
export * from "./paramsTypes.js";
export * from "./partSet.js";
export * from "./proposal.js";
export * from "./protoCodec.js";
export * from "./results.js";
export * from "./schemaMessage.js";
export * from "./state.js";
export * from "./validator.js";
export * from "./validatorSet.js";
export * from "./vote.js";
