// privval/: the file validator signer (CometBFT privval.FilePV) and its double-sign guard.
// Owns: priv_validator_key.json and priv_validator_state.json (formats, loading, atomic fsynced
// writes), signing votes and proposals, refusing height/round/step regressions and conflicting
// re-signs. Does not own: consensus decisions (what to sign and when), the home layout (config/),
// remote signers (priv_validator_laddr is not supported).
export { writeFileAtomic, writeFileAtomicSync } from "./atomicFile.js";
export { DoubleSignError, InvalidSignRequestError, PrivValidatorFileError } from "./errors.js";
export {
  encodeLastSignStateFile,
  encodePrivValidatorKeyFile,
  FilePV,
  type LastSignState,
  loadLastSignState,
  loadPrivValidatorKey,
  type PrivValidatorKey,
  SIGN_STEP,
  type SignStep,
} from "./filePV.js";
export {
  decodeEd25519PrivKeyJson,
  decodePubKeyJson,
  encodePrivKeyJson,
  encodePubKeyJson,
  KEY_JSON_TYPES,
  type KeyJson,
} from "./keyJson.js";
