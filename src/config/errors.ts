import { ComethError } from "../util/errors.js";

/**
 * A config mistake found at startup: malformed TOML, a wrong type, an unknown value, a negative
 * number. The message names the file (or flag), the key and what would be valid.
 */
export class ConfigError extends ComethError {
  /** The file or flag the bad value came from, e.g. "/home/u/.cometh/config/config.toml" or "--rpc.laddr". */
  readonly source: string;
  /** "[table] key" or "key" for base settings; undefined when the whole file is at fault. */
  readonly key: string | undefined;
  constructor(source: string, key: string | undefined, problem: string, opts: { cause?: unknown } = {}) {
    super(key === undefined ? `${source}: ${problem}` : `${source}: ${key} ${problem}`, { cause: opts.cause });
    this.source = source;
    this.key = key;
  }
}

/** genesis.json is missing, malformed or invalid; the message names the field. */
export class GenesisError extends ComethError {
  readonly file: string;
  readonly field: string | undefined;
  constructor(file: string, field: string | undefined, problem: string, opts: { cause?: unknown } = {}) {
    super(field === undefined ? `${file}: ${problem}` : `${file}: ${field}: ${problem}`, { cause: opts.cause });
    this.file = file;
    this.field = field;
  }
}

/** node_key.json is missing or malformed. */
export class NodeKeyFileError extends ComethError {
  readonly file: string;
  constructor(file: string, problem: string, opts: { cause?: unknown } = {}) {
    super(`${file}: ${problem}`, { cause: opts.cause });
    this.file = file;
  }
}
