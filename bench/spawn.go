package bench

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"
)

// Limits of a spawned server's life.
const (
	spawnReadyTimeout  = 30 * time.Second      // from exec to /readyz answering 200
	readyPollInterval  = 50 * time.Millisecond // between /readyz probes
	stopTimeout        = 30 * time.Second      // from SIGTERM to exit, then SIGKILL
	stdoutLineBytesMax = 64 << 10              // a line of the server's stdout
)

// SpawnConfig says how to start a fresh server.
type SpawnConfig struct {
	Binary string   // path of the payments binary
	Args   []string // extra flags appended to `serve …`
	// Log receives the server's stderr (its structured log). Nil discards it.
	Log io.Writer
}

// Server is a payments server started by Spawn: a single node on loopback
// ports chosen by the kernel, with a fresh data directory in a temporary
// directory and a generated bootstrap key. Stop it with Stop.
type Server struct {
	// Addr is the HTTP host:port the server bound.
	Addr string
	// BootstrapKey is the key seeded with every scope; it can create
	// organizations.
	BootstrapKey string

	cmd    *exec.Cmd
	dir    string
	exited chan struct{} // closed when the process has exited
	err    error         // the process's exit error, set before exited closes
}

// Spawn starts the server binary, waits until it prints its http_addr and
// answers GET /readyz with 200, and returns it. On error nothing is left
// running and the temporary directory is removed.
func Spawn(ctx context.Context, cfg SpawnConfig) (*Server, error) {
	dir, err := os.MkdirTemp("", "paybench-*")
	if err != nil {
		return nil, fmt.Errorf("spawn: %w", err)
	}
	key, err := newBootstrapKey()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	args := append([]string{"serve",
		"--data-dir", dir + "/data",
		"--http-addr", "127.0.0.1:0",
		"--raft-addr", "127.0.0.1:0",
		"--bootstrap-key", key,
	}, cfg.Args...)
	cmd := exec.Command(cfg.Binary, args...)
	// A process group of its own: a Ctrl-C meant for paybench does not
	// reach the server, which Stop shuts down in order.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stderr = cfg.Log
	if cmd.Stderr == nil {
		cmd.Stderr = io.Discard
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("spawn: %w", err)
	}
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("spawn %s: %w", cfg.Binary, err)
	}
	s := &Server{BootstrapKey: key, cmd: cmd, dir: dir, exited: make(chan struct{})}

	// Read stdout to its end, so the server never blocks on a full pipe,
	// and pass the http_addr line on. Wait is called only after the reader
	// is done, as os/exec requires of StdoutPipe.
	addrc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 4096), stdoutLineBytesMax)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "http_addr="); ok {
				select {
				case addrc <- v:
				default:
				}
			}
		}
		io.Copy(io.Discard, stdout)
		s.err = cmd.Wait()
		close(s.exited)
	}()

	ctx, cancel := context.WithTimeout(ctx, spawnReadyTimeout)
	defer cancel()
	fail := func(err error) (*Server, error) {
		s.Stop()
		return nil, err
	}
	select {
	case s.Addr = <-addrc:
	case <-s.exited:
		return fail(fmt.Errorf("spawn: server exited before printing http_addr: %v", s.err))
	case <-ctx.Done():
		return fail(fmt.Errorf("spawn: no http_addr line on the server's stdout: %w", ctx.Err()))
	}
	if err := CheckLoopback(s.Addr); err != nil {
		return fail(fmt.Errorf("spawn: server bound %w", err))
	}
	if err := s.waitReady(ctx); err != nil {
		return fail(err)
	}
	return s, nil
}

// waitReady polls /readyz until it answers 200.
func (s *Server) waitReady(ctx context.Context) error {
	c := &fasthttp.HostClient{Addr: s.Addr, MaxConns: 1, ReadTimeout: time.Second, WriteTimeout: time.Second}
	defer c.CloseIdleConnections()
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI("http://" + s.Addr + "/readyz")
	last := "no answer yet"
	for {
		err := c.Do(req, resp)
		switch {
		case err != nil:
			last = err.Error()
		case resp.StatusCode() == fasthttp.StatusOK:
			return nil
		default:
			last = fmt.Sprintf("%d %s", resp.StatusCode(), resp.Body())
		}
		select {
		case <-s.exited:
			return fmt.Errorf("spawn: server exited before it was ready: %v", s.err)
		case <-ctx.Done():
			return fmt.Errorf("spawn: /readyz never answered 200 (last: %s): %w", last, ctx.Err())
		case <-time.After(readyPollInterval):
		}
	}
}

// Stop sends SIGTERM, waits for the server to drain and exit (killing it
// after stopTimeout), and removes its temporary directory. It returns an
// error when the server did not exit cleanly. Stop may be called more than
// once; later calls only report again.
func (s *Server) Stop() error {
	select {
	case <-s.exited:
	default:
		s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.exited:
		case <-time.After(stopTimeout):
			s.cmd.Process.Kill()
			<-s.exited
			os.RemoveAll(s.dir)
			return fmt.Errorf("server did not exit within %s of SIGTERM; killed", stopTimeout)
		}
	}
	if err := os.RemoveAll(s.dir); err != nil {
		return fmt.Errorf("remove %s: %w", s.dir, err)
	}
	if s.err != nil {
		return fmt.Errorf("server exited uncleanly: %w", s.err)
	}
	return nil
}

// PID returns the server's process id.
func (s *Server) PID() int { return s.cmd.Process.Pid }

// Exited is closed when the server process has exited, for whatever reason.
func (s *Server) Exited() <-chan struct{} { return s.exited }

// ExitErr returns how the process ended (nil for exit status 0) once
// Exited is closed, and nil before.
func (s *Server) ExitErr() error {
	select {
	case <-s.exited:
		return s.err
	default:
		return nil
	}
}

// newBootstrapKey draws a sandbox key: sk_test_ and 32 hex digits.
func newBootstrapKey() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("bootstrap key: %w", err)
	}
	return "sk_test_" + hex.EncodeToString(b[:]), nil
}
