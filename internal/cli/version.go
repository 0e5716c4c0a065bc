package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"
)

// Set at release time by the linker (.goreleaser.yaml):
//
//	-X github.com/kubegap/kubegap/internal/cli.version=v0.1.0
//	-X github.com/kubegap/kubegap/internal/cli.commit=<git sha>
//	-X github.com/kubegap/kubegap/internal/cli.date=<RFC 3339 build time>
//
// Without them (go install, go build), the build info fills in what it
// knows: the module version, and the VCS revision and time of a build from
// a checkout.
var version, commit, date string

// buildInfo is what `kubegap version` prints; -o json and -o yaml print
// it as fields, with the Go version and platform beside it.
type buildInfo struct {
	Version  string `json:"version"`
	Commit   string `json:"commit,omitempty"`
	Date     string `json:"date,omitempty"`
	Modified bool   `json:"modified,omitempty"`
}

// versionOutput is `kubegap version -o json|yaml`, kubectl's
// clientVersion fields in kubegap's own names.
type versionOutput struct {
	buildInfo
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

func readBuildInfo() buildInfo {
	bi, ok := debug.ReadBuildInfo()
	return buildInfoFrom(version, commit, date, bi, ok)
}

// buildInfoFrom prefers the linker's values, then the build info's.
func buildInfoFrom(version, commit, date string, bi *debug.BuildInfo, ok bool) buildInfo {
	out := buildInfo{Version: version, Commit: commit, Date: date}
	if ok && bi != nil {
		if out.Version == "" && bi.Main.Version != "" {
			out.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if out.Commit == "" {
					out.Commit = s.Value
				}
			case "vcs.time":
				if out.Date == "" {
					out.Date = s.Value
				}
			case "vcs.modified":
				out.Modified = s.Value == "true" && commit == ""
			}
		}
	}
	if out.Version == "" {
		out.Version = "(devel)"
	}
	return out
}

func buildVersion() string { return readBuildInfo().Version }

func (b buildInfo) String() string {
	s := "kubegap " + b.Version
	var parts []string
	if b.Commit != "" {
		c := b.Commit
		if len(c) > 12 {
			c = c[:12]
		}
		if b.Modified {
			c += "-dirty"
		}
		parts = append(parts, "commit "+c)
	}
	if b.Date != "" {
		parts = append(parts, "built "+b.Date)
	}
	parts = append(parts, runtime.Version(), runtime.GOOS+"/"+runtime.GOARCH)
	s += " ("
	for i, p := range parts {
		if i > 0 {
			s += ", "
		}
		s += p
	}
	return s + ")"
}

func newVersionCommand(app *App) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print kubegap's version, commit and build date",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			bi := readBuildInfo()
			out := versionOutput{buildInfo: bi, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
			switch output {
			case "", "text":
				_, err := fmt.Fprintln(app.Out, bi)
				return err
			case "json":
				return writeJSON(app.Out, out)
			case "yaml":
				b, err := yaml.Marshal(out)
				if err != nil {
					return err
				}
				_, err = app.Out.Write(b)
				return err
			}
			return withCode(ExitError, fmt.Errorf("unknown output format %q (want text, json or yaml)", output))
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text, json or yaml")
	return cmd
}
