package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/flinkgo/flinkgo/internal/scorecard"
	"github.com/flinkgo/flinkgo/pkg/api"
)

// chromium finds a headless-capable browser: $FLINKGO_CHROMIUM, else
// Debian's chromium on the PATH. CI installs it (.ci/run) and sets
// FLINKGO_REQUIRE_BROWSER=1, so there a missing browser fails the test; on
// a machine with only Go it is skipped with a hint.
// Which of the two happened is a note below make test's scorecard.
func chromium(t *testing.T) string {
	p := os.Getenv("FLINKGO_CHROMIUM")
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p != "" {
			break
		}
		p, _ = exec.LookPath(name)
	}
	if p != "" {
		require.NoError(t, scorecard.Note("dashboard-browser", "The dashboard's browser test ran, with "+p+"."))
		return p
	}
	if os.Getenv("FLINKGO_REQUIRE_BROWSER") != "" {
		t.Fatal("no chromium found and FLINKGO_REQUIRE_BROWSER is set: install Debian's chromium package or set FLINKGO_CHROMIUM")
	}
	const why = "no chromium: the dashboard's browser test needs it (apt-get install chromium, or set FLINKGO_CHROMIUM)"
	require.NoError(t, scorecard.Note("dashboard-browser", "The dashboard's browser test was SKIPPED: "+why+"."))
	t.Skip(why)
	return ""
}

// browser drives one headless Chromium and records what the page did that
// a user would not see: requests, console errors, exceptions.
type browser struct {
	t   *testing.T
	ctx context.Context

	mu         sync.Mutex
	requests   []string
	complaints []string // console errors, CSP violations, uncaught exceptions
}

func newBrowser(t *testing.T) *browser {
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)),
		chromedp.NoSandbox, // CI runs as root
		chromedp.DisableGPU,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
	)
	b := &browser{t: t}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(alloc, chromedp.WithListener(b.observe))
	b.ctx = ctx
	t.Cleanup(func() {
		cancelCtx()
		cancelAlloc()
	})
	// The first call starts the browser; it must have no deadline, which
	// would end the browser with it.
	require.NoError(t, chromedp.Do(ctx))
	_, err := chromedp.Call(ctx, network.Enable, network.EnableParams{})
	require.NoError(t, err)
	_, err = chromedp.Call(ctx, cdplog.Enable, cdp.Empty{})
	require.NoError(t, err)
	return b
}

// observe runs in the tab's event loop: it must return fast.
func (b *browser) observe(ev any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch ev := ev.(type) {
	case *network.EventRequestWillBeSent:
		b.requests = append(b.requests, ev.Request.URL)
	case *cdplog.EventEntryAdded:
		if ev.Entry.Level == cdplog.EntryLevelError {
			b.complaints = append(b.complaints, fmt.Sprintf("log %s: %s (%s)", ev.Entry.Source, ev.Entry.Text, ev.Entry.URL))
		}
	case *cdpruntime.EventExceptionThrown:
		d := ev.ExceptionDetails
		b.complaints = append(b.complaints, fmt.Sprintf("exception: %s at %s:%d", d.Text, d.URL, d.LineNumber))
	case *cdpruntime.EventConsoleAPICalled:
		if ev.Type == cdpruntime.ConsoleAPICalledTypeError {
			var parts []string
			for _, a := range ev.Args {
				parts = append(parts, string(a.Value))
			}
			b.complaints = append(b.complaints, "console.error: "+strings.Join(parts, " "))
		}
	}
}

// do runs actions within 30 s; on failure it saves a screenshot of the
// page in a directory kept after the test, and fails the test.
func (b *browser) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.failShot(what)
		b.t.Fatalf("%s: %v", what, err)
	}
}

// click clicks the element sel finds. The pages redraw themselves every
// refresh (the graph's nodes, the jobs table's rows), so the node found
// can be replaced before the click reaches it ("Could not find node with
// given id"): then it is found again and clicked, as a user would.
func (b *browser) click(what, sel string) {
	b.t.Helper()
	for range 4 {
		ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
		err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(sel)))
		cancel()
		if err == nil {
			return
		}
		if !strings.Contains(err.Error(), "Could not find node with given id") {
			b.failShot(what)
			b.t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	b.do(what, chromedp.Click(chromedp.CSS(sel)))
}

