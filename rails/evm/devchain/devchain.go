// Package devchain runs a local EVM chain for the rails/evm tests and the
// production demo: Foundry's anvil on loopback, with test tokens compiled
// from contracts/ (a standard ERC-20 "TestUSDC" and a Tether-style
// "TestUSDT" whose transfer returns nothing). The compiled bytecode is
// committed beside the sources, so only anvil is needed at run time; the
// tools are installed by tools.sh (make evm-tools).
//
// It is test and demo tooling: the service never imports it. Every chain
// it starts listens on 127.0.0.1 only, on a port the system picks, and dies
// with Close (or, detached, with the pid it reports).
package devchain

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/pbkdf2"
	"crypto/sha512"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"

	"payments/rails/evm"
)

// Mnemonic is anvil's default mnemonic; its accounts m/44'/60'/0'/0/i are
// funded with 10,000 ether each on a new chain.
const Mnemonic = "test test test test test test test test test test test junk"

// ChainID is the id the chains started here use (anvil's default).
const ChainID = 31337

// Contract is a compiled contract.
type Contract struct {
	Name string
	ABI  string
	Bin  []byte // creation bytecode
}

var (
	//go:embed contracts/TestUSDC.bin
	usdcBin string
	//go:embed contracts/TestUSDC.abi.json
	usdcABI string
	//go:embed contracts/TestUSDT.bin
	usdtBin string
	//go:embed contracts/TestUSDT.abi.json
	usdtABI string
)

// TestUSDC and TestUSDT are the compiled test tokens.
var (
	TestUSDC = Contract{Name: "TestUSDC", ABI: usdcABI, Bin: mustHex(usdcBin)}
	TestUSDT = Contract{Name: "TestUSDT", ABI: usdtABI, Bin: mustHex(usdtBin)}
)

func mustHex(s string) []byte {
	b, err := hex.DecodeString(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(s), "0x")))
	if err != nil {
		panic("devchain: committed bytecode is not hex: " + err.Error())
	}
	return b
}

// ToolsDir is where tools.sh installs: $PAYMENTS_EVM_TOOLS, else
// $XDG_CACHE_HOME/payments/evm-tools, else ~/.cache/payments/evm-tools.
func ToolsDir() string {
	if d := os.Getenv("PAYMENTS_EVM_TOOLS"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "payments", "evm-tools")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".cache", "payments", "evm-tools")
}

// AnvilPath finds anvil: $PAYMENTS_ANVIL, the tools directory, then PATH.
func AnvilPath() (string, bool) {
	if p := os.Getenv("PAYMENTS_ANVIL"); p != "" {
		return p, true
	}
	p := filepath.Join(ToolsDir(), "node_modules", "@foundry-rs", "anvil-linux-amd64", "bin", "anvil")
	if st, err := os.Stat(p); err == nil && st.Mode()&0o111 != 0 {
		return p, true
	}
	if p, err := exec.LookPath("anvil"); err == nil {
		return p, true
	}
	return "", false
}

// SkipWithoutAnvil skips a test that needs a local chain when anvil is not
// installed, and fails it instead where PAYMENTS_REQUIRE_ANVIL is set (CI,
// after make evm-tools), so that the chain tests cannot pass there by
// skipping. t is the test (a testing.TB).
func SkipWithoutAnvil(t interface {
	Helper()
	Fatal(args ...any)
	Skip(args ...any)
}) {
	t.Helper()
	if _, ok := AnvilPath(); ok {
		return
	}
	if os.Getenv("PAYMENTS_REQUIRE_ANVIL") != "" {
		t.Fatal("anvil is not installed and PAYMENTS_REQUIRE_ANVIL is set: run make evm-tools")
	}
	t.Skip("anvil is not installed: run make evm-tools (or set PAYMENTS_ANVIL)")
}

