package ledger

// The first byte of every key in the state store: one per kind of record,
// and a few for what is not a kind. Frozen: doc.go draws the layout, and a
// store written with one assignment must be read with the same. 0x00 is the
// store's own (package wal keeps its applied index there).
const (
	tagCounter   byte = '#' // '#' name → uvarint: the journal's and the event log's last sequence numbers
	tagJournal   byte = 'J' // 'J' seq → a transaction: the entries booked together, from entry seq
	tagStatement byte = 'S' // 'S' str(account) seq → "": the transactions on a merchant account
	tagEvent     byte = 'E' // 'E' seq → an event
	tagEventList byte = 'e' // 'e' 'o' str(org) seq → "", 'e' 'r' str(org) str(resource) seq → ""

	tagAccount          byte = 'a'
	tagAPIKey           byte = 'b'
	tagCollection       byte = 'c'
	TagDispute          byte = 'd' // package disputes
	tagFunding          byte = 'f'
	tagOrganization     byte = 'g'
	TagFile             byte = 'i' // package disputes: uploaded files' metadata
	TagFileSigningKey   byte = 'j' // package disputes: the key that signs download URLs
	tagClock            byte = 'k'
	TagPaymentLink      byte = 'l' // package paymentlinks
	TagPaymentPage      byte = 'm' // package paymentlinks
	TagCheckoutSession  byte = 'n' // package paymentlinks
	tagPayout           byte = 'p'
	TagQuote            byte = 'q' // package conversions: FX quotes
	TagRecipient        byte = 'r' // package recipients
	TagConversion       byte = 's' // package conversions
	TagCryptoAddress    byte = 't' // package deposits
	TagCheckoutDeposit  byte = 'u' // package paymentlinks
	TagVirtualAccount   byte = 'v' // package deposits
	TagWebhookEndpoint  byte = 'w' // package webhooks
	TagWebhookDelivery  byte = 'x' // package webhooks
	TagDeposit          byte = 'y' // package deposits
	TagOrder            byte = 'z' // package orders
	TagOrderDeposit     byte = 'o' // package orders: an order deposit made under a reference
	TagSpendCharge      byte = 'C' // package keycontrols: a key's charges not yet settled
	TagIDKey            byte = 'K' // package publicids: the deployment's key for public entry and event ids
	TagMember           byte = 'M' // package team: dashboard team members
	TagInvitation       byte = 'I' // package team: invitations, setup and password reset links
	TagDashboardSession byte = 'D' // package team: dashboard sessions
	tagRefusal          byte = 'F' // decided.go: creates refused under a reference
	TagInstruction      byte = 'P' // package instructions: payouts' and collections' instructions to providers
	TagProvider         byte = 'Q' // package deposits: a provider instance's deposit feed and indexes
	TagFloatFunding     byte = 'G' // package instructions: fundings of providers' floats
)

// Names of lookup and filter indexes, one byte each, unique within a kind.
const (
	indexReference byte = 'r' // the organization's reference: refKey(org, ref)
	indexStatus    byte = 's' // a status that no longer changes
	indexParent    byte = 'p' // the record this one belongs to (a link, an endpoint…)
	indexRecipient byte = 'R'
	indexSource    byte = 'S' // a collection's virtual account or crypto address
	indexLeg       byte = 'l' // an order's collection or payout
	indexLeg2      byte = 'L'
	indexEvent     byte = 'e'
)
