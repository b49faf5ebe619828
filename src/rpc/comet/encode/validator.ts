import type { Validator } from "../../../types/validator.js";
import type { ValidatorSetView } from "../services.js";
import { encodePubKey, hex, i64 } from "./wire.js";

/** Validators with their proposer priority (docs/cometbft-rpc.md §2.1, Validator). */
export function encodeValidatorPriority(v: Validator) {
  return {
    address: hex(v.address),
    pub_key: encodePubKey(v.pubKey),
    voting_power: i64(v.votingPower),
    proposer_priority: i64(v.proposerPriority),
  };
}

/** types.ValidatorSet: `{"validators":[…],"proposer":…}`; the empty set is `{"validators":null,"proposer":null}`. */
export function encodeValidatorSet(set: ValidatorSetView) {
  const proposer = set.getProposer();
  return {
    validators: set.validators.length === 0 ? null : set.validators.map(encodeValidatorPriority),
    proposer: proposer === undefined ? null : encodeValidatorPriority(proposer),
  };
}
