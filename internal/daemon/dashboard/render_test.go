package dashboard

import (
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"
)

// render runs check (JavaScript, printing with console.log) against the
// page's scripts in node with a minimal DOM (testdata/dom.js). Skipped
// without node, as the browser tests are without chromium, unless
// FLINKGO_REQUIRE_BROWSER is set (CI installs both).
func render(t *testing.T, check string) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("FLINKGO_REQUIRE_BROWSER") != "" {
			t.Fatal("node not installed (apt-get install nodejs) and FLINKGO_REQUIRE_BROWSER is set")
		}
		t.Skip("node not installed")
	}
	out, err := exec.Command(node, "testdata/dom.js", "assets", check).CombinedOutput()
	require.NoError(t, err, "%s", out)
	return string(out)
}

// A job that printed nothing shows the hint and nothing else under Print
// output (a count of 0 used as a guard was rendered as a stray "0").
func TestPrintOutputEmptyShowsOnlyTheHint(t *testing.T) {
	out := render(t, `
const s = outputSection({id: 'abcdef0123456789'}, {output: []});
console.log(JSON.stringify(s.texts()));`)
	require.NotContains(t, out, `"0"`, "no stray 0: %s", out)
	require.Contains(t, out, "Nothing printed yet")
}

// A watermark of historical event time (a replay of last year's data) is
// said to be one, with how fast it advances, not shown as "8103h" of lag.
func TestWatermarkOfHistoricalEventTime(t *testing.T) {
	out := render(t, `
const hs = newHistory('j');
const now = Date.parse('2026-12-04T12:00:00Z'), wm = Date.parse('2025-12-04T12:00:00Z');
// Ten seconds in which the watermark advanced 50 minutes: 300 times the clock.
const times = [], lag = [];
for (let k = 0; k <= 10; k++) { times.push(now + k * 1000); lag.push((now - wm) + k * 1000 - k * 300000); }
mergeHistory(hs, {spanMs: 900000, times, operators: [{uid: 'in', watermarkLagMs: lag}]});
console.log(fmtWatermark(wm + 3000000, lag[10], wmRate(hs, 'j', 'in')));
console.log(fmtWatermark(wm, 8103 * 3600000, null));
console.log(fmtWatermark(now, 2500, wmRate(hs, 'j', 'in')));
const still = newHistory('k');
mergeHistory(still, {spanMs: 900000, times, operators: [{uid: 'in', watermarkLagMs: times.map(x => x - wm)}]});
console.log(fmtWatermark(wm, times[10] - wm, wmRate(still, 'k', 'in')));`)
	require.Equal(t, "2025-12-04 12:50:00.000 (historical event time, 365d behind the clock; advancing 300× as fast as the clock)\n"+
		"2025-12-04 12:00:00.000 (historical event time, 338d behind the clock)\n"+
		"2026-12-04 12:00:00.000 (2.5s)\n"+
		"2025-12-04 12:00:00.000 (historical event time, 365d behind the clock; not advancing)\n", out)
}

// The job page lists the exception history, newest first, with each
// failure's attempt and time; a job that never failed shows no section.
func TestExceptionHistorySection(t *testing.T) {
	out := render(t, `
const s = exceptionsSection({truncated: true, entries: [
  {timestamp: 2000, time: '2026-12-04T12:00:02Z', exception: 'operator boom subtask 0: no member nope', attempt: 1},
  {timestamp: 1000, time: '2026-12-04T12:00:01Z', exception: 'operator boom subtask 0: first', attempt: 0}]});
console.log(s.textContent);
console.log(exceptionsSection({entries: []}), exceptionsSection(undefined));`)
	require.Regexp(t, `^Exception historyThe last 2 failures, newest first; older ones were dropped\.`+
		`Attempt 1 · 2026-12-04 \S+ \(.*\)operator boom subtask 0: no member nope`+
		`Attempt 0 · 2026-12-04 \S+ \(.*\)operator boom subtask 0: first\nnull null\n$`, out)
}

// An ended job's charts say they are the last 15 minutes of its run (kept
// across daemon restarts), or that no samples of the run were kept; a
// running job's say they are sampled now.
func TestChartsOfAnEndedJob(t *testing.T) {
	out := render(t, `
const hs = newHistory('j');
mergeHistory(hs, {spanMs: 900000, times: [1000, 2000], recordsInPerSec: [5, 6], recordsOutPerSec: [5, 6],
  operators: [{uid: 'in', recordsInPerSec: [5, 6]}]});
const job = {id: 'j', state: 'FINISHED', operators: [{uid: 'in'}]};
const hint = n => n instanceof Node ? (n.attrs.id === 'charts-hint' ? n.textContent : n.children.map(hint).find(Boolean)) : undefined;
console.log(hint(chartsSection(job, hs)));
console.log(hint(chartsSection(job, newHistory('j'))));
console.log(hint(chartsSection(Object.assign({}, job, {state: 'RUNNING'}), hs)));`)
	require.Equal(t, "The last 15 minutes of the run, sampled once a second by the daemon that ran it up to its end.\n"+
		"No samples of this run were kept (it ended as its daemon stopped, or ran on another daemon of the cluster).\n"+
		"Sampled by the daemon once a second, whether or not a page is open.\n", out)
}
