package cli

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flinkgo/flinkgo/internal/dev/s3server"
	"github.com/flinkgo/flinkgo/pkg/api"
)

// newDevS3Cmd runs versitygw for development. Its root keys are the
// developer's AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY when set, else keys
// kept in <data-dir>/credentials (0600, the AWS shared credentials format):
// the daemon then finds them through the standard AWS chain
// (AWS_SHARED_CREDENTIALS_FILE), and no key is ever printed.
func newDevS3Cmd(g *globals) *cobra.Command {
	var listen, dataDir string
	var buckets []string
	cmd := &cobra.Command{
		Use:   "s3",
		Short: "Run a local S3 server, versitygw (FOR DEVELOPMENT ONLY; needs `" + s3server.InstallHint + "`)",
		Args:  args(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dataDir == "" {
				dataDir = filepath.Join(g.home(), "dev-s3")
			}
			access, secret, credFile, err := devS3Keys(dataDir)
			if err != nil {
				return err
			}
			srv, err := s3server.Start(s3server.Config{Listen: listen, Dir: filepath.Join(dataDir, "data"), AccessKey: access, SecretKey: secret,
				Buckets: buckets, Log: cmd.ErrOrStderr()})
			if err != nil {
				return api.Errorf(api.CodeFailed, "%v", err)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "development S3 server (versitygw) at %s, buckets %s, data in %s. Not for production. Ctrl-C stops it.\n",
				srv.Endpoint, strings.Join(buckets, ", "), dataDir)
			out := cmd.OutOrStdout()
			if credFile != "" {
				fmt.Fprintf(out, "export AWS_SHARED_CREDENTIALS_FILE=%s\n", credFile)
			}
			fmt.Fprintf(out, "export FLINKGO_S3_ENDPOINT=%s FLINKGO_S3_PATH_STYLE_ACCESS=true\n", srv.Endpoint)
			fmt.Fprintf(out, "# then e.g. state.checkpoints.dir: s3://%s/checkpoints\n", buckets[0])
			ctx, cancel := untilSignal(cmd.Context())
			defer cancel()
			select {
			case <-ctx.Done():
				srv.Close()
				return nil
			case <-waitChan(srv.Wait):
				return api.Errorf(api.CodeFailed, "versitygw exited")
			}
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:7070", "address to listen on")
	cmd.Flags().StringVar(&dataDir, "data-dir", "", "where buckets and the credentials file are kept (default $FLINKGO_HOME/dev-s3)")
	cmd.Flags().StringArrayVar(&buckets, "bucket", []string{"flinkgo"}, "bucket to create (repeatable)")
	return cmd
}

// devS3Keys returns the server's root keys: the environment's, or those
// of dataDir/credentials, created on first use (credFile is then its path).
func devS3Keys(dataDir string) (access, secret, credFile string, err error) {
	if a, s := os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY"); a != "" && s != "" {
		return a, s, "", nil
	}
	credFile = filepath.Join(dataDir, "credentials")
	if data, err := os.ReadFile(credFile); err == nil {
		for _, l := range strings.Split(string(data), "\n") {
			k, v, _ := strings.Cut(l, "=")
			switch strings.TrimSpace(k) {
			case "aws_access_key_id":
				access = strings.TrimSpace(v)
			case "aws_secret_access_key":
				secret = strings.TrimSpace(v)
			}
		}
		if access != "" && secret != "" {
			return access, secret, credFile, nil
		}
	}
	var b [24]byte
	_, _ = rand.Read(b[:])
	access, secret = "dev"+hex.EncodeToString(b[:4]), hex.EncodeToString(b[4:])
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return "", "", "", err
	}
	data := fmt.Sprintf("[default]\naws_access_key_id = %s\naws_secret_access_key = %s\n", access, secret)
	if err := os.WriteFile(credFile, []byte(data), 0o600); err != nil {
		return "", "", "", err
	}
	return access, secret, credFile, nil
}

// waitChan runs wait in the background and closes the channel when it returns.
func waitChan(wait func() error) <-chan struct{} {
	ch := make(chan struct{})
	go func() { _ = wait(); close(ch) }()
	return ch
}
