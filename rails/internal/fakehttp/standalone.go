package fakehttp

import (
	"context"
	"errors"
	"flag"
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

// Standalone is a fake as its standalone command serves it.
type Standalone struct {
	Handler http.Handler
	Sweep   func()   // called every second: a fake's clock moves on without requests
	Env     []string // the shell lines a client of the fake needs
}

// Main runs the standalone command of the fake named name and exits on
// error: it adds -listen and -env-out to the flags the fake defined and
// parses them, listens on loopback, has start make the fake at its URL,
// prints the shell lines and serves the fake until SIGINT or SIGTERM.
func Main(name string, start func(url string) (Standalone, error)) {
	if err := run(start); err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		os.Exit(1)
	}
}

func run(start func(url string) (Standalone, error)) error {
	listen := flag.String("listen", "127.0.0.1:0", "loopback address to listen on")
	envOut := flag.String("env-out", "", "also write the shell lines to this file")
	flag.Parse()
	ln, err := listenLoopback(*listen)
	if err != nil {
		return err
	}
	fake, err := start("http://" + ln.Addr().String())
	if err != nil {
		return err
	}
	if err := printEnv(fake.Env, *envOut); err != nil {
		return err
	}
	return serve(ln, fake.Handler, fake.Sweep)
}

// listenLoopback listens on addr, which must be a loopback address: a
// fake stands in for a provider on this machine only.
func listenLoopback(addr string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("-listen %s is not a loopback address", addr)
	}
	return net.Listen("tcp", addr)
}

// printEnv prints lines, the shell lines a client of the fake needs, and
// also writes them to path when it is set (readable by its owner alone:
// they carry credentials).
func printEnv(lines []string, path string) error {
	text := strings.Join(lines, "\n") + "\n"
	if path != "" {
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			return err
		}
	}
	fmt.Print(text)
	return nil
}

// serve serves h on ln and calls sweep every second (a fake's clock moves
// on without requests) until SIGINT or SIGTERM, then shuts the server
// down.
func serve(ln net.Listener, h http.Handler, sweep func()) error {
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
