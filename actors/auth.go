package actors

import (
	"context"
	"errors"

	"payments/ledger"
)

// ErrCatchingUp: this node's state may be behind the log (it restarted
// empty, was restored, paused, or lags), and it could not catch up in time
// to give a definite answer; nothing was done, the client retries.
var ErrCatchingUp = errors.New("actors: this node is catching up")

// CatchUp waits until this node's state includes every entry committed
// before the call (the leader's read index, applied here), or returns why
// it cannot. The front end implements it by asking the leader; the
// simulator, by asking the leader node in-process.
type CatchUp func(ctx context.Context) error

// KeyBySecret finds the API key a secret names. A key this node's state
// holds is found at once (a revoked one is final: revocation is never
// undone). One it does not hold may have been created a moment ago, or this
// node may be behind: "not found" is a definite answer only once catchUp
// brought the state up to the log as it was when the call began. When it
// cannot, the answer is ErrCatchingUp, never "not found".
func (s *System) KeyBySecret(ctx context.Context, secret []byte, catchUp CatchUp) (key ledger.APIKey, found bool, err error) {
	hash := KeyDigest(secret)
	if key, found = s.Reader().APIKeyByHash(hash); found {
		return key, true, nil
	}
	if catchUp == nil {
		return key, false, nil
	}
	if err := catchUp(ctx); err != nil {
		return key, false, ErrCatchingUp
	}
	key, found = s.Reader().APIKeyByHash(hash)
	return key, found, nil
}
