package devchain

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"payments/actors/actorstest/testkit"
)

// The committed bytecode is what solc makes of the committed sources (with
// the pinned solc and OpenZeppelin versions): checked whenever the tools
// are installed, rewritten with -update (make evm-contracts).
func TestContractsCurrent(t *testing.T) {
	solcjs := filepath.Join(ToolsDir(), "node_modules", ".bin", "solcjs")
	if _, err := os.Stat(solcjs); err != nil {
		if *testkit.Update || os.Getenv("PAYMENTS_REQUIRE_ANVIL") != "" {
			t.Fatalf("solcjs is not installed at %s: run make evm-tools", solcjs)
		}
		t.Skipf("solcjs is not installed at %s (make evm-tools): the committed bytecode is not checked", solcjs)
	}
	names := []string{"TestUSDC", "TestUSDT"}
	out := compile(t, solcjs, names)
	for _, name := range names {
		files := map[string][]byte{name + ".abi.json": out[name][0], name + ".bin": out[name][1]}
		for file, want := range files {
			p := filepath.Join("contracts", file)
			if !testkit.Golden(t, p, want) {
				t.Errorf("%s is not what solc makes of %s.sol: run make evm-contracts and commit the result", p, name)
			}
		}
	}
}

var importRe = regexp.MustCompile(`(?m)^\s*import\s+(?:[^"';]*\s+from\s+)?["']([^"']+)["']\s*;`)

// compile runs solcjs's standard JSON interface, once, on contracts/NAME.sol
// for each name and every file they import, resolved here (relative imports
// against the importing unit, others under node_modules). It returns each
// contract's ABI and bytecode.
func compile(t *testing.T, solcjs string, names []string) map[string][2][]byte {
	t.Helper()
	modules := filepath.Join(ToolsDir(), "node_modules")
	sources := map[string]map[string]string{}
	var add func(unit, file string)
	add = func(unit, file string) {
		if sources[unit] != nil {
			return
		}
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatalf("source %s: %v", unit, err)
		}
		sources[unit] = map[string]string{"content": string(b)}
		for _, m := range importRe.FindAllStringSubmatch(string(b), -1) {
			imp := m[1]
			if strings.HasPrefix(imp, ".") {
				imp = path.Join(path.Dir(unit), imp)
			}
			add(imp, filepath.Join(modules, filepath.FromSlash(imp)))
		}
	}
	selection := map[string]any{}
	for _, name := range names {
		add(name+".sol", filepath.Join("contracts", name+".sol"))
		selection[name+".sol"] = map[string]any{name: []string{"abi", "evm.bytecode.object"}}
	}
	input := map[string]any{
		"language": "Solidity",
		"sources":  sources,
		"settings": map[string]any{
			"optimizer":       map[string]any{"enabled": true, "runs": 200},
			"evmVersion":      "cancun",
			"outputSelection": selection,
		},
	}
	in, _ := json.Marshal(input)
	cmd := exec.Command(solcjs, "--standard-json")
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("solcjs: %v: %s", err, stderr.String())
	}
	// solcjs may print warnings before the JSON.
	if i := bytes.IndexByte(out, '{'); i > 0 {
		out = out[i:]
	}
	var res struct {
		Errors []struct {
			Severity, FormattedMessage string
		}
		Contracts map[string]map[string]struct {
			ABI json.RawMessage
			EVM struct {
				Bytecode struct{ Object string }
			}
		}
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("solcjs output: %v", err)
	}
	for _, e := range res.Errors {
		if e.Severity == "error" {
			t.Fatalf("solc: %s", e.FormattedMessage)
		}
	}
	result := map[string][2][]byte{}
	for _, name := range names {
		c, ok := res.Contracts[name+".sol"][name]
		if !ok || c.EVM.Bytecode.Object == "" {
			t.Fatalf("solc produced no bytecode for %s", name)
		}
		var pretty bytes.Buffer
		if err := json.Indent(&pretty, c.ABI, "", "  "); err != nil {
			t.Fatal(err)
		}
		pretty.WriteByte('\n')
		result[name] = [2][]byte{pretty.Bytes(), []byte(fmt.Sprintf("%s\n", c.EVM.Bytecode.Object))}
	}
	return result
}
