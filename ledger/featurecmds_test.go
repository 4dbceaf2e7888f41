package ledger

// Conversions (package conversions) are a feature the kernel's own tests
// apply among its commands: a conversion moves two balances in one command
// (the pinned reader, the conservation property, Decided's kinds of
// resource, the clock). The kernel cannot import its features, so the
// features' external test file (features_test.go) fills these in.
var Conversions struct {
	// CreateQuote quotes from → to, fixed on the from side.
	CreateQuote func(at int64, id, org, from string, fromAmount Minor, to string, toAmount Minor, rate string) Command
	// ExecuteQuote executes a quote, under ref ("" for none).
	ExecuteQuote func(at int64, org, quote, conversion, ref string) Command
	// QuoteTimes are a quote's createdAt, updatedAt and expiresAt less its
	// lifetime, read at leader time at; ConversionTimes a conversion's
	// createdAt and completedAt.
	QuoteTimes      func(r *Reader, org, id string, at int64) ([]int64, bool)
	ConversionTimes func(r *Reader, org, id string) ([]int64, bool)
	// Refused is the resource a conversion's refusal names.
	Refused string
}

// Disputes (package disputes) hold and book a merchant's funds among the
// conservation property's flows (conservation_test.go); features_test.go
// fills these in too.
var Disputes struct {
	Open    func(at int64, id, org, collection string, amount Minor, messageID string) Command
	Resolve func(at int64, id, org string, won bool) Command
}

// Deposits (package deposits) are among the commands the clock test, the
// conservation property and the rails' fixture apply: a deposit makes a
// collection and credits a balance. features_test.go fills these in too.
var Deposits struct {
	CreateVirtualAccount func(at int64, id, org, currency, bank string) Command
	CreateCryptoAddress  func(at int64, id, org, currency, chain, address string) Command
	// Receive is a deposit into a virtual account.
	Receive func(at int64, id, collection, org, virtualAccount string, amount Minor, completed bool, ref, sourceRef string) Command
	// DepositAt is the time of an organization's deposit by reference;
	// VirtualAccountTimes and CryptoAddressTimes are a record's createdAt
	// and updatedAt.
	DepositAt           func(r *Reader, org, ref string) (int64, bool)
	VirtualAccountTimes func(r *Reader, org, id string) ([]int64, bool)
	CryptoAddressTimes  func(r *Reader, org, id string) ([]int64, bool)
}

// FXPayouts (package fxpayouts) are payouts the kernel settles and
// refunds, decides and charges, and the conservation property books;
// features_test.go fills this in too.
var FXPayouts struct {
	// Create is the cross-currency payout c describes.
	Create func(c TestFXPayout) Command
}

// TestFXPayout is a cross-currency payout's create, field for field
// (fxpayouts.Create).
type TestFXPayout struct {
	At                int64
	ID                string
	OrgID             string
	ExternalReference string
	Spec              PayoutSpec
	MethodType        MethodType
	Fee               Minor
	Reservation       uint64
	FromCurrency      string
	FromAmount        Minor
	ToAmount          Minor
	Rate              string
}

// Op is the create c describes.
func (c *TestFXPayout) Op() Command { return FXPayouts.Create(*c) }

// quoteCmd quotes org_a's GHS in USD at a fixed rate.
func quoteCmd(id string, at int64, from Minor, to Minor) Command {
	return Conversions.CreateQuote(at, id, "org_a", "GHS", from, "USD", to, "0.0634615384")
}

// executeQuote executes org's quote as conversion conv, under ref.
func executeQuote(at int64, org, quote, conv, ref string) Command {
	return Conversions.ExecuteQuote(at, org, quote, conv, ref)
}

// Charges (package keycontrols) charge a debit to a key's spend caps: the
// kernel's tests decide them (Decided takes the debit inside) and sample
// them among the wrappers; features_test.go fills this in too.
var Charges struct {
	// Charged is op charged to key for usd cents.
	Charged func(key string, usd Minor, op Command) Command
}

// Orders (package orders) are creates the kernel's tests decide, charge to
// a key's spend caps and shift in time, and whose payout legs the
// conservation property settles; features_test.go fills these in too.
var Orders struct {
	// Crypto, Bank and Mobile are org_a's orders of each origin: USDT on
	// Tron to a GHS wallet, a GHS bank transfer to a GHS wallet, a GHS
	// prompt (collection col) to USDC on Solana.
	Crypto func(id, ref string, at int64) Command
	Bank   func(id, ref string, at int64) Command
	Mobile func(id, ref, col string, at int64) Command
	// BankTransfer is org's GHS bank transfer in, paid out in to (at rate,
	// "" for GHS) to a Kenyan wallet, with a 1% fee.
	BankTransfer func(at int64, id, org, ref string, amount Minor, to string, toAmount Minor, rate string) Command
	// Deposit is a confirmed deposit of amount into an order, landing as
	// collection col.
	Deposit func(at int64, org, order, col string, amount Minor) Command
	// Get reads an organization's order; Of is the one a result carries.
	Get func(r *Reader, org, id string) (TestOrder, bool)
	Of  func(res Result) TestOrder
	// CreatedFrom is how many of org's orders were created at from or later.
	CreatedFrom func(r *Reader, org string, from int64) int
}

// TestOrder is what the kernel's tests read of an order.
type TestOrder struct {
	ID, OrgID, PayoutID, ToCurrency, Rate string
	FromAmount, ToAmount, Fee             Minor
	CreatedAt, UpdatedAt                  int64
}

const hour = 3600 * 1000

func cryptoOrder(id, ref string, at int64) Command      { return Orders.Crypto(id, ref, at) }
func bankOrder(id, ref string, at int64) Command        { return Orders.Bank(id, ref, at) }
func mobileOrder(id, ref, col string, at int64) Command { return Orders.Mobile(id, ref, col, at) }
