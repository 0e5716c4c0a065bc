package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	gojunit "github.com/joshdk/go-junit"

	"github.com/kubegap/kubegap/internal/config"
)

// docCommands returns the kubegap command lines of docs/ci.md's code
// blocks, as a shell would run them, and the .kubegap.yaml example.
func docCommands(t *testing.T) (cmds []string, kubegapYAML string) {
	t.Helper()
	b, err := os.ReadFile("../../docs/ci.md")
	if err != nil {
		t.Fatal(err)
	}
	inBlock, inConfig := false, false
	var cfg strings.Builder
	for _, line := range strings.Split(string(b), "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") {
			inBlock, inConfig = !inBlock, false
			continue
		}
		if !inBlock {
			continue
		}
		if trimmed == "# .kubegap.yaml" {
			inConfig = true
			continue
		}
		if inConfig {
			cfg.WriteString(line + "\n")
			continue
		}
		for _, prefix := range []string{"- run: ", "run: ", "- "} {
			trimmed = strings.TrimPrefix(trimmed, prefix)
		}
		if strings.HasPrefix(trimmed, "kubegap audit ") || strings.HasPrefix(trimmed, "kubegap snapshot ") {
			cmds = append(cmds, trimmed)
		}
	}
	return cmds, cfg.String()
}

// TestCIDocManifestExamples runs every manifest command of docs/ci.md, as
// written, in a checkout-like directory holding manifests/ and the page's
// .kubegap.yaml, and checks what each writes.
func TestCIDocManifestExamples(t *testing.T) {
	cmds, cfgText := docCommands(t)
	if _, err := config.Parse([]byte(cfgText)); err != nil || !strings.Contains(cfgText, "suppressions:") {
		t.Fatalf("the page's .kubegap.yaml: %v\n%s", err, cfgText)
	}
	repo := t.TempDir()
	copyDir(t, "testdata/manifests", filepath.Join(repo, "manifests"))
	os.WriteFile(filepath.Join(repo, ".kubegap.yaml"), []byte(cfgText), 0o644)
	t.Chdir(repo)
	ran := 0
	for _, cmd := range cmds {
		if !strings.Contains(cmd, "--from manifests/") {
			continue
		}
		ran++
		args := strings.Fields(cmd)[1:]
		code, out, errOut := runWith(t, fixedApp(nil), args...)
		want := ExitFindings
		if strings.Contains(cmd, "--fail-on none") {
			want = ExitOK
		}
		if code != want || out != "" {
			t.Errorf("%s: exit %d (want %d), stdout %.80q, stderr %s", cmd, code, want, out, errOut)
		}
		file := args[indexOf(args, "--output-file")+1]
		written, err := os.ReadFile(file)
		if err != nil {
			t.Errorf("%s: %v", cmd, err)
			continue
		}
		switch filepath.Ext(file) {
		case ".sarif":
			var log struct {
				Version string
				Runs    []struct {
					Results []struct {
						Locations []struct {
							PhysicalLocation struct{ ArtifactLocation struct{ URI string } }
						}
					}
				}
			}
			if err := json.Unmarshal(written, &log); err != nil || log.Version != "2.1.0" || len(log.Runs[0].Results) == 0 ||
				!strings.HasPrefix(log.Runs[0].Results[0].Locations[0].PhysicalLocation.ArtifactLocation.URI, "manifests/") {
				t.Errorf("%s: SARIF %v %.200s", cmd, err, written)
			}
		case ".xml":
			suites, err := gojunit.Ingest(written)
			failed := 0
			for _, s := range suites {
				failed += s.Totals.Failed
			}
			if err != nil || failed == 0 {
				t.Errorf("%s: JUnit %v, %d failed cases", cmd, err, failed)
			}
		case ".md":
			if !strings.HasPrefix(string(written), "## kubegap audit") {
				t.Errorf("%s: markdown %.60q", cmd, written)
			}
		default:
			t.Errorf("%s: no check for %s", cmd, file)
		}
		// The page's config suppresses the log-agent DaemonSet: listed, not gone.
		if !strings.Contains(string(written), "log-agent") && filepath.Ext(file) != ".md" {
			t.Errorf("%s: the suppressed finding is not in the report", cmd)
		}
	}
	if ran < 3 {
		t.Errorf("ran %d manifest commands from docs/ci.md, want the SARIF, Markdown and JUnit ones", ran)
	}
}

func indexOf(args []string, s string) int {
	for i, a := range args {
		if a == s {
			return i
		}
	}
	return -2 // makes args[-1] panic: a doc command without --output-file is a test bug
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
