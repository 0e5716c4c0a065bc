package cli

import (
	"os"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/audit"
	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/rbacgen"
)

// TestRBACCommand: with no flag the command prints deploy/rbac.yaml; a
// selection narrows it, by prefix as --checks takes IDs; bad input is one
// line and exit 2.
func TestRBACCommand(t *testing.T) {
	code, out, errOut := runKubegap(t, "rbac")
	file, err := os.ReadFile("../../deploy/rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if code != 0 || out != string(file) {
		t.Errorf("kubegap rbac: exit %d, stderr %q; output differs from deploy/rbac.yaml", code, errOut)
	}
	c, _ := checks.Lookup("image-pull-always")
	want := rbacgen.YAML(audit.Resources([]check.Check{c}), rbacgen.Options{Subject: rbacgen.Subject{Kind: "User", Name: "alice@example.com"}})
	if code, out, errOut := runKubegap(t, "rbac", "--checks", "IMAGE-PULL", "--user", "alice@example.com"); code != 0 || out != want {
		t.Errorf("rbac --checks IMAGE-PULL --user: exit %d %q\n%s\nwant\n%s", code, errOut, out, want)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"rbac", "--checks", "verison-skew"}, "did you mean version-skew?"},
		{[]string{"rbac", "--service-account", "nonamespace"}, `--service-account "nonamespace": want NAMESPACE/NAME`},
		{[]string{"rbac", "--user", "a", "--group", "b"}, "give one"},
		{[]string{"rbac", "-n", "Not_A_Namespace"}, "Not_A_Namespace"},
	} {
		code, out, errOut := runKubegap(t, tc.args...)
		if code != ExitError || out != "" || strings.Count(strings.TrimRight(errOut, "\n"), "\n") != 0 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", tc.args, code, out, errOut, tc.want)
		}
	}
}

// TestConfigChecksTakePrefixes: the config file's checks and skip-checks
// take IDs as the flags do, in any case or by a unique prefix.
func TestConfigChecksTakePrefixes(t *testing.T) {
	cfg := t.TempDir() + "/kubegap.yaml"
	if err := os.WriteFile(cfg, []byte("checks: [VERSION-SK, host-binary]\nskip-checks: [Host-Bin]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runKubegap(t, "audit", "--demo", "--config", cfg, "-o", "json")
	if code == ExitError {
		t.Fatalf("exit 2: %s", errOut)
	}
	if !strings.Contains(out, `"id": "version-skew"`) || strings.Contains(out, `"id": "host-binary-glibc"`) || strings.Contains(out, `"id": "image-pull-always"`) {
		t.Errorf("config checks [VERSION-SK, host-binary] minus [Host-Bin] did not run version-skew alone:\n%.2000s", out)
	}
}
