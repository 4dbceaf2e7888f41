package rails

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"sort"
	"strings"
)

// Account validation outcomes: what a rail says of an account number.
const (
	OutcomeValid           Outcome = "valid"
	OutcomeAccountNotFound Outcome = "account_not_found"
	OutcomeAccountClosed   Outcome = "account_closed"
	OutcomeTimeout         Outcome = "timeout"
)

// ValidationTrigger drives the sandbox name resolution: the suffix of the
// account number picks the outcome. SandboxNames reads it, and so does the
// simulation index.
var ValidationTrigger = Trigger{
	Operation:   "validate_account",
	Method:      "POST",
	Path:        "/v1/validate",
	Description: "The suffix of accountNumber picks what the bank or mobile money rail says of the account: 000000 not found, 000001 closed, 000002 the rail times out; anything else is valid, with a holder name derived from the number. Recipient creation resolves names the same way.",
	Field:       "accountNumber",
	Rule:        "suffix",
	Scenarios: map[string]Outcome{
		"000000": OutcomeAccountNotFound,
		"000001": OutcomeAccountClosed,
		"000002": OutcomeTimeout,
	},
	Default: OutcomeValid,
}

// SelectSuffix returns the outcome a suffix trigger picks for a value: the
// longest scenario key the value ends with, or the default.
func (t Trigger) SelectSuffix(value string) Outcome {
	keys := make([]string, 0, len(t.Scenarios))
	for k := range t.Scenarios {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if len(keys[i]) != len(keys[j]) {
			return len(keys[i]) > len(keys[j])
		}
		return keys[i] < keys[j]
	})
	for _, k := range keys {
		if strings.HasSuffix(value, k) {
			return t.Scenarios[k]
		}
	}
	return t.Default
}

// Resolution is what a rail says of an account number: an outcome, and the
// holder's name when the account is valid.
type Resolution struct {
	Outcome     Outcome
	AccountName string // when Outcome is OutcomeValid
	Message     string // why not, for the API caller, otherwise
}

// SandboxNames resolves account holder names on the sandbox, from the
// account number alone (see ValidationTrigger): the same number always gets
// the same name. Safe for concurrent use.
type SandboxNames struct{}

// ResolveName resolves the holder of accountNumber on method m.
func (SandboxNames) ResolveName(ctx context.Context, m Method, accountNumber string) (Resolution, error) {
	if err := ctx.Err(); err != nil {
		return Resolution{}, err
	}
	switch o := ValidationTrigger.SelectSuffix(accountNumber); o {
	case OutcomeAccountNotFound:
		return Resolution{Outcome: o, Message: "No account with this number exists on " + m.Name + " (sandbox: account number ending in 000000)"}, nil
	case OutcomeAccountClosed:
		return Resolution{Outcome: o, Message: "The account is closed (sandbox: account number ending in 000001)"}, nil
	case OutcomeTimeout:
		return Resolution{Outcome: o, Message: m.Name + " did not answer in time; retry later (sandbox: account number ending in 000002)"}, nil
	default:
		return Resolution{Outcome: o, AccountName: sandboxHolderName(accountNumber)}, nil
	}
}

// ResolveName always fails on a deployment without provider adapters: no
// rail exists to ask.
func (NoProvider) ResolveName(context.Context, Method, string) (Resolution, error) {
	return Resolution{}, ErrNoProvider
}

var (
	sandboxGivenNames = [...]string{
		"AMA", "KWAME", "ABENA", "KOFI", "CHIOMA", "EMEKA", "NGOZI", "TUNDE",
		"WANJIKU", "OTIENO", "AMINA", "BARAKA", "AISHA", "MOUSSA", "FATOU", "IBRAHIM",
		"THANDO", "SIPHO", "NALEDI", "LERATO", "MUTALE", "CHIPO", "ZAWADI", "NEEMA",
	}
	sandboxFamilyNames = [...]string{
		"MENSAH", "SERWAA", "OWUSU", "ASANTE", "OKAFOR", "ADEYEMI", "BELLO", "EZE",
		"KAMAU", "ODHIAMBO", "MWANGI", "WAMBUI", "DIALLO", "KONE", "NDIAYE", "TRAORE",
		"NKOSI", "DLAMINI", "MOKOENA", "BANDA", "PHIRI", "MUTESI", "UWASE", "MOYO",
	}
)

// sandboxHolderName derives a holder name from an account number.
func sandboxHolderName(accountNumber string) string {
	sum := sha256.Sum256([]byte(accountNumber))
	given := binary.BigEndian.Uint32(sum[0:4]) % uint32(len(sandboxGivenNames))
	family := binary.BigEndian.Uint32(sum[4:8]) % uint32(len(sandboxFamilyNames))
	return sandboxGivenNames[given] + " " + sandboxFamilyNames[family]
}
