package core

import (
	"encoding/json"
	"log/slog"
	"net/netip"
	"strconv"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"payments/http/redact"
	"payments/http/requestrecord"
	"payments/wal/requestlog"
)

// An authenticated route for the tests that need one, the features' own
// being registered by their packages, which this one does not import.
func init() {
	RegisterRoutes(Endpoint{Method: fasthttp.MethodGet, Path: "/v1/organization", H: func(*Call) {}})
}

// The request path's share of the request log is a copy into a pooled
// buffer and a channel send: at most two allocations more per request than
// without the log (the id's spliced node tag is one).
func TestRequestLogAllocsPerRequest(t *testing.T) {
	var req fasthttp.Request
	req.Header.SetMethod(fasthttp.MethodGet)
	req.SetRequestURI("/v1/organization?limit=5&email=a%40b.co")
	req.Header.Set(fasthttp.HeaderAuthorization, "Bearer nope") // refused before any lookup: no actors needed
	run := func(h fasthttp.RequestHandler) float64 {
		var ctx fasthttp.RequestCtx
		return testing.AllocsPerRun(200, func() {
			req.CopyTo(&ctx.Request)
			ctx.Response.Reset()
			h(&ctx)
			if ctx.Response.StatusCode() != fasthttp.StatusUnauthorized {
				t.Fatalf("status %d", ctx.Response.StatusCode())
			}
		})
	}
	without := run(New(Config{}).Handler())

	s := New(Config{})
	// A recorder without its goroutine: the test takes each record off the
	// queue and returns it to the pool, as the recorder would.
	s.recorder = &requestRecorder{queue: make(chan *requestState, 1), clientIP: func(ctx *fasthttp.RequestCtx, st *requestState) {
		st.clientIP, _ = s.clientAddr(ctx)
	}}
	logged := s.recordRequests(s.router.Handler)
	with := run(func(ctx *fasthttp.RequestCtx) {
		s.recorder.failedAuthInSecond.Store(0) // every run within the per-second bound
		logged(ctx)
		select {
		case st := <-s.recorder.queue:
			releaseRequestState(st)
		default:
			t.Fatal("the failed authentication was not queued")
		}
	})
	t.Logf("allocations per request: %.1f without the request log, %.1f with it", without, with)
	if with > without+2 {
		t.Fatalf("the request log costs %.1f allocations per request", with-without)
	}
}

// BenchmarkRecordRequest is the recorder's work for one keyed payout
// request: redaction, encoding and the write to a real request log,
// committed in batches as the recorder does. make bench-micro runs it.
func BenchmarkRecordRequest(b *testing.B) {
	store, err := requestlog.Open(b.TempDir(), requestlog.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	r := &requestRecorder{store: store, red: redact.New(), logger: slog.New(slog.DiscardHandler)}
	body := []byte(`{"to":{"code":"gh_mtn","currency":"GHS","accountNumber":"233241234567","amount":"150.00"},"externalReference":"inv-1042","narration":"March invoice"}`)
	ct := []byte("application/json")
	path := []byte("/v1/payouts")
	batch := make([]*requestState, 0, requestLogBatchMax)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		st := requestStatePool.Get().(*requestState)
		st.id, st.seq = "req_"+strconv.Itoa(i), store.NextSeq()
		st.start, st.status, st.method = time.Now(), 201, fasthttp.MethodPost
		st.keyID, st.org = "key_0123456789abcdefghij", "org_0123456789abcdefghij"
		st.buf = append(append(append(st.buf[:0], path...), ct...), body...)
		st.pathEnd, st.queryEnd = len(path), len(path)
		st.typeEnd = st.queryEnd + len(ct)
		st.bodyEnd, st.errEnd = len(st.buf), len(st.buf)
		st.bodyBytes, st.bodyKept = len(body), true
		batch = append(batch, st)
		if len(batch) == cap(batch) {
			r.write(batch)
			batch = batch[:0]
		}
	}
	r.write(batch)
}

