package raft

import (
	"reflect"
	"testing"

	hraft "github.com/hashicorp/raft"
)

// entries returns log entries from..to, all of term.
func entries(from, to, term uint64) []*hraft.Log {
	var out []*hraft.Log
	for i := from; i <= to; i++ {
		out = append(out, &hraft.Log{Index: i, Term: term, Type: hraft.LogCommand})
	}
	return out
}

// TestAppendFromFirst: a follower whose log was compacted past the
// leader's next index for it (seen in the cluster simulator, seed 3: a
// follower's replies cut, then a snapshot on it) is sent an append it can
// check, instead of refusing every append down to index 1.
func TestAppendFromFirst(t *testing.T) {
	req := func(prev, to uint64) *hraft.AppendEntriesRequest {
		return &hraft.AppendEntriesRequest{Term: 7, PrevLogEntry: prev, PrevLogTerm: 6, Entries: entries(prev+1, to, 7), LeaderCommitIndex: to}
	}
	tests := []struct {
		name           string
		in             *hraft.AppendEntriesRequest
		first, applied uint64
		wantPrev       uint64 // the cut request's previous entry
		wantFrom       uint64 // its first entry (0: none)
		wantCommit     uint64
		unchanged      bool
	}{
		{name: "previous entry in the log", in: req(500, 600), first: 480, applied: 580, unchanged: true},
		{name: "heartbeat", in: &hraft.AppendEntriesRequest{Term: 7}, first: 480, applied: 580, unchanged: true},
		{name: "empty log", in: req(10, 20), first: 0, applied: 0, unchanged: true},
		{name: "starts below the first entry: cut at the last applied one", in: req(323, 579), first: 480, applied: 560, wantPrev: 560, wantFrom: 561, wantCommit: 579},
		{name: "all of it applied and in the log", in: req(323, 579), first: 480, applied: 600, wantPrev: 579, wantFrom: 0, wantCommit: 579},
		{name: "all of it compacted: term check only", in: req(100, 356), first: 480, applied: 580, wantPrev: 0, wantFrom: 0, wantCommit: 0},
		{name: "below the first entry, none applied", in: req(100, 356), first: 480, applied: 50, unchanged: true},
		{name: "entries past the applied ones below the first entry", in: req(100, 356), first: 480, applied: 300, unchanged: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := *tt.in
			got := appendFromFirst(tt.in, tt.first, tt.applied)
			if !reflect.DeepEqual(*tt.in, before) {
				t.Fatalf("the request was changed in place")
			}
			if tt.unchanged {
				if got != tt.in {
					t.Fatalf("got a rewritten request %+v, want the request itself", got)
				}
				return
			}
			if got == tt.in {
				t.Fatalf("got the request itself, want it cut")
			}
			if got.PrevLogEntry != tt.wantPrev || got.LeaderCommitIndex != tt.wantCommit || got.Term != tt.in.Term {
				t.Fatalf("prev %d commit %d term %d, want prev %d commit %d term %d", got.PrevLogEntry, got.LeaderCommitIndex, got.Term, tt.wantPrev, tt.wantCommit, tt.in.Term)
			}
			if tt.wantPrev != 0 && got.PrevLogTerm != 7 {
				t.Fatalf("prev term %d, want the entry's term 7", got.PrevLogTerm)
			}
			switch {
			case tt.wantFrom == 0 && len(got.Entries) != 0:
				t.Fatalf("%d entries, want none", len(got.Entries))
			case tt.wantFrom != 0 && (len(got.Entries) == 0 || got.Entries[0].Index != tt.wantFrom || got.Entries[len(got.Entries)-1].Index != tt.in.Entries[len(tt.in.Entries)-1].Index):
				t.Fatalf("entries %d.., want %d to the request's last", got.Entries[0].Index, tt.wantFrom)
			}
		})
	}
}
