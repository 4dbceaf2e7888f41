package mpesa

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"payments/rails/internal/railtest"
	"payments/rails/provider"
)

func publicKeyPEM(t *testing.T) []byte {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKIXPublicKey(&k.PublicKey)
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

// stub answers tokens, and every other request with status and body.
func stub(t *testing.T, status int, body string) (*Adapter, *atomic.Int32) {
	t.Helper()
	s := provider.NewSecret
	return railtest.Stub(t, "/oauth/", http.StatusOK, `{"access_token":"tok","expires_in":"3599"}`, status, body, func(url string) (*Adapter, error) {
		return New(Config{Name: "t", BaseURL: url, CallbackURL: "https://pay.example/cb", ConsumerKey: s("k"), ConsumerSecret: s("s"),
			ShortCode: "174379", Passkey: s("p"), B2CShortCode: "600000", InitiatorName: "api", InitiatorPassword: s("pw"), Certificate: publicKeyPEM(t)})
	})
}

var pay = provider.Instruction{ID: "pay_x", Currency: "KES", AmountMinor: 100_00, Exponent: 2, AccountNumber: "254708374149"}

// submitAnswered prepares pay and submits it with prepare and submit, the
// adapter's methods of a direction, to a stub that answers c, and checks
// what the adapter makes of the answer; it returns the adapter and the
// prepared key.
func submitAnswered(t *testing.T, c railtest.QueryCase,
	prepare func(*Adapter, context.Context, provider.Instruction) (provider.Prepared, error),
	submit func(*Adapter, context.Context, provider.Instruction, provider.Prepared) (provider.Outcome, error)) (*Adapter, string) {
	t.Helper()
	a, _ := stub(t, c.Status, c.Body)
	p, _ := prepare(a, context.Background(), pay)
	out, err := submit(a, context.Background(), pay, p)
	c.Check(t, out, err)
	return a, p.Key
}

func TestB2CAnswers(t *testing.T) {
	cases := []struct {
		railtest.QueryCase
		resend bool // the same process may send it again
	}{
		{railtest.QueryCase{Name: "accepted", Status: 200, Body: `{"ConversationID":"AG_1","OriginatorConversationID":"x","ResponseCode":"0","ResponseDescription":"Accept the service request successfully."}`, Want: provider.StateProcessing}, false},
		{railtest.QueryCase{Name: "refused in the answer", Status: 200, Body: `{"ResponseCode":"1","ResponseDescription":"Rejected"}`, WantKind: provider.ErrRejected}, true},
		{railtest.QueryCase{Name: "unreadable 200", Status: 200, Body: `<html>`, WantKind: provider.ErrUnknownOutcome}, false},
		{railtest.QueryCase{Name: "duplicate originator", Status: 500, Body: `{"errorCode":"500.002.1001","errorMessage":"Duplicate OriginatorConversationID"}`, Want: provider.StateProcessing}, false},
		{railtest.QueryCase{Name: "bad request", Status: 400, Body: `{"errorCode":"400.002.02","errorMessage":"Bad Request - Invalid PartyB"}`, WantKind: provider.ErrRejected}, true},
		{railtest.QueryCase{Name: "token refused twice", Status: 401, Body: `{"errorCode":"401.002.01","errorMessage":"Invalid Access Token"}`, WantKind: provider.ErrAuthentication}, true},
		{railtest.QueryCase{Name: "spike arrest", Status: 500, Body: `{"errorCode":"500.003.02","errorMessage":"Spike Arrest Violation"}`, WantKind: provider.ErrRateLimited}, true},
		{railtest.QueryCase{Name: "too many requests", Status: 429, WantKind: provider.ErrRateLimited}, true},
		{railtest.QueryCase{Name: "wrong route", Status: 404, Body: `{"errorCode":"404.003.01","errorMessage":"Resource not found"}`, WantKind: provider.ErrUnavailable}, true},
		{railtest.QueryCase{Name: "internal error", Status: 500, Body: `{"errorCode":"500.003.1001","errorMessage":"Internal Server Error"}`, WantKind: provider.ErrUnknownOutcome}, false},
		{railtest.QueryCase{Name: "bad gateway", Status: 502, WantKind: provider.ErrUnknownOutcome}, false},
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			a, key := submitAnswered(t, c.QueryCase, (*Adapter).PreparePayout, (*Adapter).SubmitPayout)
			if a.wasSent(key) == c.resend {
				t.Fatalf("sent mark %v, want %v", a.wasSent(key), !c.resend)
			}
		})
	}
}

