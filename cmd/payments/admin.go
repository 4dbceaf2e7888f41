package main

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	nethttp "net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"payments/actors"
	api "payments/http"
	"payments/ledger"
	"payments/raft"
)

// The operators' admin API: cluster membership and leadership, on its own
// listener (loopback by default), authenticated by a token that is no
// merchant's key. `payments cluster` is its client.
//
//	GET    /v1/node                          this node's Raft status
//	GET    /v1/cluster                       the members, as this node sees them
//	GET    /v1/backup                        a consistent backup of the applied state and its files (format in backup.go)
//	POST   /v1/cluster/members               {"id","raftAddr","httpAddr"}: add a non-voter (leader only)
//	POST   /v1/cluster/members/{id}/promote  make a caught-up non-voter a voter (leader only)
//	DELETE /v1/cluster/members/{id}          remove a member (leader only)
//	POST   /v1/cluster/transfer-leader       {"id": "n2"} or {} for any (leader only)
//	GET    /v1/requests/unattributed         this node's request records of no organization (failed
//	                                         authentications with unknown keys): ?limit, status, cursor
//	GET    /v1/treasury/floats               a provider's float in a currency: ?provider, currency
//	POST   /v1/treasury/fundings             {"provider","currency","amount","reference"}: money moved to a provider

// adminError is the admin API's error body.
type adminError struct {
	Code    string `json:"error"`
	Message string `json:"message"`
	Leader  string `json:"leader,omitempty"`
}

// readAdminToken reads the operator token: the file's content, trimmed. An
// empty or short token is refused: it would be guessable.
func readAdminToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("--admin-token-file: %w", err)
	}
	token := strings.TrimSpace(string(b))
	if len(token) < 16 {
		return "", fmt.Errorf("--admin-token-file: the token in %s is shorter than 16 characters", path)
	}
	return token, nil
}

