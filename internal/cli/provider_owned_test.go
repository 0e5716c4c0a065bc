package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/report"
)

const eksFixture = "../checks/testdata/managed/eks"

// TestAuditProviderOwned: on the fresh EKS fixture the medium finding on
// AWS's eks-pod-identity-agent is shown with its owner and fails
// --fail-on medium by default; --ignore-provider-owned (or the config key)
// leaves it out, counts it, and the remaining medium (the gp2 StorageClass,
// the user's to fix) still fails; at --fail-on high nothing fails either way.
func TestAuditProviderOwned(t *testing.T) {
	code, out, _ := runKubegap(t, "audit", "--from", eksFixture, "-q", "-o", "json", "--fail-on", "medium")
	if code != ExitFindings {
		t.Fatalf("exit %d, want 1", code)
	}
	var rep report.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	owned := 0
	for _, f := range rep.Findings {
		if f.Owner != nil {
			owned++
			if f.Owner.Provider != "EKS" || f.Owner.Advice == "" || len(f.Owner.Sources) == 0 {
				t.Errorf("%s: owner %+v", f.Title, f.Owner)
			}
		}
	}
	if owned == 0 || !strings.Contains(out, `"owner": {`) {
		t.Fatalf("no provider-owned finding in the JSON report on EKS")
	}

	_, text, _ := runKubegap(t, "audit", "--from", eksFixture, "-q", "--checks", "image-pull-always")
	if !strings.Contains(text, "owner:    managed by EKS: not fixable in the cluster;") {
		t.Errorf("text report lacks the owner line:\n%s", text)
	}

	dir := t.TempDir()
	cfg := filepath.Join(dir, "kubegap.yaml")
	if err := os.WriteFile(cfg, []byte("ignore-provider-owned: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"--ignore-provider-owned"}, {"--config", cfg}} {
		code, out, _ := runKubegap(t, append([]string{"audit", "--from", eksFixture, "-q", "-o", "json", "--fail-on", "medium"}, args...)...)
		var rep report.Report
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		for _, f := range rep.Findings {
			if f.Owner != nil {
				t.Errorf("%v: provider-owned finding %q still listed", args, f.Title)
			}
		}
		if rep.ProviderOwnedHidden != owned {
			t.Errorf("%v: providerOwnedHidden %d, want %d", args, rep.ProviderOwnedHidden, owned)
		}
		if code != ExitFindings {
			t.Errorf("%v: exit %d, want 1 for the gp2 StorageClass, which is the user's", args, code)
		}
	}
	// The flag wins over the config file.
	if err := os.WriteFile(cfg, []byte("ignore-provider-owned: false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, out, _ = runKubegap(t, "audit", "--from", eksFixture, "-q", "-o", "json", "--config", cfg, "--ignore-provider-owned")
	if strings.Contains(out, `"owner": {`) {
		t.Error("--ignore-provider-owned did not win over ignore-provider-owned: false in the config")
	}
	// Only provider-owned mediums: the flag turns a failing run green.
	args := []string{"audit", "--from", eksFixture, "-q", "--checks", "image-pull-always", "--fail-on", "medium"}
	if code, _, _ := runKubegap(t, args...); code != ExitFindings {
		t.Errorf("AWS's pull policy alone: exit %d, want 1 by default", code)
	}
	if code, out, _ := runKubegap(t, append(args, "--ignore-provider-owned")...); code != ExitOK || !strings.Contains(strings.Join(strings.Fields(out), " "), "1 provider-owned not shown") {
		t.Errorf("AWS's pull policy alone with --ignore-provider-owned: exit %d, want 0 and the count:\n%s", code, out)
	}
}

// TestBaselineIgnoreProviderOwned: with --ignore-provider-owned, a previous
// report's provider-owned finding is not called resolved, whether the
// previous report marked it or predates the owner field.
func TestBaselineIgnoreProviderOwned(t *testing.T) {
	_, prev, _ := runKubegap(t, "audit", "--from", eksFixture, "-q", "-o", "json", "--checks", "image-pull-always")
	dir := t.TempDir()
	marked := filepath.Join(dir, "marked.json")
	if err := os.WriteFile(marked, []byte(prev), 0o644); err != nil {
		t.Fatal(err)
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(prev), &rep); err != nil {
		t.Fatal(err)
	}
	for _, f := range rep["findings"].([]any) {
		delete(f.(map[string]any), "owner")
	}
	old, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	unmarked := filepath.Join(dir, "unmarked.json")
	if err := os.WriteFile(unmarked, old, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, base := range []string{marked, unmarked} {
		_, out, _ := runKubegap(t, "audit", "--from", eksFixture, "-q", "-o", "json", "--checks", "image-pull-always",
			"--ignore-provider-owned", "--baseline", base)
		var got report.Report
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatal(err)
		}
		if got.Baseline == nil || len(got.Baseline.Resolved) != 0 {
			t.Errorf("%s: baseline %+v, want nothing resolved", filepath.Base(base), got.Baseline)
		}
	}
}
