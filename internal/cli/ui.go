package cli

import (
	"context"
	"fmt"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/flinkgo/flinkgo/pkg/client"
)

func newUICmd(g *globals) *cobra.Command {
	var noBrowser bool
	cmd := &cobra.Command{
		Use:     "ui",
		Short:   "Print (and open) the dashboard URL with a one-time login link",
		Example: `  flinkgo ui --no-browser`,
		Long: `Print the dashboard's URL and a one-time login link, and open the link in a browser
when one is available. Anyone can read the dashboard on the daemon's address; its buttons
(savepoint, stop, cancel) work only in a browser that followed a login link. A link works
once, for 10 minutes; the session it opens lasts 12 hours or until the daemon restarts.`,
		Args: args(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.withClient(cmd, 10*time.Second, func(ctx context.Context, c *client.Client) error {
				link, err := c.LoginLink(ctx)
				if err != nil {
					return err
				}
				if g.json() {
					return printJSON(cmd.OutOrStdout(), link)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "dashboard:  %s\nlogin link: %s\n", link.Dashboard, link.URL)
				fmt.Fprintf(cmd.ErrOrStderr(), "the login link works once, until %s\n", link.Expires.Local().Format(time.Kitchen))
				if !noBrowser {
					if err := openBrowser(g.home(), link.URL); err != nil {
						fmt.Fprintf(cmd.ErrOrStderr(), "no browser opened (%v): open the login link yourself\n", err)
					}
				}
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&noBrowser, "no-browser", false, "only print the links")
	return cmd
}

// openBrowser starts the desktop's browser on url without waiting for it.
// The login code must not appear on a command line, which every local user
// can read in /proc: the browser opens a new 0600 file in the 0700 home
// that redirects to url (as Jupyter does). The files of earlier runs, whose
// codes are spent or expired, are removed first.
func openBrowser(home, url string) error {
	var name string
	switch {
	case runtime.GOOS == "darwin":
		name = "open"
	case os.Getenv("DISPLAY") != "" || os.Getenv("WAYLAND_DISPLAY") != "":
		name = "xdg-open"
	default:
		return fmt.Errorf("no graphical session")
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return err
	}
	old, _ := filepath.Glob(filepath.Join(home, "ui-login-*.html"))
	for _, p := range old {
		_ = os.Remove(p)
	}
	// CreateTemp: a new file (O_EXCL), so a link planted at the name is
	// not followed, with mode 0600.
	f, err := os.CreateTemp(home, "ui-login-*.html")
	if err != nil {
		return err
	}
	body := `<!doctype html><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=` + html.EscapeString(url) +
		`"><title>flinkgo</title><p><a href="` + html.EscapeString(url) + `">Open the flinkgo dashboard</a></p>`
	_, err = f.WriteString(body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	c := exec.Command(path, "file://"+f.Name())
	if err := c.Start(); err != nil {
		return err
	}
	go func() { _ = c.Wait() }()
	return nil
}
