package ledger

import "fmt"

// Kinds and record types added after the first nine commands plug in through
// this file, so that each feature keeps its rules and its codec in its own
// file (a feature in a sub-package plugs in through feature.go):
//
//   - a command type implements Applier and registers its decoder with
//     RegisterCommand from an init function (registerFields, where its
//     fields method is its whole codec);
//   - a kind of record is a kind[V] (store.go) with a tag of its own
//     (layout.go), and a store of it in State (addStore).
//
// Kind numbers are allocated in ranges, one per feature, and frozen like the
// first nine:
//
//	10–19  the sandbox clock (10, 11), cross-currency payouts (12: package
//	       fxpayouts), payouts that name their bank (13, 14: routing.go)
//	20–49  money movement: rates, quotes, conversions (package
//	       conversions; 22: an execution under an externalReference),
//	       virtual accounts, crypto addresses and deposits (25–29,
//	       package deposits), orders (package orders; 34: a deposit
//	       under an externalReference), payment links, checkout
//	       sessions (package paymentlinks)
//	50–69  recipients (package recipients), files and disputes (package
//	       disputes)
//	70–89  webhooks (package webhooks): endpoints, secrets, deliveries
//	90–99  key controls: spend caps and IP allowlists (package
//	       keycontrols)
//	100–109 dashboard team members: invitations, members, sessions
//	       (package team)
//	110–119 final answers by reference (decided.go)
//	120–129 the deployment's id key (120, package publicids) and the
//	       production rails: provider instructions (121–124, package
//	       instructions), deposit feeds and deposit indexes (125, 126,
//	       package deposits), float fundings (127, package instructions)

// Applier is a command that carries its own rule.
type Applier interface {
	Command
	Apply(s *State) Result
}

// commandDecoders are the decoders of the command kinds, the built-in
// ones' included (command.go), by kind; nil for a kind not registered.
var commandDecoders [256]func(*Decoder) Command

// RegisterCommand makes a command kind decodable. It is called from init
// functions; a kind registered twice is a programming error.
func RegisterCommand(k Kind, decode func(*Decoder) Command) {
	if k <= KindSettleCollection {
		panic(fmt.Sprintf("ledger: kind %d belongs to the built-in commands", k))
	}
	registerCommand(k, decode)
}

func registerCommand(k Kind, decode func(*Decoder) Command) {
	if commandDecoders[k] != nil {
		panic(fmt.Sprintf("ledger: kind %d registered twice", k))
	}
	commandDecoders[k] = decode
}

// registeredKinds lists the registered kinds in order, the built-in ones
// first, for tests.
func registeredKinds() []Kind {
	var ks []Kind
	for k, decode := range commandDecoders {
		if decode != nil {
			ks = append(ks, Kind(k))
		}
	}
	return ks
}