func (b *browser) failShot(what string) {
	dir, err := os.MkdirTemp("", "flinkgo-dashboard-failure-")
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	if png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)); err == nil {
		name := filepath.Join(dir, "failure.png")
		_ = os.WriteFile(name, png, 0o644)
		b.t.Logf("%s failed; the page looked like this: %s", what, name)
	}
}

// screenshot saves the page as name.png under $FLINKGO_SCREENSHOTS when set.
func (b *browser) screenshot(name string) {
	b.t.Helper()
	b.saveShot(name, "the "+name+" page", chromedp.FullScreenshot(100))
}

// saveShot saves what shot takes as name.png under $FLINKGO_SCREENSHOTS
// when set.
func (b *browser) saveShot(name, what string, shot chromedp.Action[[]byte]) {
	b.t.Helper()
	dir := os.Getenv("FLINKGO_SCREENSHOTS")
	if dir == "" {
		return
	}
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, shot)
	require.NoError(b.t, err)
	require.NoError(b.t, os.MkdirAll(dir, 0o755))
	path := filepath.Join(dir, name+".png")
	require.NoError(b.t, os.WriteFile(path, png, 0o644))
	b.t.Logf("screenshot of %s: %s", what, path)
}

// waitTrue polls a JavaScript expression until it is true.
// A poll started while a navigation replaces the page's JavaScript
// context ("Cannot find context with specified id") polls again in the
// new one, as a user would keep looking.
func (b *browser) waitTrue(what, expr string) {
	b.t.Helper()
	poll := chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(20*time.Second), chromedp.WithPollingInterval(50*time.Millisecond))
	b.do(what, func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		var err error
		for range 4 {
			if _, err = poll(ctx, t); err == nil || !strings.Contains(err.Error(), "Cannot find context with specified id") {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		return chromedp.Void{}, err
	})
}

// text is the text of the element sel, read in one evaluation in the page:
// the page re-renders itself every second, so a node looked up first and
// read after ("No node with given id found") may be gone in between.
func (b *browser) text(sel string) string {
	b.t.Helper()
	b.waitTrue("the element "+sel, fmt.Sprintf(`!!document.querySelector(%s)`, js(sel)))
	return strings.TrimSpace(eval[string](b, fmt.Sprintf(`document.querySelector(%s)?.textContent || ''`, js(sel))))
}

func js(v any) string {
	s, _ := json.Marshal(v)
	return string(s)
}

const dashboardSpec = `
name: clicks-per-user
checkpointing: {interval: 200ms}
operators:
  - {uid: clicks, type: datagen, rate: 5000}
  - {uid: by-user, type: keyBy, from: [clicks], expr: "idx % 13"}
  - {uid: counts, type: count, from: [by-user]}
  - {uid: out, type: discard, from: [counts]}
`

