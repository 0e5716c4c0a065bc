package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Bad input to publish is one line on stderr and exit 2, before any
// cluster is looked for (the kubeconfig given does not exist).
func TestPublishBadInput(t *testing.T) {
	dir := t.TempDir()
	_, report, _ := runWith(t, fixedApp(nil), "audit", "--demo", "-o", "json")
	cut := filepath.Join(dir, "cut.json")
	if err := os.WriteFile(cut, []byte(report[:len(report)/3]), 0o644); err != nil {
		t.Fatal(err)
	}
	demoReport := filepath.Join(dir, "demo.json")
	if err := os.WriteFile(demoReport, []byte(report), 0o644); err != nil {
		t.Fatal(err)
	}
	snapshotFile := filepath.Join(dir, "snap.json")
	if err := os.WriteFile(snapshotFile, []byte(`{"apiVersion":"kubegap.dev/v1alpha1","kind":"Snapshot"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	noCluster := []string{"--kubeconfig", filepath.Join(dir, "no-such-kubeconfig")}
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"truncated":      {[]string{"publish", "--from", cut}, "truncated"},
		"the demo's":     {[]string{"publish", "--from", demoReport}, "demo cluster"},
		"not a report":   {[]string{"publish", "--from", snapshotFile}, `kind "Snapshot"`},
		"missing file":   {[]string{"publish", "--from", filepath.Join(dir, "none.json")}, "no such file"},
		"no --from":      {[]string{"publish"}, `"from" not set`},
		"unknown format": {[]string{"publish", "--from", cut, "--format", "sarif"}, "unknown report format"},
		"bad --fail-on":  {[]string{"publish", "--from", cut, "--fail-on", "severe"}, "--fail-on"},
	} {
		code, out, errOut := runWith(t, fixedApp(nil), append(tc.args, noCluster...)...)
		if code != ExitError || out != "" || strings.Count(strings.TrimSpace(errOut), "\n") != 0 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q (want one line with %q)", name, code, out, errOut, tc.want)
		}
	}
}

func TestRBACPublisherFlags(t *testing.T) {
	code, out, _ := runWith(t, fixedApp(nil), "rbac", "--publisher", "--format", "openreports")
	if code != ExitOK || !strings.Contains(out, "openreports.io") || strings.Contains(out, "wgpolicyk8s.io\"") {
		t.Errorf("rbac --publisher --format openreports: exit %d\n%s", code, out)
	}
	for _, args := range [][]string{
		{"rbac", "--publisher", "--checks", "version-skew"},
		{"rbac", "--format", "openreports"},
		{"rbac", "--publisher", "--format", "kyverno"},
	} {
		if code, _, errOut := runWith(t, fixedApp(nil), args...); code != ExitError {
			t.Errorf("%v: exit %d, %s", args, code, errOut)
		}
	}
}
