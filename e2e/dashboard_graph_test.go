package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// The archive is a file sink slowed to 20 ms a batch (a fault rule), so
// the graph shows all three colours: the source backpressured, the
// archive busy, the rest mostly idle.
const graphSpec = `
name: clicks-graph
checkpointing: {interval: 500ms}
operators:
  - {uid: clicks, type: datagen, parallelism: 2, eventTime: {maxOutOfOrderness: 1s}}
  - {uid: by-user, type: keyBy, from: [clicks], expr: "idx %% 13"}
  - {uid: counts, type: count, from: [by-user], parallelism: 2}
  - {uid: show, type: print, from: [counts]}
  - {uid: archive, type: file, from: [clicks], path: %s}
`

// eval runs a JavaScript expression in the page and returns its value.
func eval[T any](b *browser, expr string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.failShot("evaluate " + expr)
		b.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// shotOf saves a screenshot of the element sel as name.png under
// $FLINKGO_SCREENSHOTS when set.
func (b *browser) shotOf(name, sel string) {
	b.t.Helper()
	b.saveShot(name, sel, chromedp.Screenshot(chromedp.CSS(sel)))
}

// The job page draws the job graph (one node per operator, one edge per
// input, labelled as info says), charts that fill as the page refreshes,
// the print sink's output and the job's events; a click on a node shows
// its subtasks. The overview filters and sorts by state and draws a
// sparkline per job.
func TestDashboardGraphChartsAndOutput(t *testing.T) {
	parallel(t)
	e := newEnv(t)
	e.extra = []string{"FLINKGO_FAULTS=file.write:delay,every=1,times=100000000,delay=20ms"}
	e.startDaemon()
	defer e.stopDaemon()
	id := e.mustRun("run", e.writeSpec("graph.yaml", fmt.Sprintf(graphSpec, filepath.Join(e.home, "archive"))))
	idle := e.mustRun("run", e.writeSpec("idle.yaml", "name: stopped-one\noperators:\n  - {uid: gen, type: datagen, rate: 10}\n  - {uid: sink, type: discard, from: [gen]}\n"))
	e.mustRun("cancel", idle)
	base := "http://" + e.restAddress()
	info := e.info(id)

	b := newBrowser(t)
	b.do("open the job page", chromedp.Navigate(base+"/#/jobs/"+id))
	b.waitTrue("the graph", fmt.Sprintf(`document.querySelectorAll('#job-graph .node').length === %d`, len(info.Operators)))

	// One node per operator, with its uid, type and parallelism.
	for _, op := range info.Operators {
		node := fmt.Sprintf(`#job-graph .node[data-uid=%s]`, js(op.UID))
		text := eval[string](b, fmt.Sprintf(`document.querySelector(%s).textContent`, js(node)))
		require.Contains(t, text, op.UID)
		require.Contains(t, text, op.Type)
		require.Contains(t, text, fmt.Sprintf("parallelism %d", op.Parallelism))
	}
	// One edge per input, labelled with its partitioning.
	var want, got []string
	for _, op := range info.Operators {
		for _, in := range op.Inputs {
			want = append(want, in.UID+" -> "+op.UID+" "+in.Partitioning)
		}
	}
	got = eval[[]string](b, `[...document.querySelectorAll('#job-graph .edge')].map(e => e.dataset.from + ' -> ' + e.dataset.to + ' ' + e.querySelector('.edge-label').textContent)`)
	sort.Strings(want)
	sort.Strings(got)
	require.Equal(t, want, got)
	require.Contains(t, got, "by-user -> counts hash")

	// Nodes take their colour from the shares of time once sampled.
	status := func(uid string) string {
		return fmt.Sprintf(`document.querySelector('#job-graph .node[data-uid="%s"]').dataset.status`, uid)
	}
	b.waitTrue("the source backpressured", status("clicks")+` === 'backpressured'`)
	b.waitTrue("the slow sink busy", status("archive")+` === 'busy'`)
	b.waitTrue("the printer idle", status("show")+` === 'idle'`)
	require.NotEqual(t, eval[string](b, `document.querySelector('#job-graph .node[data-uid="clicks"] rect').getAttribute('fill')`),
		eval[string](b, `document.querySelector('#job-graph .node[data-uid="show"] rect').getAttribute('fill')`))

	// Charts gain points as the page refreshes itself.
	b.waitTrue("the job chart", `+document.querySelector('#chart-job-rates svg')?.dataset.points >= 2`)
	first := eval[int](b, `+document.querySelector('#chart-job-rates svg').dataset.points`)
	// 15 s of samples, for the screenshots to show some history.
	b.waitTrue("more points after refreshes", fmt.Sprintf(`+document.querySelector('#chart-job-rates svg')?.dataset.points >= %d`, max(first+4, 30)))
	for _, chart := range []string{"#chart-op-in", "#chart-op-out", "#chart-busy", "#chart-backpressure"} {
		require.Positive(t, eval[int](b, `+document.querySelector('`+chart+` svg').dataset.points`), chart)
		require.Equal(t, len(info.Operators), eval[int](b, `document.querySelectorAll('`+chart+` polyline').length`), "%s: a line per operator", chart)
	}
	b.waitTrue("checkpoints charted", `+document.querySelector('#chart-cp-duration svg')?.dataset.points > 0`)
	b.waitTrue("the watermark lag charted", `+document.querySelector('#chart-wm-lag svg')?.dataset.points > 0`)

	// The output pane shows what the print sink wrote.
	b.waitTrue("the output pane", `(document.querySelector('#output')?.tagName || '') === 'PRE'`)
	// The pane first, then the files: the job prints on meanwhile, so
	// every line the pane shows is in job.out or (rotated) job.out.1 by then.
	pane := eval[string](b, `document.querySelector('#output').textContent`)
	printed := map[string]bool{}
	for _, name := range []string{"job.out", "job.out.1"} {
		out, err := os.ReadFile(filepath.Join(e.home, "jobs", id, name))
		if name == "job.out" {
			require.NoError(t, err)
		}
		for _, l := range strings.Split(string(out), "\n") {
			printed[l] = true
		}
	}
	lines := strings.Split(pane, "\n")
	require.NotEmpty(t, lines)
	for _, l := range lines {
		require.True(t, printed[l], "the pane shows a line of job.out: %q", l)
	}
	require.Contains(t, eval[string](b, `document.querySelector('#events').textContent`), "RUNNING")

	b.screenshot("job-graph-page")
	b.shotOf("job-graph", "#job-graph")
	b.shotOf("job-charts", "#charts")

	// A click on a node shows its subtasks.
	require.Equal(t, "Click an operator to see its subtasks.", b.text("#subtasks-hint"))
	b.click("click the counts node", `#job-graph .node[data-uid="counts"]`)
	b.waitTrue("its subtasks", `document.querySelectorAll('#subtasks[data-uid="counts"] tr[data-subtask]').length === 2`)
	b.waitTrue("the node selected", `document.querySelector('#job-graph .node[data-uid="counts"]').classList.contains('selected')`)
	b.waitTrue("subtask figures", `[...document.querySelectorAll('#subtasks tr[data-subtask] td.times')].every(td => /\d+% · \d+% · \d+%/.test(td.textContent))`)
	b.waitTrue("subtask records", `[...document.querySelectorAll('#subtasks tr[data-subtask]')].every(r => r.children[1].textContent !== '0')`)
	b.waitTrue("subtask watermarks", `[...document.querySelectorAll('#subtasks tr[data-subtask] td.watermark')].every(td => /^\d{4}-\d\d-\d\d /.test(td.textContent))`)
	b.shotOf("job-subtasks", "#subtasks")
	b.click("click another node", `#job-graph .node[data-uid="clicks"]`)
	b.waitTrue("its subtasks instead", `document.querySelectorAll('#subtasks[data-uid="clicks"] tr[data-subtask]').length === 2`)

	// The overview: a sparkline per job, a filter and an order by state.
	b.do("open the overview", chromedp.Navigate(base+"/#/"))
	row := fmt.Sprintf(`#jobs tr[data-job-id=%s]`, js(id))
	b.waitTrue("the sparkline", fmt.Sprintf(`+document.querySelector(%s)?.querySelector('svg.sparkline')?.dataset.points > 0`, js(row)))
	b.waitTrue("both jobs", `document.querySelectorAll('#jobs tr[data-job-id]').length === 2`)
	b.click("sort by state", `#jobs button.sort[data-sort="state"]`)
	b.waitTrue("RUNNING first", `document.querySelector('#jobs tbody tr .state').textContent === 'RUNNING'`)
	b.click("reverse", `#jobs button.sort[data-sort="state"]`)
	b.waitTrue("CANCELED first", `document.querySelector('#jobs tbody tr .state').textContent === 'CANCELED'`)
	require.Contains(t, eval[string](b, `location.hash`), "sort=state")
	b.click("show only the canceled", `#state-counts button[data-state="CANCELED"]`)
	b.waitTrue("one row", fmt.Sprintf(`document.querySelectorAll('#jobs tr[data-job-id]').length === 1 && !!document.querySelector('#jobs tr[data-job-id=%s]')`, js(idle)))
	b.screenshot("overview-filtered")
	b.click("show all again", `#filter-all`)
	b.waitTrue("two rows", `document.querySelectorAll('#jobs tr[data-job-id]').length === 2`)
	b.screenshot("overview-sparklines")
	b.checkStayedHome(base)
}
