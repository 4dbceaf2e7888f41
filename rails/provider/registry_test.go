package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

type payoutOnly struct{}

func (payoutOnly) PreparePayout(context.Context, Instruction) (Prepared, error) {
	return Prepared{Key: "k"}, nil
}
func (payoutOnly) SubmitPayout(context.Context, Instruction, Prepared) (Outcome, error) {
	return Outcome{State: StateProcessing}, nil
}
func (payoutOnly) PayoutStatus(context.Context, Instruction, Prepared) (Outcome, error) {
	return Outcome{State: StateCompleted}, nil
}

func TestBuildRegistry(t *testing.T) {
	factories := map[string]Factory{
		"payouts_only": func(cfg InstanceConfig, s Secrets) (any, error) {
			if _, err := s.Get("token"); err != nil {
				return nil, err
			}
			return payoutOnly{}, nil
		},
	}
	env := map[string]string{"TOKEN": "s3cret"}
	getenv := func(k string) string { return env[k] }
	cases := []struct {
		name    string
		config  string
		wantErr string
	}{
		{"served", `{"providers":[{"name":"a","kind":"payouts_only","methods":[{"code":"gh_mtn","directions":["payouts"]}],"secrets":{"token":{"env":"TOKEN"}}}]}`, ""},
		{"direction the adapter lacks", `{"providers":[{"name":"a","kind":"payouts_only","methods":[{"code":"gh_mtn","directions":["collections"]}],"secrets":{"token":{"env":"TOKEN"}}}]}`, "does not do collections"},
		{"unknown kind", `{"providers":[{"name":"a","kind":"nope","methods":[]}]}`, `unknown kind "nope"`},
		{"missing secret", `{"providers":[{"name":"a","kind":"payouts_only","methods":[{"code":"gh_mtn","directions":["payouts"]}],"secrets":{"token":{"env":"UNSET"}}}]}`, "UNSET is empty"},
		{"method served twice", `{"providers":[
			{"name":"a","kind":"payouts_only","methods":[{"code":"gh_mtn","directions":["payouts"]}],"secrets":{"token":{"env":"TOKEN"}}},
			{"name":"b","kind":"payouts_only","methods":[{"code":"gh_mtn","directions":["payouts"]}],"secrets":{"token":{"env":"TOKEN"}}}]}`, `already served that way by "a"`},
		{"duplicate name", `{"providers":[
			{"name":"a","kind":"payouts_only","methods":[{"code":"gh_mtn","directions":["payouts"]}],"secrets":{"token":{"env":"TOKEN"}}},
			{"name":"a","kind":"payouts_only","methods":[{"code":"ke_mpesa","directions":["payouts"]}],"secrets":{"token":{"env":"TOKEN"}}}]}`, "used twice"},
		{"misspelt key", `{"providers":[{"name":"a","kind":"payouts_only","method":[]}]}`, "unknown field"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := ParseConfig([]byte(tc.config))
			var r *Registry
			if err == nil {
				r, err = Build(cfg, factories, getenv)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, in, ok := r.Payouter("gh_mtn"); !ok || in.Name != "a" {
				t.Fatalf("gh_mtn payouts not served by a")
			}
			if r.Serves("gh_mtn", Collections) || r.Serves("ke_mpesa", Payouts) {
				t.Fatal("serves what is not configured")
			}
		})
	}
}

func TestSecretNeverPrints(t *testing.T) {
	s := NewSecret("hunter2")
	for _, out := range []string{fmt.Sprint(s), fmt.Sprintf("%v %+v %#v %s %q", s, s, s, s, s), fmt.Sprint(Secrets{"k": s})} {
		if strings.Contains(out, "hunter2") {
			t.Fatalf("secret printed: %s", out)
		}
	}
	if s.Reveal() != "hunter2" {
		t.Fatal("Reveal lost the value")
	}
}
