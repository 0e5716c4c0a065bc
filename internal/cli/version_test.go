package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func TestBuildInfoFrom(t *testing.T) {
	bi := &debug.BuildInfo{Main: debug.Module{Version: "v0.3.1"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.time", Value: "2026-11-30T10:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	for _, c := range []struct {
		name                  string
		version, commit, date string
		bi                    *debug.BuildInfo
		want                  string
	}{
		{"release (ldflags)", "v1.0.0", "abc", "2026-12-01T00:00:00Z", bi, "kubegap v1.0.0 (commit abc, built 2026-12-01T00:00:00Z, "},
		{"go install", "", "", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.3.1"}}, "kubegap v0.3.1 (go"},
		{"build from a checkout", "", "", "", bi, "kubegap v0.3.1 (commit 0123456789ab-dirty, built 2026-11-30T10:00:00Z, "},
		{"nothing known", "", "", "", nil, "kubegap (devel) (go"},
	} {
		if got := buildInfoFrom(c.version, c.commit, c.date, c.bi, c.bi != nil).String(); !strings.HasPrefix(got, c.want) {
			t.Errorf("%s: %q, want prefix %q", c.name, got, c.want)
		}
	}
}

// TestReleaseLdflagsStampTheBinary builds kubegap with the -X flags that
// .goreleaser.yaml passes and runs `kubegap version`.
func TestReleaseLdflagsStampTheBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	cfg, err := os.ReadFile("../../.goreleaser.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const pkg = "github.com/kubegap/kubegap/internal/cli"
	for _, v := range []string{"version", "commit", "date"} {
		if !strings.Contains(string(cfg), "-X "+pkg+"."+v+"=") {
			t.Errorf(".goreleaser.yaml does not stamp %s", v)
		}
	}
	bin := filepath.Join(t.TempDir(), "kubegap")
	ldflags := "-s -w -X " + pkg + ".version=v9.8.7 -X " + pkg + ".commit=feedface -X " + pkg + ".date=2026-12-01T02:00:00Z"
	build := exec.Command("go", "build", "-trimpath", "-ldflags", ldflags, "-o", bin, "../../cmd/kubegap")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil || !strings.HasPrefix(string(out), "kubegap v9.8.7 (commit feedface, built 2026-12-01T02:00:00Z, go") {
		t.Errorf("version: %v %q", err, out)
	}
	// Installed as kubectl-gap, it is a kubectl plugin.
	plugin := filepath.Join(filepath.Dir(bin), "kubectl-gap")
	if err := os.Link(bin, plugin); err != nil {
		t.Fatal(err)
	}
	out, _ = exec.Command(plugin, "--help").Output()
	if !strings.Contains(string(out), "kubectl gap [command]") {
		t.Errorf("kubectl-gap --help:\n%s", out)
	}
}

// TestVersionOutputFormats: -o json and -o yaml print the build info as
// fields; another format is exit 2.
func TestVersionOutputFormats(t *testing.T) {
	code, out, _ := runKubegap(t, "version", "-o", "json")
	var got versionOutput
	if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil || got.Version == "" || got.GoVersion != runtime.Version() || got.Platform != runtime.GOOS+"/"+runtime.GOARCH {
		t.Errorf("version -o json: exit %d, %v, %+v\n%s", code, err, got, out)
	}
	code, out, _ = runKubegap(t, "version", "-o", "yaml")
	var y versionOutput
	if err := yaml.UnmarshalStrict([]byte(out), &y); code != 0 || err != nil || y != got {
		t.Errorf("version -o yaml: exit %d, %v, %+v, want %+v", code, err, y, got)
	}
	if code, _, errOut := runKubegap(t, "version", "-o", "xml"); code != ExitError || !strings.Contains(errOut, `unknown output format "xml"`) {
		t.Errorf("version -o xml: exit %d %q", code, errOut)
	}
}
