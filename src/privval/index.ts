// privval/: the validator's signers. The file signer (CometBFT privval.FilePV) and its double-sign
// guard: priv_validator_key.json and priv_validator_state.json (formats, loading, atomic fsynced
// writes), signing votes and proposals, refusing height/round/step regressions and conflicting
// re-signs. The remote signer (priv_validator_laddr, docs/remote-signer.md): the privval socket
// protocol's messages and framing, the node's listening end (SignerClient, which consensus signs
// through) and the signer process's dialing end (SignerServer, run by `cometh signer`).
// Does not own: consensus decisions (what to sign and when), the home layout (config/), the secret
// connection (p2p/conn/, reused).
export { writeFileAtomic, writeFileAtomicNoSync, writeFileAtomicSync } from "./atomicFile.js";
export {
  DoubleSignError,
  InvalidSignRequestError,
  PrivValidatorFileError,
  RemoteSignerError,
  SignerAddressError,
  SignerConnectionError,
  SignerProtocolError,
} from "./errors.js";
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
export { DEFAULT_SIGNER_CLIENT_OPTIONS, SignerClient, type SignerClientOptions } from "./signerClient.js";
export {
  formatSignerAddress,
  parseSignerAddress,
  type SignerAddress,
  SignerConnection,
} from "./signerConnection.js";
export { SignerListener, type SignerListenerOptions } from "./signerListener.js";
export {
  decodeSignerMessage,
  encodeSignerMessage,
  MAX_SIGNER_MESSAGE_BYTES,
  type RemoteSignerErrorInfo,
  type SignerMessage,
} from "./signerMessages.js";
export { handleSignerRequest, SignerServer, type SignerServerOptions, type SigningKey } from "./signerServer.js";
