package mpesa

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"payments/rails/internal/outbound"
	"payments/rails/provider"
)

// ErrFractionalAmount is the cause of the ErrRejected that Prepare and
// Submit return for an amount with cents: M-Pesa moves whole shillings.
var ErrFractionalAmount = errors.New("mpesa: M-Pesa moves whole shillings only")

// currency is the only currency M-Pesa (Kenya) moves.
const currency = "KES"

// wholeShillings checks an instruction and returns its amount in whole
// shillings.
func wholeShillings(in provider.Instruction) (int64, error) {
	switch {
	case in.ID == "":
		return 0, provider.Errorf(provider.ErrRejected, "mpesa: the instruction has no id")
	case !strings.EqualFold(in.Currency, currency):
		return 0, provider.Errorf(provider.ErrRejected, "mpesa: M-Pesa moves %s, not %s", currency, in.Currency)
	case in.AmountMinor <= 0:
		return 0, provider.Errorf(provider.ErrRejected, "mpesa: the amount must be positive")
	case in.Exponent < 0 || in.Exponent > 6:
		return 0, provider.Errorf(provider.ErrRejected, "mpesa: %d decimal places", in.Exponent)
	case !validMSISDN(in.AccountNumber):
		return 0, provider.Errorf(provider.ErrRejected, "mpesa: %s is not a Kenyan phone number (254…, 12 digits)", outbound.Mask(in.AccountNumber))
	}
	unit := int64(1)
	for range in.Exponent {
		unit *= 10
	}
	if in.AmountMinor%unit != 0 {
		return 0, &provider.Error{Kind: provider.ErrRejected, Err: ErrFractionalAmount,
			Message: fmt.Sprintf("%d.%0*d %s has cents", in.AmountMinor/unit, in.Exponent, in.AmountMinor%unit, currency)}
	}
	return in.AmountMinor / unit, nil
}

func validMSISDN(s string) bool {
	return len(s) == 12 && strings.HasPrefix(s, "254") && outbound.Digits(s)
}

// key derives an instruction's key from its id: the same id always gets
// the same key, so a caller that prepared twice still has one key.
func key(kind, shortCode, id string) string {
	b := sha256.Sum256([]byte("mpesa/" + kind + "/" + shortCode + "/" + id))
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:16])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// Callback events, as the adapter names them in its callback URLs.
const (
	eventSTK        = "stk"        // an STK push's result
	eventB2C        = "b2c"        // a B2C payment's result
	eventB2CTimeout = "b2ctimeout" // a B2C payment timed out in Daraja's queue
	eventTS         = "ts"         // a transaction status query's result
	eventTSTimeout  = "tstimeout"  // a transaction status query timed out
)

// callbackURL is where Daraja is told to send event for key: the
// instance's route with the event, the key and a token (an HMAC of both
// under the callback secret) in the query. Only Daraja is given this URL,
// so a callback that presents the token came from Daraja or from someone
// who read the URL from our side.
func (a *Adapter) callbackURL(event, key string) string {
	return a.cfg.CallbackURL + "?" + url.Values{"e": {event}, "k": {key}, "t": {a.token(event, key)}}.Encode()
}

func (a *Adapter) token(event, key string) string {
	m := hmac.New(sha256.New, a.callbackKey)
	m.Write([]byte(event + "\x00" + key))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// text keeps what Daraja takes in free text (it refuses some punctuation)
// and cuts it to n bytes.
func text(s, fallback string, n int) string {
	out := outbound.PlainText(s, " .,-_")
	if len(out) < 2 {
		out = fallback
	}
	return strings.TrimSpace(outbound.Cut(out, n))
}

// nothingDone reports whether err says the request was not acted upon, so
// it may be sent again.
func nothingDone(err error) bool {
	return errors.Is(err, provider.ErrUnavailable) || errors.Is(err, provider.ErrRateLimited) ||
		errors.Is(err, provider.ErrAuthentication) || errors.Is(err, provider.ErrRejected)
}