// TestDashboardInBrowser is what a user does in the dashboard: open the
// overview, see the running job, open its page, read the id in its header,
// take a savepoint and find it listed, cancel the job and see it CANCELED.
func TestDashboardInBrowser(t *testing.T) {
	parallel(t)
	e := newEnv(t)
	savepoints := filepath.Join(e.home, "savepoints-here")
	conf := filepath.Join(t.TempDir(), "daemon.yaml")
	require.NoError(t, os.WriteFile(conf, []byte("state.savepoints.dir: "+savepoints+"\n"), 0o600))
	e.startDaemon("--config", conf)
	specFile := e.writeSpec("clicks.yaml", dashboardSpec)
	id := e.mustRun("run", specFile)
	base := "http://" + e.restAddress()
	require.Eventually(t, func() bool { return strings.Contains(e.stderr.String(), base+"/") }, 10*time.Second, 10*time.Millisecond,
		"the daemon's start-up log names the dashboard's URL: %s", e.stderr.String())

	var link api.LoginLink
	require.NoError(t, json.Unmarshal([]byte(e.mustRun("ui", "--no-browser", "-o", "json")), &link))
	require.Equal(t, base+"/", link.Dashboard)
	require.True(t, strings.HasPrefix(link.URL, base+"/ui/login?code="), link.URL)

	b := newBrowser(t)
	row := fmt.Sprintf(`tr[data-job-id=%s]`, js(id))

	// Read-only before logging in: the job shows, its buttons do not work.
	b.do("open the overview", chromedp.Navigate(base+"/"))
	b.waitTrue("the running job in the overview", fmt.Sprintf(
		`(() => { const r = document.querySelector(%s); return !!r && r.querySelector('.state').textContent.trim() === 'RUNNING' })()`, js(row)))
	b.do("open the job read-only", chromedp.Navigate(base+"/#/jobs/"+id))
	b.waitTrue("read-only buttons", `(() => { const c = document.querySelector('#btn-cancel'); return !!c && c.disabled })()`)

	// Log in with the one-time link; it lands on the overview.
	b.do("follow the login link", chromedp.Navigate(link.URL))
	b.waitTrue("logged in", `(document.querySelector('#login-state')?.textContent || '').includes('logged in')`)
	b.waitTrue("the job row again", fmt.Sprintf(`!!document.querySelector(%s)`, js(row)))

	b.click("open the job page", row+" a.job-link")
	b.waitTrue("the job id in the header", fmt.Sprintf(`(document.querySelector('#job-id')?.textContent || '').trim() === %s`, js(id)))
	require.Equal(t, id, b.text("#job-id"))
	b.waitTrue("the job is RUNNING", `(document.querySelector('#job-state')?.textContent || '').trim() === 'RUNNING'`)
	b.waitTrue("four operators", `document.querySelectorAll('#operators tr[data-uid]').length === 4`)
	b.waitTrue("buttons enabled", `!document.querySelector('#btn-savepoint').disabled`)
	// The page refreshes itself: the rates, zero at first, start to show.
	b.waitTrue("the sink's records per second", `parseFloat(document.querySelector('#operators tr[data-uid="out"] td:nth-child(6)')?.textContent) > 0`)
	b.screenshot("job")

	b.click("trigger a savepoint", "#btn-savepoint")
	b.waitTrue("the savepoint path", `(document.querySelector('#action-result code.savepoint-path')?.textContent || '').trim() !== ''`)
	path := b.text("#action-result code.savepoint-path")
	require.True(t, strings.HasPrefix(path, savepoints+"/"), path)
	require.FileExists(t, filepath.Join(path, "_metadata"))

	b.click("open the checkpoints tab", "#tab-checkpoints")
	b.waitTrue("the savepoint in the history", `[...document.querySelectorAll('#cp-history tr[data-cp-id]')].some(r => r.querySelector('.kind').textContent.includes('savepoint') && r.querySelector('.status').textContent.includes('COMPLETED'))`)
	b.waitTrue("completed checkpoints counted", `/[1-9]\d*\s*completed|completed\D*[1-9]/i.test(document.querySelector('#cp-counts')?.textContent || '')`)
	require.Equal(t, "200ms", b.text(`#cp-config tr[data-key="interval"] td`), "the interval, from intervalMs")
	require.Equal(t, "10m", b.text(`#cp-config tr[data-key="timeout"] td`))
	b.screenshot("checkpoints")

	b.click("open the savepoints page", "#nav-savepoints")
	spRow := fmt.Sprintf(`tr[data-path=%s]`, js(path))
	b.waitTrue("the savepoint listed", fmt.Sprintf(`!!document.querySelector(%s)`, js(spRow)))
	require.Equal(t, "flinkgo run -s "+path+" "+specFile, b.text(spRow+" code.run-line"), "the restore line names the job's own spec file")
	b.screenshot("savepoints")
	b.click("inspect it", spRow+" a.inspect-link")
	b.waitTrue("the inspect view", `(document.querySelector('#inspect')?.textContent || '').includes('counts')`)
	b.screenshot("inspect")

	b.click("back to the overview", "#nav-overview")
	b.waitTrue("the job's records per second in the overview", fmt.Sprintf(`parseFloat(document.querySelector(%s)?.textContent) > 0`, js(row+" td:nth-child(5)")))
	b.screenshot("overview")
	b.checkStayedHome(base)

	// A page of another server on this host, in the same logged-in browser,
	// tries to cancel the job: the browser sends the session cookie along
	// (cookies ignore ports), but not the token, and says the request is
	// not same-origin.
	attacker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><iframe name="sink"></iframe>
<form id="f" method="POST" action="%[1]s/v1/jobs/%[2]s/cancel" target="sink" enctype="text/plain"><input name="{}" value=""></form>
<script>
document.getElementById('f').submit();
Promise.allSettled([
  fetch('%[1]s/v1/jobs/%[2]s/cancel', {method: 'POST', mode: 'no-cors', credentials: 'include', body: '{}'}),
  fetch('%[1]s/v1/jobs/%[2]s/stop', {method: 'POST', mode: 'no-cors', credentials: 'include', body: '{}'}),
]).then(() => setTimeout(() => { document.title = 'tried'; }, 500));
</script>`, base, id)
	}))
	defer attacker.Close()
	b.do("visit another server's page", chromedp.Navigate(attacker.URL))
	b.waitTrue("its attempts made", `document.title === 'tried'`)
	require.Equal(t, api.StateRunning, e.info(id).State, "another page of this host changed the job")
	require.GreaterOrEqual(t, b.sent(base+"/v1/jobs/"+id+"/cancel"), 2, "the browser sent the form and the fetch to the daemon")
	b.forget()

	// Cancel asks first, and says what is lost.
	b.do("back to the job", chromedp.Navigate(base+"/#/jobs/"+id))
	b.waitTrue("buttons enabled", `(() => { const c = document.querySelector('#btn-cancel'); return !!c && !c.disabled })()`)
	b.do("press cancel", chromedp.Click(chromedp.CSS("#btn-cancel")), chromedp.WaitVisible(chromedp.CSS("#confirm")))
	confirm := b.text("#confirm-text")
	require.Contains(t, confirm, "savepoint")
	require.Contains(t, strings.ToLower(confirm), "stop with savepoint", "the dialog names the safe way to pause")
	require.Equal(t, api.StateRunning, e.info(id).State, "nothing happens before the confirmation")
	b.click("confirm", "#confirm-ok")
	b.waitTrue("the job is CANCELED", `(document.querySelector('#job-state')?.textContent || '').trim() === 'CANCELED'`)
	require.Equal(t, api.StateCanceled, e.info(id).State)
	b.screenshot("job-canceled")
	b.checkStayedHome(base)
}

// checkStayedHome asserts that the pages made requests to the daemon only
// and logged no error (CSP violations included).
func (b *browser) checkStayedHome(base string) {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	require.NotEmpty(b.t, b.requests)
	for _, u := range b.requests {
		require.True(b.t, strings.HasPrefix(u, base+"/") || strings.HasPrefix(u, "data:"), "a request left the daemon: %s", u)
	}
	require.Empty(b.t, b.complaints, "the page logged errors")
}

// sent counts the requests made to url.
func (b *browser) sent(url string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, u := range b.requests {
		if u == url {
			n++
		}
	}
	return n
}

// forget drops what was recorded so far (another site's page was shown).
func (b *browser) forget() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.requests, b.complaints = nil, nil
}

// Without a TCP listener there is no dashboard, and `flinkgo ui` says how
// to turn it on rather than printing a link that cannot work.
func TestUIWithoutRESTListener(t *testing.T) {
	parallel(t)
	e := newEnv(t)
	e.spawnDaemon("--rest-address=")
	e.waitReady(20 * time.Second)
	r := e.run("ui", "--no-browser")
	require.Equal(t, 7, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stderr, "set rest.address")
	require.Empty(t, r.stdout)
	require.NotContains(t, e.stderr.String(), "login", "no login link is logged without a listener")
}

// `flinkgo ui` opens the browser on a private file that redirects to the
// login link: the one-time code must not show on a command line, which any
// local user can read.
func TestUIOpensBrowserWithoutCodeOnCommandLine(t *testing.T) {
	parallel(t)
	e := newEnv(t)
	e.startDaemon()
	bin := t.TempDir()
	argv := filepath.Join(bin, "argv")
	require.NoError(t, os.WriteFile(filepath.Join(bin, "xdg-open"), []byte("#!/bin/sh\necho \"$@\" > "+argv+"\n"), 0o755))
	e.extra = []string{"DISPLAY=:99", "PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")}
	out := e.mustRun("ui")
	require.Contains(t, out, "/ui/login?code=", "the terminal shows the link")

	var opened string
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(argv)
		opened = strings.TrimSpace(string(b))
		return err == nil && opened != ""
	}, 10*time.Second, 20*time.Millisecond)
	page, ok := strings.CutPrefix(opened, "file://")
	require.True(t, ok, opened)
	require.Equal(t, e.home, filepath.Dir(page))
	require.NotContains(t, opened, "code=")
	fi, err := os.Stat(page)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	body, err := os.ReadFile(page)
	require.NoError(t, err)
	require.Contains(t, string(body), "http://"+e.restAddress()+"/ui/login?code=")

	// The next run replaces it: spent codes do not pile up.
	e.mustRun("ui")
	pages, err := filepath.Glob(filepath.Join(e.home, "ui-login-*.html"))
	require.NoError(t, err)
	require.Len(t, pages, 1)
	require.NotEqual(t, page, pages[0])
}
