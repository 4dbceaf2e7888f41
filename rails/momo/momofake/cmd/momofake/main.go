// Command momofake runs the fake MoMo Open API as a standalone server on a
// loopback address, for demos and manual runs. It prints, as shell lines,
// its URL and the credentials a client needs (also written to -env-out):
//
//	MOMO_URL=http://127.0.0.1:40123
//	MOMO_TARGET_ENVIRONMENT=sandbox
//	MOMO_CURRENCY=EUR
//	MOMO_COLLECTION_API_USER=… (and _API_KEY, _SUBSCRIPTION_KEY)
//	MOMO_DISBURSEMENT_API_USER=… (and _API_KEY, _SUBSCRIPTION_KEY)
//
// Payers approve at once unless their number says otherwise (MTN's sandbox
// numbers 46733123450 to 46733123454); POST /_fake/requesttopay/{ref}/approve
// or /decline decides a held request, and GET /_fake/requests lists what was
// received. It stops on SIGINT or SIGTERM.
package main

import (
	"flag"
	"net/http"
	"time"

	"payments/rails/internal/fakehttp"
	"payments/rails/momo/momofake"
)

func main() {
	var o momofake.Options
	flag.StringVar(&o.TargetEnvironment, "environment", "sandbox", "X-Target-Environment to accept")
	flag.StringVar(&o.Currency, "currency", "EUR", "the environment's currency")
	flag.IntVar(&o.Exponent, "exponent", 2, "the currency's decimal places")
	flag.DurationVar(&o.TokenLifetime, "token-lifetime", time.Hour, "lifetime of access tokens")
	flag.Int64Var(&o.DisbursementBalanceMinor, "disbursement-balance", 10_000_000, "opening disbursement balance in minor units")
	flag.StringVar(&o.CallbackMethod, "callback-method", http.MethodPut, "PUT (sandbox) or POST (production)")
	flag.DurationVar(&o.RequestToPayExpiry, "expiry", 5*time.Minute, "how long a request to pay waits for its payer")
	for _, c := range []struct {
		product string
		creds   *momofake.Credentials
	}{{"collection", &o.Collection}, {"disbursement", &o.Disbursement}} {
		flag.StringVar(&c.creds.APIUser, c.product+"-api-user", "", c.product+" API user (generated when empty)")
		flag.StringVar(&c.creds.APIKey, c.product+"-api-key", "", c.product+" API key (generated when empty)")
		flag.StringVar(&c.creds.SubscriptionKey, c.product+"-subscription-key", "", c.product+" subscription key (generated when empty)")
	}
	fakehttp.Main("momofake", func(url string) (fakehttp.Standalone, error) {
		srv := momofake.New(o)
		srv.URL = url
		o = srv.Options()
		return fakehttp.Standalone{Handler: srv.Handler(), Sweep: srv.Sweep, Env: []string{
			"MOMO_URL=" + srv.URL,
			"MOMO_TARGET_ENVIRONMENT=" + o.TargetEnvironment,
			"MOMO_CURRENCY=" + o.Currency,
			"MOMO_COLLECTION_API_USER=" + o.Collection.APIUser,
			"MOMO_COLLECTION_API_KEY=" + o.Collection.APIKey,
			"MOMO_COLLECTION_SUBSCRIPTION_KEY=" + o.Collection.SubscriptionKey,
			"MOMO_DISBURSEMENT_API_USER=" + o.Disbursement.APIUser,
			"MOMO_DISBURSEMENT_API_KEY=" + o.Disbursement.APIKey,
			"MOMO_DISBURSEMENT_SUBSCRIPTION_KEY=" + o.Disbursement.SubscriptionKey,
		}}, nil
	})
}
