// Package rails is the outside world: the catalogue of payment methods (an
// embedded data file), the address rules of each chain (ValidateAddress),
// account holder name resolution (SandboxNames, driven by
// ValidationTrigger), and the rails that carry payouts and collections. For
// now that is the sandbox simulator, deterministic from the amount (see
// PayoutTrigger and CollectionTrigger), and NoProvider for a production
// deployment without provider adapters.
//
// Rails implement actors.Rail; the rail driver in package actors calls them
// from worker goroutines on the leader. They are never called from inside
// ledger.Apply.
//
// The provider adapters that move real money (rails/evm, rails/momo,
// rails/mpesa, behind the seam of rails/provider) reach the actors through
// Providers (providers.go), which implements actors.Providers over a
// provider.Registry: it turns payouts and collections into the adapters'
// instructions, and their outcomes and typed errors into the actors'. The
// sandbox simulator is never among them: a registry is built only from a
// production deployment's providers file.
package rails