// Failed authentications are recorded up to a bound per second: a flood of
// them cannot crowd organizations' records out.
func TestFailedAuthRecordsBoundPerSecond(t *testing.T) {
	var r requestRecorder
	t0 := time.Unix(1_800_000_000, 0)
	taken := 0
	for i := range 2 * failedAuthRecordsPerSecond {
		if r.takeFailedAuth(t0.Add(time.Duration(i) * time.Millisecond)) {
			taken++
		}
	}
	if taken != failedAuthRecordsPerSecond {
		t.Fatalf("%d failed authentications recorded in one second, want %d", taken, failedAuthRecordsPerSecond)
	}
	if !r.takeFailedAuth(t0.Add(time.Second)) {
		t.Fatal("the next second's budget is not fresh")
	}
}

// What encode writes, requestrecord.Decode reads back whole, and the
// rendering shows the redacted body and the actor.
func TestRequestRecordRoundTrip(t *testing.T) {
	r := &requestRecorder{red: redact.New()}
	body := []byte(`{"to":{"accountNumber":"233241234567"},"externalReference":"r-1"}`)
	st := &requestState{id: "req_0000000abc0000000000xyz", start: time.Unix(1_800_000_000, 123_000), duration: 1500 * time.Microsecond,
		status: 422, method: fasthttp.MethodPost, keyID: "key_1", org: "org_1", bodyBytes: len(body), bodyKept: true,
		clientIP: netipMustParse(t, "203.0.113.7")}
	path, query, ct := "/v1/payouts", "email=a%40b.co", "application/json"
	errBody := `{"error":"insufficient_funds","message":"x"}`
	st.buf = append(append(append(append([]byte(path), query...), ct...), body...), errBody...)
	st.pathEnd, st.queryEnd = len(path), len(path)+len(query)
	st.typeEnd = st.queryEnd + len(ct)
	st.bodyEnd = st.typeEnd + len(body)
	st.errEnd = len(st.buf)
	rec, err := requestrecord.Decode(r.encode(nil, st))
	if err != nil {
		t.Fatal(err)
	}
	if rec.ID != st.id || !rec.Start.Equal(st.start) || rec.Status != 422 || rec.DurationMicros != 1500 || rec.Method != "POST" ||
		rec.Path != path || rec.Query != "email=[redacted]" || rec.Code != "insufficient_funds" || rec.ClientIP != "203.0.113.7" ||
		rec.KeyID != "key_1" || rec.Actor != requestrecord.ActorAPIKey || rec.ContentType != ct || rec.BodyBytes != len(body) ||
		string(rec.Body) != `{"to":{"accountNumber":"[redacted]"},"externalReference":"r-1"}` {
		t.Fatalf("decoded %+v", rec)
	}
	out, err := requestrecord.Render(r.encode(nil, st), "org_1")
	if err != nil {
		t.Fatal(err)
	}
	var shown map[string]any
	if err := json.Unmarshal(out, &shown); err != nil {
		t.Fatal(err)
	}
	if shown["organizationId"] != "org_1" || shown["actor"].(map[string]any)["type"] != "api_key" || shown["createdAt"] == nil {
		t.Fatalf("rendered %s", out)
	}
	if _, err := requestrecord.Decode(r.encode(nil, st)[:20]); err == nil {
		t.Fatal("a cut record decodes")
	}
}

func netipMustParse(t *testing.T, s string) netip.Addr {
	t.Helper()
	a, err := netip.ParseAddr(s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// FuzzDecodeRequestRecord: a damaged stored record is refused, never a
// panic, and what decodes also renders.
func FuzzDecodeRequestRecord(f *testing.F) {
	r := &requestRecorder{red: redact.New()}
	st := &requestState{id: "req_1", start: time.Unix(1_800_000_000, 0), status: 201, method: "POST", keyID: "key_1"}
	st.buf = []byte("/v1/payouts")
	st.pathEnd, st.queryEnd, st.typeEnd, st.bodyEnd, st.errEnd = 11, 11, 11, 11, 11
	f.Add(r.encode(nil, st))
	f.Add([]byte{requestrecord.Format})
	f.Fuzz(func(t *testing.T, v []byte) {
		if _, err := requestrecord.Decode(v); err != nil {
			return
		}
		if _, err := requestrecord.Render(v, "org_1"); err != nil {
			t.Fatalf("%x decodes but does not render: %v", v, err)
		}
	})
}
