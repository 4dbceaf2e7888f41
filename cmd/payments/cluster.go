package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	nethttp "net/http"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"payments/raft"
)

const clusterUsage = `payments cluster: operate a cluster through its nodes' admin API

Usage:
  payments cluster status          [flags]      every member's role, indexes, lag and last contact
  payments cluster add <id> --raft-addr host:port --http-addr host:port [flags]
                                               add a node as a non-voter (it replicates, does not vote)
  payments cluster promote <id>    [flags]      make a caught-up non-voter a voter
  payments cluster remove <id>     [flags]      remove a member (a dead node, before replacing it)
  payments cluster transfer-leader [<id>] [flags]  hand leadership to <id>, or to any caught-up voter

A node started with --join does add and promote itself.

Flags:
  --admin-addr host:port,…   the admin API of one or more nodes (default 127.0.0.1:9400);
                             status asks every one listed, changes go to whichever leads
  --admin-token-file file    the operator token (PAYMENTS_ADMIN_TOKEN_FILE)
`

// clusterCommand runs `payments cluster …` and returns the exit status.
func clusterCommand(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stderr, clusterUsage)
		return 2
	}
	sub := args[0]
	fs := flag.NewFlagSet("cluster "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	addrs, tokenFile := adminClientFlags(fs, "admin API addresses, comma-separated")
	raftAddr := fs.String("raft-addr", "", "add: the new node's Raft address")
	httpAddr := fs.String("http-addr", "", "add: the new node's HTTP address")
	if err := applyEnv(fs); err != nil {
		fmt.Fprintln(stderr, "payments cluster:", err)
		return 2
	}
	// The member id may come before or after the flags.
	rest := args[1:]
	var positional []string
	for len(rest) > 0 {
		if err := fs.Parse(rest); err != nil {
			return 2
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	c := newAdminClient("cluster", *tokenFile, *addrs, stderr)
	if c == nil {
		return 2
	}
	var err error
	switch {
	case sub == "status" && len(positional) == 0:
		err = c.status(stdout)
	case sub == "add" && len(positional) == 1 && *raftAddr != "" && *httpAddr != "":
		err = c.onLeader(stdout, "POST", "/v1/cluster/members",
			map[string]string{"id": positional[0], "raftAddr": *raftAddr, "httpAddr": *httpAddr})
	case sub == "promote" && len(positional) == 1:
		err = c.onLeader(stdout, "POST", "/v1/cluster/members/"+positional[0]+"/promote", nil)
	case sub == "remove" && len(positional) == 1:
		err = c.onLeader(stdout, "DELETE", "/v1/cluster/members/"+positional[0], nil)
	case sub == "transfer-leader" && len(positional) <= 1:
		body := map[string]string{}
		if len(positional) == 1 {
			body["id"] = positional[0]
		}
		err = c.onLeader(stdout, "POST", "/v1/cluster/transfer-leader", body)
	default:
		fmt.Fprint(stderr, clusterUsage)
		return 2
	}
	if err != nil {
		fmt.Fprintln(stderr, "payments cluster:", err)
		return 1
	}
	return 0
}

type adminClient struct {
	addrs []string
	token string
	http  *nethttp.Client
}

// adminRequestTimeout bounds one request to the admin API.
const adminRequestTimeout = 30 * time.Second

// adminClientFlags declares on fs the flags of a client of the admin API:
// --admin-addr, described by addrUsage, and --admin-token-file.
func adminClientFlags(fs *flag.FlagSet, addrUsage string) (addrs, tokenFile *string) {
	addrs = fs.String("admin-addr", "127.0.0.1:9400", addrUsage)
	tokenFile = fs.String("admin-token-file", "", "file holding the operator token")
	return addrs, tokenFile
}

// newAdminClient is command's client of the admin API at addrs
// (comma-separated), with the operator token read from tokenFile. When
// the token cannot be had it says why on stderr and returns nil.
func newAdminClient(command, tokenFile, addrs string, stderr io.Writer) *adminClient {
	if tokenFile == "" {
		fmt.Fprintf(stderr, "payments %s: --admin-token-file is required\n", command)
		return nil
	}
	token, err := readAdminToken(tokenFile)
	if err != nil {
		fmt.Fprintf(stderr, "payments %s: %v\n", command, err)
		return nil
	}
	c := &adminClient{token: token, http: &nethttp.Client{Timeout: adminRequestTimeout}}
	for _, a := range strings.Split(addrs, ",") {
		if a = strings.TrimSpace(a); a != "" {
			c.addrs = append(c.addrs, a)
		}
	}
	return c
}

// do sends one request to addr and decodes a 2xx answer into out; any other
// answer is returned as the admin API's error.
func (c *adminClient) do(addr, method, path string, body, out any) (int, *adminError, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := nethttp.NewRequest(method, "http://"+addr+path, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, nil, err
	}
	if resp.StatusCode/100 != 2 {
		var e adminError
		if json.Unmarshal(raw, &e) != nil || e.Code == "" {
			e = adminError{Code: "unexpected", Message: strings.TrimSpace(string(raw))}
		}
		return resp.StatusCode, &e, nil
	}
	if out != nil {
		return resp.StatusCode, nil, json.Unmarshal(raw, out)
	}
	return resp.StatusCode, nil, nil
}

// onLeader sends a change to each address in turn until the leader takes
// it; a follower's not_leader answer moves on to the next.
func (c *adminClient) onLeader(stdout io.Writer, method, path string, body any) error {
	var last error
	for _, addr := range c.addrs {
		var out map[string]any
		_, e, err := c.do(addr, method, path, body, &out)
		switch {
		case err != nil:
			last = fmt.Errorf("%s: %w", addr, err)
			continue
		case e != nil && e.Code == "not_leader":
			last = fmt.Errorf("%s is not the leader (the leader is %q); list the leader's admin address too", addr, e.Leader)
			continue
		case e != nil:
			return fmt.Errorf("%s: %s: %s", addr, e.Code, e.Message)
		}
		for _, k := range slices.Sorted(maps.Keys(out)) {
			b, _ := json.Marshal(out[k])
			fmt.Fprintf(stdout, "%s=%s\n", k, strings.Trim(string(b), `"`))
		}
		return nil
	}
	return last
}

// status prints every member of the configuration with what its own node
// reports: role, term, indexes, lag behind the leader's commit index, and
// how long since it last heard from the leader.
func (c *adminClient) status(stdout io.Writer) error {
	var members []raft.Member
	var firstErr error
	for _, addr := range c.addrs {
		var cl struct {
			Members []raft.Member `json:"members"`
		}
		_, e, err := c.do(addr, "GET", "/v1/cluster", nil, &cl)
		if err == nil && e != nil {
			err = fmt.Errorf("%s: %s", e.Code, e.Message)
		}
		if err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("%s: %w", addr, err)
			}
			continue
		}
		members = cl.Members
		break
	}
	if members == nil {
		return firstErr
	}
	statuses := map[string]raft.NodeStatus{}
	for _, addr := range c.addrs {
		var st raft.NodeStatus
		if _, e, err := c.do(addr, "GET", "/v1/node", nil, &st); err == nil && e == nil {
			statuses[st.ID] = st
		}
	}
	var leaderCommit uint64
	for _, st := range statuses {
		if st.Role == "Leader" {
			leaderCommit = st.CommitIndex
		}
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tRAFT ADDRESS\tSUFFRAGE\tROLE\tTERM\tLAST LOG\tCOMMIT\tAPPLIED\tLAG\tLAST CONTACT")
	for _, m := range members {
		suffrage := "nonvoter"
		if m.Voter {
			suffrage = "voter"
		}
		st, ok := statuses[m.ID]
		if !ok {
			fmt.Fprintf(tw, "%s\t%s\t%s\tunreachable\t-\t-\t-\t-\t-\t-\n", m.ID, m.RaftAddr, suffrage)
			continue
		}
		lag, contact := "-", "-"
		if leaderCommit > 0 {
			lag = fmt.Sprint(int64(leaderCommit) - int64(st.AppliedIndex))
		}
		switch {
		case st.Role == "Leader":
			contact = "self"
		case !st.LastContact.IsZero():
			contact = time.Since(st.LastContact).Round(time.Millisecond).String() + " ago"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s\t%s\n", m.ID, m.RaftAddr, suffrage, strings.ToLower(st.Role),
			st.Term, st.LastLogIndex, st.CommitIndex, st.AppliedIndex, lag, contact)
	}
	return tw.Flush()
}

// joinCluster adds this node to a running cluster through the admin API of
// one of members: as a non-voter first, which receives the log (or a
// snapshot, when the leader truncated it) without counting towards any
// quorum; once it applied everything the leader had committed when it was
// added, as a voter. It prints joined=<id> on stdout when done. A node
// that is already a voter (a restart) does nothing.
func joinCluster(ctx context.Context, node *raft.Node, members []string, token, httpAddr string, stdout io.Writer, logger *slog.Logger) {
	c := &adminClient{addrs: members, token: token, http: &nethttp.Client{Timeout: adminRequestTimeout}}
	self := node.ID()
	voter, member := false, false
	if ms, err := node.Members(); err == nil {
		for _, m := range ms {
			if m.ID == self {
				member, voter = true, m.Voter
			}
		}
	}
	// retry runs step until it succeeds, the process stops, or it fails
	// for a reason retrying cannot fix.
	retry := func(what string, step func() (stop bool, err error)) bool {
		for {
			stop, err := step()
			if err == nil {
				return true
			}
			if stop {
				logger.Error("joining the cluster failed", "step", what, "err", err)
				return false
			}
			logger.Warn("joining the cluster: retrying", "step", what, "err", err)
			select {
			case <-ctx.Done():
				return false
			case <-time.After(time.Second):
			}
		}
	}
	var commit uint64
	if !member {
		ok := retry("add as a non-voter", func() (bool, error) {
			var out struct {
				CommitIndex uint64 `json:"commitIndex"`
			}
			err := c.eachUntilLeader("POST", "/v1/cluster/members",
				map[string]string{"id": self, "raftAddr": node.RaftAddr(), "httpAddr": httpAddr}, &out)
			commit = out.CommitIndex
			var e *adminError
			return errors.As(err, &e) && e.Code != "not_leader" && e.Code != "unavailable", err
		})
		if !ok {
			return
		}
		logger.Info("added to the cluster as a non-voter; catching up", "until_index", commit)
	}
	if !voter {
		for !node.CaughtUp(commit) {
			select {
			case <-ctx.Done():
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
		ok := retry("promote to voter", func() (bool, error) {
			err := c.eachUntilLeader("POST", "/v1/cluster/members/"+self+"/promote", nil, nil)
			var e *adminError
			return errors.As(err, &e) && e.Code != "not_leader" && e.Code != "unavailable", err
		})
		if !ok {
			return
		}
		logger.Info("promoted to voter")
	}
	fmt.Fprintf(stdout, "joined=%s\n", self)
}

// eachUntilLeader sends a change to each address in turn until the leader
// takes it; the error is the last address's (an *adminError when it
// answered one).
func (c *adminClient) eachUntilLeader(method, path string, body, out any) error {
	var last error
	for _, addr := range c.addrs {
		_, e, err := c.do(addr, method, path, body, out)
		switch {
		case err != nil:
			last = fmt.Errorf("%s: %w", addr, err)
		case e != nil:
			last = e
			if e.Code != "not_leader" {
				return e
			}
		default:
			return nil
		}
	}
	return last
}

func (e *adminError) Error() string { return e.Code + ": " + e.Message }
