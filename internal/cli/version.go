package cli

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/flinkgo/flinkgo/internal/checkpoint"
)

// Version is set at build time (-ldflags "-X .../internal/cli.Version=...").
var Version = "dev"

func newVersionCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print the version",
		Example: `  flinkgo version -o json`,
		Args:    args(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			goVersion := "unknown"
			if bi, ok := debug.ReadBuildInfo(); ok {
				goVersion = bi.GoVersion
			}
			if g.json() {
				return printJSON(cmd.OutOrStdout(), map[string]any{"version": Version, "go": goVersion, "metadataFormat": checkpoint.MetadataVersion})
			}
			fmt.Fprintf(cmd.OutOrStdout(), "flinkgo %s (%s, snapshot format %d)\n", Version, goVersion, checkpoint.MetadataVersion)
			return nil
		},
	}
}