// DevKey is the private key of anvil's default account i.
// DepositAccount is the demo's deposit tree: m/44'/60'/1' of anvil's
// mnemonic, whose xpub a production node derives deposit addresses from
// and whose xprv the sweeper signs with. Test keys only.
func DepositAccount() *evm.ExtendedKey {
	seed, _ := pbkdf2.Key(sha512.New, Mnemonic, []byte("mnemonic"), 2048, 64)
	master, _ := evm.NewMasterKey(seed)
	acct, err := master.Derive(44+evm.HardenedOffset, 60+evm.HardenedOffset, 1+evm.HardenedOffset)
	if err != nil {
		panic(err) // a fixed path of a fixed seed
	}
	return acct
}

func DevKey(i uint32) *ecdsa.PrivateKey {
	seed, err := pbkdf2.Key(sha512.New, Mnemonic, []byte("mnemonic"), 2048, 64)
	if err != nil {
		panic(err)
	}
	master, err := evm.NewMasterKey(seed)
	if err != nil {
		panic(err)
	}
	k, err := master.Derive(44+evm.HardenedOffset, 60+evm.HardenedOffset, evm.HardenedOffset, 0, i)
	if err != nil {
		panic(err)
	}
	return k.PrivateKey()
}

// Chain is a running anvil.
type Chain struct {
	URL string
	RPC *rpc.Client
	Eth *ethclient.Client
	Pid int

	cmd     *exec.Cmd
	done    chan struct{}
	closeMu sync.Mutex
}

var listening = regexp.MustCompile(`Listening on (127\.0\.0\.1:\d+)`)

// Start runs anvil on 127.0.0.1 on a port the system picks, with extra
// arguments (such as "--block-time", "1"), and waits until it answers.
// Close stops it.
func Start(ctx context.Context, args ...string) (*Chain, error) { return StartPort(ctx, 0, args...) }