func TestSTKAnswers(t *testing.T) {
	cases := []railtest.QueryCase{
		{Name: "wrong password", Status: 500, Body: `{"errorCode":"500.001.1001","errorMessage":"Wrong credentials"}`, WantKind: provider.ErrAuthentication},
		{Name: "payer busy", Status: 500, Body: `{"errorCode":"500.001.1001","errorMessage":"Unable to lock subscriber, a transaction is already in process for the current subscriber"}`, WantKind: provider.ErrUnavailable},
		{Name: "no merchant", Status: 500, Body: `{"errorCode":"500.001.1001","errorMessage":"Merchant does not exist"}`, WantKind: provider.ErrRejected},
		{Name: "bad amount", Status: 400, Body: `{"errorCode":"400.002.02","errorMessage":"Bad Request - Invalid Amount"}`, WantKind: provider.ErrRejected},
		{Name: "system busy", Status: 500, Body: `{"errorCode":"500.003.02","errorMessage":"System is busy"}`, WantKind: provider.ErrRateLimited},
		{Name: "server error", Status: 503, WantKind: provider.ErrUnknownOutcome},
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			submitAnswered(t, c, (*Adapter).PrepareCollection, (*Adapter).SubmitCollection)
		})
	}
}

func TestSTKQueryAnswers(t *testing.T) {
	cases := []railtest.QueryCase{
		{Name: "paid", Status: 200, Body: `{"ResponseCode":"0","ResultCode":"0","ResultDesc":"The service request is processed successfully."}`, Want: provider.StateCompleted},
		{Name: "paid, numbers", Status: 200, Body: `{"ResponseCode":0,"ResultCode":0}`, Want: provider.StateCompleted},
		{Name: "cancelled", Status: 200, Body: `{"ResponseCode":"0","ResultCode":"1032","ResultDesc":"Request cancelled by user"}`, Want: provider.StateFailed, WantMsg: "Request cancelled by user (1032)"},
		{Name: "cancelled, no words", Status: 200, Body: `{"ResponseCode":"0","ResultCode":"1032"}`, Want: provider.StateFailed, WantMsg: "the payer cancelled (1032)"},
		{Name: "unreachable", Status: 200, Body: `{"ResponseCode":"0","ResultCode":"1037","ResultDesc":"DS timeout user cannot be reached"}`, Want: provider.StateFailed, WantMsg: "1037"},
		{Name: "insufficient", Status: 200, Body: `{"ResponseCode":"0","ResultCode":"1"}`, Want: provider.StateFailed, WantMsg: "insufficient"},
		{Name: "still processing (4999)", Status: 200, Body: `{"ResponseCode":"0","ResultCode":"4999"}`, Want: provider.StatePending},
		{Name: "being processed", Status: 500, Body: `{"errorCode":"500.001.1001","errorMessage":"The transaction is being processed"}`, Want: provider.StatePending},
		{Name: "unknown checkout", Status: 400, Body: `{"errorCode":"400.002.02","errorMessage":"Bad Request - Invalid CheckoutRequestID"}`, WantKind: provider.ErrNotFound},
		{Name: "spike", Status: 429, WantKind: provider.ErrRateLimited},
		{Name: "down", Status: 503, WantKind: provider.ErrUnavailable},
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			a, _ := stub(t, c.Status, c.Body)
			in := pay
			in.ProviderRef = "ws_CO_1"
			p, _ := a.PrepareCollection(context.Background(), in)
			out, err := a.CollectionStatus(context.Background(), in, p)
			if c.Check(t, out, err) && out.ProviderRef != "ws_CO_1" {
				t.Fatalf("%+v %v", out, err)
			}
		})
	}
}

