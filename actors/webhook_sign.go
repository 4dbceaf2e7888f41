package actors

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"strings"
)

// Webhook signatures follow Standard Webhooks: the signed content is
// "{webhook-id}.{webhook-timestamp}.{body}", the key is the base64-decoded
// part of the secret after "whsec_", and the header is "v1,<base64 HMAC>",
// one per secret, separated by spaces.

// webhookSecretBytes is the size of a signing key.
const webhookSecretBytes = 32

// NewWebhookSecret draws a signing secret: "whsec_" and the base64 of 32
// random bytes. The leader draws it and carries it in the command.
func NewWebhookSecret() string {
	var b [webhookSecretBytes]byte
	rand.Read(b[:])
	return "whsec_" + base64.StdEncoding.EncodeToString(b[:])
}

// SignWebhook returns the webhook-signature header for a delivery signed
// with each of secrets. A secret that does not decode signs nothing.
func SignWebhook(secrets []string, id string, unixSeconds int64, body []byte) string {
	var sigs []string
	ts := strconv.FormatInt(unixSeconds, 10)
	for _, s := range secrets {
		key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, "whsec_"))
		if err != nil {
			continue
		}
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte(id))
		mac.Write([]byte{'.'})
		mac.Write([]byte(ts))
		mac.Write([]byte{'.'})
		mac.Write(body)
		sigs = append(sigs, "v1,"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	}
	return strings.Join(sigs, " ")
}
