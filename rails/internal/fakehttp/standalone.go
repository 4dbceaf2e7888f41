package fakehttp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

// Limits of a fake's standalone command.
const (
	sweepInterval     = time.Second
	readHeaderTimeout = 10 * time.Second
	shutdownTimeout   = 5 * time.Second
)

// ListenLoopback listens on addr, which must be a loopback address: a
// fake stands in for a provider on this machine only.
func ListenLoopback(addr string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("-listen %s is not a loopback address", addr)
	}
	return net.Listen("tcp", addr)
}

// PrintEnv prints lines, the shell lines a client of the fake needs, and
// also writes them to path when it is set (readable by its owner alone:
// they carry credentials).
func PrintEnv(lines []string, path string) error {
	text := strings.Join(lines, "\n") + "\n"
	if path != "" {
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			return err
		}
	}
	fmt.Print(text)
	return nil
}

// Serve serves h on ln and calls sweep every second (a fake's clock moves
// on without requests) until SIGINT or SIGTERM, then shuts the server
// down.
func Serve(ln net.Listener, h http.Handler, sweep func()) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		t := time.NewTicker(sweepInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				sweep()
			}
		}
	}()
	hs := &http.Server{Handler: h, ReadHeaderTimeout: readHeaderTimeout}
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		defer cancel()
		_ = hs.Shutdown(shut)
	}()
	if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
