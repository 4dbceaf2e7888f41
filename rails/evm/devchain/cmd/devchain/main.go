// Command devchain starts a local EVM chain for the production demo: anvil
// on 127.0.0.1 with TestUSDC deployed, at least 1,000,000 USDC minted to
// anvil's first default account, and the given hot wallets funded with
// USDC and ether for gas. It prints shell lines:
//
//	CHAIN_RPC_URL=http://127.0.0.1:PORT
//	CHAIN_ID=31337
//	USDC_TOKEN=0x…
//	ANVIL_PID=…          (with -detach)
//	DEPOSIT_XPUB=xpub…   (with -deposit-keys: m/44'/60'/1' of anvil's mnemonic)
//	DEPOSIT_XPRV=xprv…   (the same tree's xprv, for the sweeper; test keys only)
//
// With -detach anvil runs on in the background (stop it with kill
// $ANVIL_PID); without, devchain stays in the foreground until interrupted
// and stops anvil on its way out.
//
//	go run ./rails/evm/devchain/cmd/devchain -detach -port 8545 -hot 0x7099…79C8 -log data/anvil.log
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"payments/rails/evm/devchain"
)

func main() {
	var (
		hot         = flag.String("hot", "", "hot wallet addresses to fund, comma-separated")
		port        = flag.Int("port", 0, "port on 127.0.0.1 (0: any free one)")
		detach      = flag.Bool("detach", false, "leave anvil running in the background and exit")
		logPath     = flag.String("log", "anvil.log", "anvil's output, with -detach")
		ownerUSDC   = flag.Int64("owner-usdc", 1_000_000, "whole USDC minted to anvil's first default account")
		hotUSDC     = flag.Int64("hot-usdc", 100_000, "whole USDC minted to each hot wallet")
		hotEther    = flag.Int64("hot-ether", 100, "ether given to each hot wallet for gas")
		depositKeys = flag.Bool("deposit-keys", false, "print a deposit xpub and xprv (test keys from anvil's mnemonic)")
		blockTime   = flag.Int("block-time", 0, "seconds between blocks (0: a block per transaction)")
	)
	flag.Parse()
	var hots []common.Address
	for _, h := range strings.Split(*hot, ",") {
		if h = strings.TrimSpace(h); h == "" {
			continue
		}
		if !common.IsHexAddress(h) {
			fail("-hot: %q is not an address", h)
		}
		hots = append(hots, common.HexToAddress(h))
	}
	if *ownerUSDC < 1_000_000 {
		fail("-owner-usdc: at least 1,000,000")
	}
	var args []string
	if *blockTime > 0 {
		args = append(args, "--block-time", fmt.Sprint(*blockTime))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var c *devchain.Chain
	var err error
	if *detach {
		c, err = devchain.StartDetached(ctx, *logPath, *port, args...)
	} else {
		c, err = devchain.StartPort(ctx, *port, args...)
	}
	if err != nil {
		fail("%v", err)
	}
	token, err := c.Setup(ctx, *ownerUSDC, *hotUSDC, *hotEther, hots...)
	if err != nil {
		if *detach {
			syscall.Kill(c.Pid, syscall.SIGTERM)
		} else {
			c.Close()
		}
		fail("%v", err)
	}
	fmt.Printf("CHAIN_RPC_URL=%s\nCHAIN_ID=%d\nUSDC_TOKEN=%s\n", c.URL, devchain.ChainID, token.Hex())
	if *detach {
		fmt.Printf("ANVIL_PID=%d\n", c.Pid)
	}
	if *depositKeys {
		acct := devchain.DepositAccount()
		fmt.Printf("DEPOSIT_XPUB=%s\nDEPOSIT_XPRV=%s\n", acct.Neuter(), acct)
	}
	if *detach {
		return
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
	c.Close()
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "devchain: "+format+"\n", args...)
	os.Exit(1)
}
