// Package requestrecord is the stored form of a request log record: the
// layout the recorder (package core) appends on its goroutine without
// reflection, and its reading back, as the JSON GET /v1/requests shows
// (package requests) and as the list's filters read it. It imports
// nothing of the front end, so that the writer and the readers share one
// definition of the layout.
package requestrecord
