package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Browser tests drive Debian's Chromium through chromedp, against the real
// binary on loopback. One browser process serves every test of the run;
// each test gets a browser context of its own (no shared cookies, storage
// or cache) and a tab in it. A missing browser fails the tests: `make
// chromium` installs it.

// chromiumPath is where Debian's chromium package puts the browser;
// PAYMENTS_CHROMIUM overrides it.
const chromiumPath = "/usr/bin/chromium"

var browser struct {
	once   sync.Once
	ctx    context.Context // the browser's first tab; tests open theirs from it
	cancel func()
	err    error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if browser.cancel != nil {
		browser.cancel() // stops the browser and removes its profile
	}
	os.Exit(code)
}

func startBrowser() {
	path := os.Getenv("PAYMENTS_CHROMIUM")
	if path == "" {
		path = chromiumPath
	}
	if _, err := os.Stat(path); err != nil {
		browser.err = fmt.Errorf("the browser tests need Chromium at %s: run `make chromium` (Debian's chromium package), or set PAYMENTS_CHROMIUM: %v", path, err)
		return
	}
	profile, err := os.MkdirTemp("", "payments-chromium-")
	if err != nil {
		browser.err = err
		return
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox, // the tests run as root
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(profile),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(alloc)
	browser.cancel = func() {
		cancelCtx()
		cancelAlloc()
		os.RemoveAll(profile)
	}
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		browser.err = fmt.Errorf("starting %s: %w", path, err)
		return
	}
	browser.ctx = ctx
}

// newTab opens a tab of the shared browser in a fresh browser context, with
// a desktop viewport; it closes when the test ends.
func newTab(t *testing.T) context.Context {
	t.Helper()
	browser.once.Do(startBrowser)
	if browser.err != nil {
		t.Fatal(browser.err)
	}
	ctx, cancel := chromedp.NewContext(browser.ctx, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	ctx, cancelTimeout := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(cancelTimeout)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1024, 900)); err != nil {
		t.Fatalf("open a tab: %v", err)
	}
	return ctx
}

// do runs actions in the tab, failing the test on an error.
func do(t *testing.T, ctx context.Context, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("browser: %v", err)
	}
}

// eval evaluates a JavaScript expression in the tab.
func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// waitFor waits until a JavaScript expression is true in the tab; a
// navigation under way is waited out.
func waitFor(t *testing.T, ctx context.Context, expr string) {
	t.Helper()
	var err error
	deadline := time.Now().Add(30 * time.Second)
	eventually(time.Until(deadline), func() bool {
		_, err = chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr,
			chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(time.Until(deadline))))
		return err == nil || !strings.Contains(err.Error(), "(-32000)") // not the page going away mid-poll
	})
	if err != nil {
		text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
		t.Fatalf("waiting for %s: %v\npage text:\n%s", expr, err, text)
	}
}

// waitLocation waits until the tab is at an address that starts with
// prefix; a navigation under way is waited out.
func waitLocation(t *testing.T, ctx context.Context, prefix string) {
	t.Helper()
	var at string
	if eventually(30*time.Second, func() bool {
		loc, err := chromedp.Run(ctx, chromedp.Location())
		if err == nil {
			at = loc
		}
		return err == nil && strings.HasPrefix(loc, prefix)
	}) {
		return
	}
	t.Fatalf("the tab is at %s, not %s…", at, prefix)
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// screenshot saves the whole page as PNG under $PAYMENTS_SCREENSHOT_DIR,
// or the test's temporary directory.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("PAYMENTS_SCREENSHOT_DIR")
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	file := filepath.Join(dir, unsafeName.ReplaceAllString(t.Name()+"-"+name, "_")+".png")
	if err := os.WriteFile(file, png, 0o644); err != nil {
		t.Fatal(err)
	}
}
