// Command cometbft-signer is a remote signer made of CometBFT's own privval code (FilePV,
// SignerDialerEndpoint, SignerServer at the version test/interop/versions.json pins), so the
// interop tests can run cometh as a node against the Go side of the protocol. Test-only: built by
// test/interop/install.sh into the interop bin folder, never shipped.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/cometbft/cometbft/crypto/ed25519"
	"github.com/cometbft/cometbft/libs/log"
	cmtnet "github.com/cometbft/cometbft/libs/net"
	"github.com/cometbft/cometbft/privval"
)

func main() {
	addr := flag.String("addr", "", "the node's priv_validator_laddr (tcp://host:port or unix:///path)")
	keyFile := flag.String("key", "", "priv_validator_key.json")
	stateFile := flag.String("state", "", "priv_validator_state.json")
	chainID := flag.String("chain-id", "", "chain id")
	retries := flag.Int("retries", 600, "dials before giving up, 100 ms apart")
	flag.Parse()
	if *addr == "" || *keyFile == "" || *stateFile == "" || *chainID == "" {
		fmt.Fprintln(os.Stderr, "usage: cometbft-signer -addr ADDR -key FILE -state FILE -chain-id ID")
		os.Exit(2)
	}
	logger := log.NewTMLogger(log.NewSyncWriter(os.Stdout))
	pv := privval.LoadFilePV(*keyFile, *stateFile)

	var dialer privval.SocketDialer
	proto, address := cmtnet.ProtocolAndAddress(*addr)
	switch proto {
	case "unix":
		dialer = privval.DialUnixFn(address)
	case "tcp":
		dialer = privval.DialTCPFn(address, 5*time.Second, ed25519.GenPrivKey())
	default:
		fmt.Fprintf(os.Stderr, "unsupported protocol %q\n", proto)
		os.Exit(2)
	}
	endpoint := privval.NewSignerDialerEndpoint(logger, dialer, privval.SignerDialerEndpointConnRetries(*retries))
	server := privval.NewSignerServer(endpoint, *chainID, pv)
	if err := server.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	logger.Info("cometbft-signer started", "addr", *addr)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
	_ = server.Stop()
}
