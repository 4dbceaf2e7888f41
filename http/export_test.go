package http

import "payments/http/requestrecord"

// RenderRequestRecord lets the external tests read the request log's
// stored records as GET /v1/requests shows them.
var RenderRequestRecord = requestrecord.Render
