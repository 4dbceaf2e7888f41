package main

import (
	"fmt"
	"log/slog"
	"net"
	nethttp "net/http"
	"net/http/pprof"
	"time"
)

// serveDebug serves Go's profiles (/debug/pprof/) on a separate listener, so
// an operator can see where the time goes. It refuses anything but loopback:
// profiles reveal memory contents.
func serveDebug(addr string, logger *slog.Logger) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--debug-addr: %w", err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("--debug-addr must be a loopback address, not %q", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("--debug-addr: %w", err)
	}
	mux := nethttp.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &nethttp.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil {
			logger.Warn("debug server stopped", "err", err)
		}
	}()
	logger.Info("serving profiles", "addr", ln.Addr().String())
	return nil
}