// adminHandler serves the admin API for node, to requests bearing token;
// openBlob reads an uploaded file's bytes for a backup; unattributed reads
// a page of the node's request records of no organization
// (api.Server.UnattributedRequests).
func adminHandler(node *raft.Node, sys *actors.System, openBlob func(digest string) (io.ReadCloser, int64, error),
	unattributed func(url.Values) ([]byte, error), token string, logger *slog.Logger) nethttp.Handler {
	mux := nethttp.NewServeMux()
	reply := func(w nethttp.ResponseWriter, status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(v)
	}
	fail := func(w nethttp.ResponseWriter, err error) {
		leader, _ := node.Leader()
		switch {
		case errors.Is(err, raft.ErrNotLeading):
			reply(w, nethttp.StatusConflict, adminError{"not_leader", "This node is not the leader; ask the leader", leader})
		case errors.Is(err, raft.ErrNotMember):
			reply(w, nethttp.StatusNotFound, adminError{"not_a_member", err.Error(), ""})
		case errors.Is(err, raft.ErrAlreadyMember):
			reply(w, nethttp.StatusConflict, adminError{"already_a_member", err.Error(), ""})
		default:
			reply(w, nethttp.StatusServiceUnavailable, adminError{"unavailable", err.Error(), leader})
		}
	}
	treasuryRoutes(mux, sys, reply, fail) // providers.go
	mux.HandleFunc("GET /v1/node", func(w nethttp.ResponseWriter, r *nethttp.Request) {
		reply(w, 200, node.Status())
	})
	mux.HandleFunc("GET /v1/backup", func(w nethttp.ResponseWriter, r *nethttp.Request) {
		view, err := node.OpenBackupView()
		if err != nil {
			fail(w, err)
			return
		}
		defer view.Close()
		w.Header().Set("Content-Type", "application/octet-stream")
		// The status goes out before the first byte of the backup, so
		// that a failure anywhere in it reaches the client the same way:
		// an incomplete body, never a connection cut before any answer.
		w.WriteHeader(200)
		nethttp.NewResponseController(w).Flush()
		files, size, err := writeBackup(w, view, openBlob)
		if err != nil {
			// The status is sent: the connection is cut, so that the
			// client finds the backup incomplete.
			logger.Error("backup failed", "err", err)
			panic(nethttp.ErrAbortHandler)
		}
		logger.Info("backup taken", "applied_index", view.Applied(), "files", files, "bytes", size)
	})
	mux.HandleFunc("GET /v1/requests/unattributed", func(w nethttp.ResponseWriter, r *nethttp.Request) {
		page, err := unattributed(r.URL.Query())
		var invalid *ledger.Error
		switch {
		case errors.As(err, &invalid):
			reply(w, nethttp.StatusBadRequest, adminError{"validation_error", invalid.Message, ""})
		case errors.Is(err, api.ErrRequestLogOff):
			reply(w, nethttp.StatusServiceUnavailable, adminError{"unavailable", err.Error(), ""})
		case err != nil:
			logger.Error("request log read", "err", err)
			reply(w, nethttp.StatusInternalServerError, adminError{"internal_error", "the request log could not be read", ""})
		default:
			w.Header().Set("Content-Type", "application/json")
			w.Write(page)
		}
	})
	mux.HandleFunc("GET /v1/cluster", func(w nethttp.ResponseWriter, r *nethttp.Request) {
		members, err := node.Members()
		if err != nil {
			fail(w, err)
			return
		}
		leader, _ := node.Leader()
		reply(w, 200, map[string]any{"leader": leader, "members": members})
	})
	mux.HandleFunc("POST /v1/cluster/members", func(w nethttp.ResponseWriter, r *nethttp.Request) {
		var body struct {
			ID       string `json:"id"`
			RaftAddr string `json:"raftAddr"`
			HTTPAddr string `json:"httpAddr"`
		}
		if err := json.NewDecoder(nethttp.MaxBytesReader(w, r.Body, 4096)).Decode(&body); err != nil || body.ID == "" || body.RaftAddr == "" || body.HTTPAddr == "" {
			reply(w, 400, adminError{"validation_error", "the body must be {\"id\", \"raftAddr\", \"httpAddr\"}", ""})
			return
		}
		commit, err := node.AddNonvoter(body.ID, body.RaftAddr, body.HTTPAddr)
		if err != nil {
			fail(w, err)
			return
		}
		logger.Info("added a non-voting member", "member", body.ID, "raft", body.RaftAddr)
		reply(w, 200, map[string]any{"added": body.ID, "voter": false, "commitIndex": commit})
	})
	// memberChange serves a change to the member the path names: made,
	// logged as logged, and answered with answer's body.
	memberChange := func(change func(id string) error, logged string, answer func(id string) any) nethttp.HandlerFunc {
		return func(w nethttp.ResponseWriter, r *nethttp.Request) {
			id := r.PathValue("id")
			if err := change(id); err != nil {
				fail(w, err)
				return
			}
			logger.Info(logged, "member", id)
			reply(w, 200, answer(id))
		}
	}
	mux.HandleFunc("POST /v1/cluster/members/{id}/promote", memberChange(node.Promote, "promoted a member to voter",
		func(id string) any { return map[string]any{"promoted": id, "voter": true} }))
	mux.HandleFunc("DELETE /v1/cluster/members/{id}", memberChange(node.RemoveMember, "removed a member",
		func(id string) any { return map[string]string{"removed": id} }))
	mux.HandleFunc("POST /v1/cluster/transfer-leader", func(w nethttp.ResponseWriter, r *nethttp.Request) {
		var body struct {
			ID string `json:"id"`
		}
		if err := json.NewDecoder(nethttp.MaxBytesReader(w, r.Body, 4096)).Decode(&body); err != nil {
			reply(w, 400, adminError{"validation_error", "the body must be {\"id\": \"<member>\"} or {}", ""})
			return
		}
		var err error
		if body.ID == "" {
			if !node.IsLeader() {
				err = raft.ErrNotLeading
			} else {
				err = node.TransferLeadership()
			}
		} else {
			err = node.TransferLeadershipTo(body.ID)
		}
		if err != nil {
			fail(w, err)
			return
		}
		leader, _ := node.Leader()
		logger.Info("handed over leadership", "to", leader)
		reply(w, 200, map[string]string{"leader": leader})
	})
	want := []byte("Bearer " + token)
	return nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			reply(w, nethttp.StatusUnauthorized, adminError{"unauthorized", "a valid operator token is required (Authorization: Bearer <the --admin-token-file token>)", ""})
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// serveAdmin serves the admin API on addr until the process ends; it
// returns the bound address.
func serveAdmin(addr string, h nethttp.Handler, logger *slog.Logger) (net.Addr, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("admin listener on %s: %w", addr, err)
	}
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok && !tcp.IP.IsLoopback() {
		logger.Warn("the admin API listens beyond loopback; its token is all that protects it", "addr", ln.Addr().String())
	}
	srv := &nethttp.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	return ln.Addr(), nil
}
