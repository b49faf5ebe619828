#!/usr/bin/env node
// Entry for the `cometh` binary: runs the TypeScript sources through tsx's loader, so a checkout
// works without a build step.
import { register } from "tsx/esm/api";

register();
await import("../src/cli/main.ts");