// StartPort is Start on a given port (0: any free one).
func StartPort(ctx context.Context, port int, args ...string) (*Chain, error) {
	anvil, ok := AnvilPath()
	if !ok {
		return nil, errors.New("devchain: anvil is not installed (make evm-tools, or set PAYMENTS_ANVIL)")
	}
	argv := append([]string{"--host", "127.0.0.1", "--port", fmt.Sprint(port), "--chain-id", fmt.Sprint(ChainID)}, args...)
	cmd := exec.Command(anvil, argv...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("devchain: starting anvil: %w", err)
	}
	c := &Chain{cmd: cmd, Pid: cmd.Process.Pid, done: make(chan struct{})}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		sent := false
		for sc.Scan() {
			if m := listening.FindStringSubmatch(sc.Text()); m != nil && !sent {
				addr <- m[1]
				sent = true
			}
		}
		io.Copy(io.Discard, out)
		cmd.Wait()
		close(c.done)
	}()
	wait, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	select {
	case a := <-addr:
		c.URL = "http://" + a
	case <-c.done:
		return nil, errors.New("devchain: anvil exited before it listened")
	case <-wait.Done():
		c.Close()
		return nil, errors.New("devchain: anvil did not listen within 30s")
	}
	if err := c.dial(wait); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Attach connects to a chain already running at url (one StartDetached
// started, say).
func Attach(ctx context.Context, url string) (*Chain, error) {
	c := &Chain{URL: url}
	if err := c.dial(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Chain) dial(ctx context.Context) error {
	rc, err := rpc.DialContext(ctx, c.URL)
	if err != nil {
		return err
	}
	c.RPC, c.Eth = rc, ethclient.NewClient(rc)
	for {
		if _, err := c.Eth.ChainID(ctx); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("devchain: the chain at %s does not answer", c.URL)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Close stops the anvil Start started and waits for it to exit.
func (c *Chain) Close() {
	c.closeMu.Lock()
	defer c.closeMu.Unlock()
	if c.RPC != nil {
		c.RPC.Close()
	}
	if c.cmd != nil && c.cmd.Process != nil {
		c.cmd.Process.Kill()
		<-c.done
		c.cmd = nil
	}
}

// Call makes a raw JSON-RPC call (anvil_mine, evm_snapshot, …).
func (c *Chain) Call(ctx context.Context, result any, method string, args ...any) error {
	return c.RPC.CallContext(ctx, result, method, args...)
}

// Mine mines n blocks at once.
func (c *Chain) Mine(ctx context.Context, n int) error {
	return c.Call(ctx, nil, "anvil_mine", hexutil.Uint64(n))
}

// Snapshot saves the chain's state; Revert returns to it.
func (c *Chain) Snapshot(ctx context.Context) (string, error) {
	var id string
	err := c.Call(ctx, &id, "evm_snapshot")
	return id, err
}

// Revert returns to a snapshot, dropping the blocks mined since.
func (c *Chain) Revert(ctx context.Context, id string) error {
	var ok bool
	if err := c.Call(ctx, &ok, "evm_revert", id); err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("devchain: snapshot %s was not reverted", id)
	}
	return nil
}

// SetAutomine turns mining of each transaction as it arrives on or off.
func (c *Chain) SetAutomine(ctx context.Context, on bool) error {
	return c.Call(ctx, nil, "evm_setAutomine", on)
}

// SetBalance sets an account's ether balance.
func (c *Chain) SetBalance(ctx context.Context, a common.Address, wei *big.Int) error {
	return c.Call(ctx, nil, "anvil_setBalance", a, (*hexutil.Big)(wei))
}

// Head is the latest block number.
func (c *Chain) Head(ctx context.Context) (uint64, error) { return c.Eth.BlockNumber(ctx) }

// Send signs a transaction from key (nonce and fees from the node) and
// sends it; it returns the transaction without waiting.
func (c *Chain) Send(ctx context.Context, key *ecdsa.PrivateKey, to *common.Address, value *big.Int, data []byte) (*types.Transaction, error) {
	from := crypto.PubkeyToAddress(key.PublicKey)
	nonce, err := c.Eth.PendingNonceAt(ctx, from)
	if err != nil {
		return nil, err
	}
	if value == nil {
		value = new(big.Int)
	}
	gas, err := c.Eth.EstimateGas(ctx, ethereum.CallMsg{From: from, To: to, Value: value, Data: data})
	if err != nil {
		return nil, fmt.Errorf("devchain: estimating gas: %w", err)
	}
	tip, err := c.Eth.SuggestGasTipCap(ctx)
	if err != nil {
		return nil, err
	}
	head, err := c.Eth.HeaderByNumber(ctx, nil)
	if err != nil {
		return nil, err
	}
	feeCap := new(big.Int).Add(new(big.Int).Mul(head.BaseFee, big.NewInt(2)), tip)
	tx, err := types.SignNewTx(key, types.LatestSignerForChainID(big.NewInt(ChainID)), &types.DynamicFeeTx{
		ChainID: big.NewInt(ChainID), Nonce: nonce, GasTipCap: tip, GasFeeCap: feeCap, Gas: gas * 12 / 10, To: to, Value: value, Data: data})
	if err != nil {
		return nil, err
	}
	return tx, c.Eth.SendTransaction(ctx, tx)
}

// Transact sends a transaction and waits for its receipt (mining a block
// when automine is off); a reverted one is an error.
func (c *Chain) Transact(ctx context.Context, key *ecdsa.PrivateKey, to *common.Address, value *big.Int, data []byte) (*types.Receipt, error) {
	tx, err := c.Send(ctx, key, to, value, data)
	if err != nil {
		return nil, err
	}
	return c.Wait(ctx, tx.Hash())
}

// Wait waits for a receipt, mining a block if none comes soon.
func (c *Chain) Wait(ctx context.Context, h common.Hash) (*types.Receipt, error) {
	for i := 0; ; i++ {
		r, err := c.Eth.TransactionReceipt(ctx, h)
		if err == nil {
			if r.Status != types.ReceiptStatusSuccessful {
				return r, fmt.Errorf("devchain: transaction %s reverted", h.Hex())
			}
			return r, nil
		}
		if !errors.Is(err, ethereum.NotFound) {
			return nil, err
		}
		if i == 20 {
			if err := c.Mine(ctx, 1); err != nil {
				return nil, err
			}
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// Deploy deploys a contract from key and returns its address.
func (c *Chain) Deploy(ctx context.Context, key *ecdsa.PrivateKey, k Contract) (common.Address, error) {
	r, err := c.Transact(ctx, key, nil, nil, k.Bin)
	if err != nil {
		return common.Address{}, fmt.Errorf("devchain: deploying %s: %w", k.Name, err)
	}
	return r.ContractAddress, nil
}

// Mint mints amount base units of token to `to`; key is the token's owner
// (its deployer).
func (c *Chain) Mint(ctx context.Context, key *ecdsa.PrivateKey, token, to common.Address, amount *big.Int) error {
	_, err := c.Transact(ctx, key, &token, nil, call("mint(address,uint256)", to, amount))
	return err
}

// TransferToken sends amount base units of token from key's account.
func (c *Chain) TransferToken(ctx context.Context, key *ecdsa.PrivateKey, token, to common.Address, amount *big.Int) (*types.Transaction, error) {
	return c.Send(ctx, key, &token, nil, call("transfer(address,uint256)", to, amount))
}

// TokenBalance reads balanceOf(a).
func (c *Chain) TokenBalance(ctx context.Context, token, a common.Address) (*big.Int, error) {
	out, err := c.Eth.CallContract(ctx, ethereum.CallMsg{To: &token, Data: call("balanceOf(address)", a)}, nil)
	if err != nil {
		return nil, err
	}
	return new(big.Int).SetBytes(out), nil
}

// call encodes a call of address and uint256 arguments.
func call(sig string, args ...any) []byte {
	b := crypto.Keccak256([]byte(sig))[:4]
	for _, a := range args {
		switch v := a.(type) {
		case common.Address:
			b = append(b, common.LeftPadBytes(v.Bytes(), 32)...)
		case *big.Int:
			b = append(b, common.LeftPadBytes(v.Bytes(), 32)...)
		default:
			panic(fmt.Sprintf("devchain: cannot encode %T", a))
		}
	}
	return b
}

// StartDetached runs anvil in its own session, in the background, writing
// its output to logPath, and returns once it answers; it outlives this
// process. Stop it by the pid in Chain.Pid (SIGTERM).
func StartDetached(ctx context.Context, logPath string, port int, args ...string) (*Chain, error) {
	anvil, ok := AnvilPath()
	if !ok {
		return nil, errors.New("devchain: anvil is not installed (make evm-tools, or set PAYMENTS_ANVIL)")
	}
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	argv := append([]string{"--host", "127.0.0.1", "--port", fmt.Sprint(port), "--chain-id", fmt.Sprint(ChainID)}, args...)
	cmd := exec.Command(anvil, argv...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = detached()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("devchain: starting anvil: %w", err)
	}
	pid := cmd.Process.Pid
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, _ := os.ReadFile(logPath)
		if m := listening.FindSubmatch(b); m != nil {
			c, err := Attach(ctx, "http://"+string(m[1]))
			if err != nil {
				return nil, err
			}
			c.Pid = pid
			return c, nil
		}
		select {
		case <-exited:
			return nil, fmt.Errorf("devchain: anvil exited; see %s", logPath)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			return nil, fmt.Errorf("devchain: anvil did not listen within 30s; see %s", logPath)
		}
	}
}

// Setup deploys TestUSDC from anvil's first default account, mints
// usdcOwner whole USDC to that account and hotUSDC to each hot wallet, and
// gives each hot wallet hotEther ether for gas.
func (c *Chain) Setup(ctx context.Context, usdcOwner, hotUSDC, hotEther int64, hot ...common.Address) (common.Address, error) {
	owner := DevKey(0)
	token, err := c.Deploy(ctx, owner, TestUSDC)
	if err != nil {
		return common.Address{}, err
	}
	unit := big.NewInt(1_000_000)
	if err := c.Mint(ctx, owner, token, crypto.PubkeyToAddress(owner.PublicKey), new(big.Int).Mul(big.NewInt(usdcOwner), unit)); err != nil {
		return common.Address{}, err
	}
	for _, h := range hot {
		if err := c.Mint(ctx, owner, token, h, new(big.Int).Mul(big.NewInt(hotUSDC), unit)); err != nil {
			return common.Address{}, err
		}
		wei := new(big.Int).Mul(big.NewInt(hotEther), big.NewInt(1e18))
		if err := c.SetBalance(ctx, h, wei); err != nil {
			return common.Address{}, err
		}
	}
	return token, nil
}
