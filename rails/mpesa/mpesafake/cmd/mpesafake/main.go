// Command mpesafake runs the fake Daraja as a standalone server on a
// loopback address, for demos and manual runs. It writes its certificate
// (which the adapter's "certificate" secret must name) to -cert-out and
// prints, as shell lines, what a client needs (also written to -env-out):
//
//	MPESA_URL=http://127.0.0.1:40125
//	MPESA_CONSUMER_KEY=…  MPESA_CONSUMER_SECRET=…
//	MPESA_SHORT_CODE=174379  MPESA_PASSKEY=…
//	MPESA_B2C_SHORT_CODE=600000  MPESA_INITIATOR_NAME=testapi  MPESA_INITIATOR_PASSWORD=…
//	MPESA_CERTIFICATE_FILE=/path/to/cert.pem
//
// Payers approve at once; POST /_fake/stk/{CheckoutRequestID}/approve or
// /cancel answers a held prompt, and GET /_fake/requests lists what was
// received. It stops on SIGINT or SIGTERM.
package main

import (
	"flag"
	"os"
	"path/filepath"
	"time"

	"payments/rails/internal/fakehttp"
	"payments/rails/mpesa/mpesafake"
)

func main() {
	var o mpesafake.Options
	certOut := flag.String("cert-out", "", "where to write the certificate (default: a file in a new temporary directory)")
	flag.StringVar(&o.ConsumerKey, "consumer-key", "", "consumer key (generated when empty)")
	flag.StringVar(&o.ConsumerSecret, "consumer-secret", "", "consumer secret (generated when empty)")
	flag.StringVar(&o.ShortCode, "short-code", "174379", "STK BusinessShortCode")
	flag.StringVar(&o.Passkey, "passkey", "", "Lipa na M-Pesa passkey (generated when empty)")
	flag.StringVar(&o.B2CShortCode, "b2c-short-code", "600000", "B2C PartyA")
	flag.StringVar(&o.InitiatorName, "initiator-name", "testapi", "B2C initiator")
	flag.StringVar(&o.InitiatorPassword, "initiator-password", "", "B2C initiator password (generated when empty)")
	flag.Int64Var(&o.B2CBalance, "b2c-balance", 1_000_000, "opening B2C balance in whole shillings")
	flag.DurationVar(&o.TokenLifetime, "token-lifetime", 3599*time.Second, "lifetime of access tokens")
	flag.DurationVar(&o.STKExpiry, "stk-expiry", time.Minute, "how long an STK prompt waits for its payer")
	fakehttp.Main("mpesafake", func(url string) (fakehttp.Standalone, error) {
		srv := mpesafake.New(o)
		srv.URL = url
		o = srv.Options()
		if *certOut == "" {
			dir, err := os.MkdirTemp("", "mpesafake")
			if err != nil {
				return fakehttp.Standalone{}, err
			}
			*certOut = filepath.Join(dir, "certificate.pem")
		}
		if err := os.WriteFile(*certOut, srv.CertificatePEM(), 0o644); err != nil {
			return fakehttp.Standalone{}, err
		}
		return fakehttp.Standalone{Handler: srv.Handler(), Sweep: srv.Sweep, Env: []string{
			"MPESA_URL=" + srv.URL,
			"MPESA_CONSUMER_KEY=" + o.ConsumerKey,
			"MPESA_CONSUMER_SECRET=" + o.ConsumerSecret,
			"MPESA_SHORT_CODE=" + o.ShortCode,
			"MPESA_PASSKEY=" + o.Passkey,
			"MPESA_B2C_SHORT_CODE=" + o.B2CShortCode,
			"MPESA_INITIATOR_NAME=" + o.InitiatorName,
			"MPESA_INITIATOR_PASSWORD=" + o.InitiatorPassword,
			"MPESA_CERTIFICATE_FILE=" + *certOut,
		}}, nil
	})
}
