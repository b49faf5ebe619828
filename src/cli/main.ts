// cli/: argv → config → node. The only code that prints. Owns: the `cometh` commands (init, start,
// show-node-id, show-validator, version, unsafe-reset-all), their flags and exit codes. Does not own:
// settings, file formats (config/, privval/) or starting subsystems (node/).

import { startupMark } from "../util/startupTrace.js";
import { runCli } from "./program.js";

startupMark("cli: modules loaded");

await runCli(process.argv);
