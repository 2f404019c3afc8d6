package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/flinkgo/flinkgo/pkg/client"
)

func newUICmd(g *globals) *cobra.Command {
	var noBrowser bool
	cmd := &cobra.Command{
		Use:   "ui",
		Short: "Print (and open) the dashboard URL with a one-time login link",
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
					if err := openBrowser(link.URL); err != nil {
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
func openBrowser(url string) error {
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
	c := exec.Command(path, url)
	if err := c.Start(); err != nil {
		return err
	}
	go func() { _ = c.Wait() }()
	return nil
}
