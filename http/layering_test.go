package http

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// The front end (this package and its sub-packages) translates; the
// application decides (package actors/app).
// No handler builds a ledger command, draws an identifier or a secret,
// computes a fee or prices a conversion: those are operations' work. This
// test reads the package's source (tests aside) for calls and composite
// literals that do, and fails on any not in stillInHTTP, the list of what
// the move into actors/app has yet to take, which only shrinks: an entry
// that no longer occurs fails too, so that the list stays true.
func TestHandlersDecideNothing(t *testing.T) {
	commands := ledgerCommandTypes(t)
	forbiddenCalls := map[string]bool{
		"actors.NewID": true, "actors.NewKeySecret": true, "actors.NewWebhookSecret": true,
		"ledger.PayoutFee": true, "ledger.CollectionFee": true, "ledger.OrderFee": true,
		"ledger.SplitPayoutDebit": true, "rails.ConvertFrom": true, "rails.ConvertTo": true,
	}
	found := map[string]bool{}
	var files []string // this package's and its sub-packages'
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".go") {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CompositeLit:
				if sel, ok := n.Type.(*ast.SelectorExpr); ok {
					if x, ok := sel.X.(*ast.Ident); ok && x.Name == "ledger" && commands[sel.Sel.Name] {
						found[name+": ledger."+sel.Sel.Name+"{}"] = true
					}
				}
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok {
					if x, ok := sel.X.(*ast.Ident); ok && forbiddenCalls[x.Name+"."+sel.Sel.Name] {
						found[name+": "+x.Name+"."+sel.Sel.Name+"()"] = true
					}
				}
			}
			return true
		})
	}
	var got []string
	for k := range found {
		got = append(got, k)
	}
	sort.Strings(got)
	for _, g := range got {
		if !slices.Contains(stillInHTTP, g) {
			t.Errorf("%s: the front end decides; call an operation of actors/app instead", g)
		}
	}
	for _, w := range stillInHTTP {
		if !found[w] {
			t.Errorf("%s is listed in stillInHTTP but no longer occurs: remove it from the list", w)
		}
	}
}

// ledgerCommandTypes are the names of package ledger's command types: the
// types with a Kind method.
func ledgerCommandTypes(t *testing.T) map[string]bool {
	t.Helper()
	files, err := filepath.Glob("../ledger/*.go")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(?m)^func \([a-z]* ?\*([A-Z][A-Za-z0-9]*)\) Kind\(\) Kind`)
	out := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllSubmatch(b, -1) {
			out[string(m[1])] = true
		}
	}
	if len(out) < 50 {
		t.Fatalf("found only %d ledger command types: the pattern no longer matches", len(out))
	}
	return out
}

// stillInHTTP is what the front end still decides, to be moved into
// actors/app. It only shrinks.
var stillInHTTP = []string{
	"admin.go: actors.NewID()",
	"admin.go: actors.NewKeySecret()",
	"admin.go: ledger.CreateAPIKey{}",
	"admin.go: ledger.CreateControlledKey{}",
	"admin.go: ledger.CreateOrganization{}",
	"admin.go: ledger.RevokeAPIKey{}",
	"checkout_page.go: actors.NewID()",
	"clock.go: ledger.AdvanceClock{}",
	"conversions.go: actors.NewID()",
	"conversions.go: ledger.CreateQuote{}",
	"conversions.go: rails.ConvertFrom()",
	"conversions.go: rails.ConvertTo()",
	"cryptoaddresses.go: actors.NewID()",
	"cryptoaddresses.go: ledger.CreateCryptoAddress{}",
	"cryptoaddresses.go: ledger.UpdateCryptoAddress{}",
	"dashboard_account.go: ledger.ChangeMemberPassword{}",
	"dashboard_account.go: ledger.RecordSignInFailure{}",
	"dashboard_auth.go: actors.NewID()",
	"dashboard_auth.go: ledger.AcceptInvitation{}",
	"dashboard_auth.go: ledger.CreatePasswordReset{}",
	"dashboard_auth.go: ledger.EndDashboardSession{}",
	"dashboard_auth.go: ledger.RecordSignInFailure{}",
	"dashboard_auth.go: ledger.StartDashboardSession{}",
	"dashboard_team.go: actors.NewID()",
	"dashboard_team.go: ledger.CreateInvitation{}",
	"dashboard_team.go: ledger.RemoveMember{}",
	"dashboard_team.go: ledger.RevokeInvitation{}",
	"dashboard_team.go: ledger.SetMemberRole{}",
	"deposits.go: actors.NewID()",
	"deposits.go: ledger.CollectionFee()",
	"deposits.go: ledger.ReceiveDeposit{}",
	"disputes.go: actors.NewID()",
	"disputes.go: ledger.AddDisputeMessage{}",
	"disputes.go: ledger.OpenDispute{}",
	"disputes.go: ledger.ResolveDispute{}",
	"disputes.go: ledger.RespondToDispute{}",
	"files.go: actors.NewID()",
	"files.go: ledger.CreateFile{}",
	"files.go: ledger.SetFileSigningKey{}",
	"keycontrols.go: ledger.SetKeyControls{}",
	"orders.go: ledger.DepositOrder{}",
	"orders.go: ledger.OrderFee()",
	"orders.go: ledger.SplitPayoutDebit()",
	"orders.go: rails.ConvertFrom()",
	"orders.go: rails.ConvertTo()",
	"payment_links.go: actors.NewID()",
	"payment_links.go: ledger.CheckoutDepositCommand{}",
	"payment_links.go: ledger.CollectionFee()",
	"payment_links.go: ledger.CreateCheckoutSession{}",
	"payment_links.go: ledger.CreatePaymentLink{}",
	"payment_links.go: ledger.CreatePaymentPage{}",
	"payment_links.go: ledger.UpdatePaymentLink{}",
	"payment_links.go: ledger.UpdatePaymentPage{}",
	"payment_links.go: rails.ConvertTo()",
	"payouts.go: ledger.SplitPayoutDebit()",
	"payouts.go: rails.ConvertFrom()",
	"payouts.go: rails.ConvertTo()",
	"recipients.go: actors.NewID()",
	"recipients.go: ledger.CreateRecipients{}",
	"recipients.go: ledger.CreateRecipient{}",
	"recipients.go: ledger.DeleteRecipient{}",
	"recipients.go: ledger.UpdateRecipient{}",
	"render.go: rails.ConvertFrom()",
	"virtualaccounts.go: actors.NewID()",
	"virtualaccounts.go: ledger.CreateVirtualAccount{}",
	"virtualaccounts.go: ledger.UpdateVirtualAccount{}",
	"webhooks.go: actors.NewID()",
	"webhooks.go: actors.NewWebhookSecret()",
	"webhooks.go: ledger.CreateWebhookEndpoint{}",
	"webhooks.go: ledger.DeleteWebhookEndpoint{}",
	"webhooks.go: ledger.RetryWebhookDelivery{}",
	"webhooks.go: ledger.RotateWebhookSecret{}",
	"webhooks.go: ledger.SendWebhookTest{}",
	"webhooks.go: ledger.UpdateWebhookEndpoint{}",
}