func TestPayoutStatusNeverFails(t *testing.T) {
	// A query moves nothing: whatever Daraja answers, PayoutStatus never
	// says the payout was rejected, nor that it is not found.
	for _, c := range []struct {
		status int
		body   string
	}{{400, `{"errorCode":"400.002.02"}`}, {404, ``}, {500, ``}, {200, `{"ResponseCode":"1"}`}} {
		a, _ := stub(t, c.status, c.body)
		p, _ := a.PreparePayout(context.Background(), pay)
		_, err := a.PayoutStatus(context.Background(), pay, p)
		if err == nil || errors.Is(err, provider.ErrRejected) || errors.Is(err, provider.ErrNotFound) || errors.Is(err, provider.ErrUnknownOutcome) {
			t.Errorf("%d %s: %v", c.status, c.body, err)
		}
	}
}

func TestResultCallbacks(t *testing.T) {
	a, _ := stub(t, 200, "")
	k := key("b2c", "600000", "pay_x")
	cb := func(event, body string) provider.Callback {
		return provider.Callback{Query: "e=" + event + "&k=" + k + "&t=" + a.token(event, k), Body: []byte(body)}
	}
	cases := []struct {
		name, event, body string
		want              provider.State
		wantRef, wantMsg  string
	}{
		{"b2c success", eventB2C, `{"Result":{"ResultType":0,"ResultCode":0,"ResultDesc":"ok","OriginatorConversationID":"` + k + `","TransactionID":"NLJ41HAY6Q"}}`, provider.StateCompleted, "NLJ41HAY6Q", ""},
		{"b2c insufficient", eventB2C, `{"Result":{"ResultCode":1,"ResultDesc":"The balance is insufficient for the transaction."}}`, provider.StateFailed, "", "insufficient"},
		{"b2c string code", eventB2C, `{"Result":{"ResultCode":"SFC_IC0003","ResultDesc":""}}`, provider.StateFailed, "", "does not exist"},
		{"b2c duplicate detected", eventB2C, `{"Result":{"ResultCode":15,"ResultDesc":"Duplicate Detected"}}`, provider.StateUnknown, "", "duplicate"},
		{"queue timeout", eventB2CTimeout, `{}`, provider.StateFailed, "", "queue"},
		{"status completed", eventTS, `{"Result":{"ResultCode":0,"ResultParameters":{"ResultParameter":[{"Key":"ReceiptNo","Value":"NLJ41HAY6Q"},{"Key":"TransactionStatus","Value":"Completed"}]}}}`, provider.StateCompleted, "NLJ41HAY6Q", ""},
		{"status single parameter", eventTS, `{"Result":{"ResultCode":"0","ResultParameters":{"ResultParameter":{"Key":"TransactionStatus","Value":"Completed"}}}}`, provider.StateCompleted, "", ""},
		{"status failed", eventTS, `{"Result":{"ResultCode":0,"ResultParameters":{"ResultParameter":[{"Key":"TransactionStatus","Value":"Failed"},{"Key":"ReasonType","Value":"Insufficient funds"}]}}}`, provider.StateFailed, "", "Insufficient funds"},
		{"status pending", eventTS, `{"Result":{"ResultCode":0,"ResultParameters":{"ResultParameter":[{"Key":"TransactionStatus","Value":"Pending"}]}}}`, provider.StateUnknown, "", "Pending"},
		{"status not found", eventTS, `{"Result":{"ResultCode":"R000002","ResultDesc":"not found"}}`, provider.StateUnknown, "", "R000002"},
		{"status timeout", eventTSTimeout, ``, provider.StateUnknown, "", "timed out"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n, err := a.HandleCallback(context.Background(), cb(c.event, c.body))
			if err != nil || !n.Authenticated || n.Key != k || n.Outcome.State != c.want || n.Outcome.ProviderRef != c.wantRef || !strings.Contains(n.Outcome.Message, c.wantMsg) {
				t.Fatalf("%+v %v", n, err)
			}
		})
	}
	if _, err := a.HandleCallback(context.Background(), cb(eventB2C, `{"Result":{"ResultCode":0,"OriginatorConversationID":"someone-else"}}`)); !errors.Is(err, ErrBadCallback) {
		t.Fatalf("a result for another id: %v", err)
	}
}

func TestFactory(t *testing.T) {
	dir := t.TempDir()
	cert := filepath.Join(dir, "cert.pem")
	if err := os.WriteFile(cert, publicKeyPEM(t), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"CK": "key", "CS": "secret", "PK": "passkey", "IP": "pw"}
	getenv := func(k string) string { return env[k] }
	secrets := `"secrets":{"consumerKey":{"env":"CK"},"consumerSecret":{"env":"CS"},"passkey":{"env":"PK"},"initiatorPassword":{"env":"IP"},"certificate":{"file":"` + cert + `"}}`
	settings := `"settings":{"baseUrl":"https://sandbox.safaricom.co.ke","callbackBaseUrl":"https://pay.example","shortCode":"174379","b2cShortCode":"600000","initiatorName":"testapi","callbackAllowedIps":["196.201.214.200","196.201.212.0/24"]}`
	cases := []railtest.FactoryCase{
		{Name: "both directions", Config: `{"providers":[{"name":"mpesa_ke","kind":"mpesa","methods":[{"code":"ke_mpesa","directions":["payouts","collections"]}],` + settings + `,` + secrets + `}]}`},
		{Name: "payouts without a certificate", Config: `{"providers":[{"name":"m","kind":"mpesa","methods":[{"code":"ke_mpesa","directions":["payouts"]}],` + settings + `,
			"secrets":{"consumerKey":{"env":"CK"},"consumerSecret":{"env":"CS"},"initiatorPassword":{"env":"IP"}}}]}`, WantErr: `"certificate" is not configured`},
		{Name: "collections without a passkey", Config: `{"providers":[{"name":"m","kind":"mpesa","methods":[{"code":"ke_mpesa","directions":["collections"]}],` + settings + `,
			"secrets":{"consumerKey":{"env":"CK"},"consumerSecret":{"env":"CS"}}}]}`, WantErr: `"passkey" is not configured`},
		{Name: "no callback base", Config: `{"providers":[{"name":"m","kind":"mpesa","methods":[{"code":"ke_mpesa","directions":["collections"]}],
			"settings":{"baseUrl":"https://sandbox.safaricom.co.ke","shortCode":"174379"},` + secrets + `}]}`, WantErr: "callbackBaseUrl is required"},
		{Name: "bad address", Config: `{"providers":[{"name":"m","kind":"mpesa","methods":[{"code":"ke_mpesa","directions":["collections"]}],
			"settings":{"baseUrl":"https://x","callbackBaseUrl":"https://pay.example","shortCode":"174379","callbackAllowedIps":["nope"]},` + secrets + `}]}`, WantErr: "callbackAllowedIps"},
	}
	railtest.RunFactoryCases(t, cases, Kind, Factory, getenv, func(t *testing.T, r *provider.Registry) {
		p, _, ok := r.Payouter("ke_mpesa")
		if !ok {
			t.Fatal("ke_mpesa payouts not served")
		}
		a := p.(*Adapter)
		if a.cfg.CallbackURL != "https://pay.example/v1/providers/mpesa_ke/callbacks" || a.cfg.PartyB != "174379" || a.cfg.CommandID != "BusinessPayment" ||
			len(a.cfg.CallbackNets) != 2 || a.cfg.Passkey.Reveal() != "passkey" {
			t.Fatalf("%+v", a.cfg)
		}
		if _, _, ok := r.Collector("ke_mpesa"); !ok {
			t.Fatal("collections not served")
		}
	})
}

func TestSecretsStayOut(t *testing.T) {
	a, _ := stub(t, 400, `{"errorCode":"400.002.02","errorMessage":"Bad Request - Invalid PartyB"}`)
	in := pay
	in.AccountNumber = "0708374149"
	_, err := a.PreparePayout(context.Background(), in)
	if err == nil || strings.Contains(err.Error(), "0708374149") || !strings.Contains(err.Error(), "4149") {
		t.Fatalf("err %v", err)
	}
	if s := a.cfg.InitiatorPassword.String(); strings.Contains(s, "pw") {
		t.Fatal(s)
	}
}
