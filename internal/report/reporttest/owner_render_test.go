package reporttest_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/report"
	"github.com/kubegap/kubegap/internal/report/markdown"
	"github.com/kubegap/kubegap/internal/report/sarif"
	"github.com/kubegap/kubegap/internal/report/text"
	"github.com/kubegap/kubegap/internal/snapshot"
)

func ownedReport() *report.Report {
	r := report.New(snapshot.Source{Type: snapshot.SourceFiles}, nil)
	owner := &finding.Owner{Provider: "GKE", Marker: "label addonmanager.kubernetes.io/mode=Reconcile on Deployment/kube-system/kube-dns",
		Advice: "GKE reconciles it; upgrade the cluster", Sources: []string{"https://example.org/addon-manager"}}
	r.Findings = []finding.Finding{
		{Check: "disruption-exposure", Severity: finding.Medium, Title: "kube-dns has no budget", Message: "m", Remediation: "add one",
			Objects: []finding.ObjectRef{{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "kube-system", Name: "kube-dns"}},
			Cases:   []string{"c"}, Owner: owner},
		{Check: "disruption-exposure", Severity: finding.Medium, Title: "api has no budget", Message: "m", Remediation: "add one",
			Objects: []finding.ObjectRef{{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "api"}}, Cases: []string{"c"}},
	}
	r.Finish()
	return r
}

// TestOwnerRendered: each renderer says in words who owns a finding, and
// only that finding; JSON and SARIF carry the owner as data.
func TestOwnerRendered(t *testing.T) {
	const sentence = "managed by GKE: not fixable in the cluster; GKE reconciles it; upgrade the cluster"
	var b bytes.Buffer
	if err := text.Write(&b, ownedReport(), text.Options{Width: 200}); err != nil {
		t.Fatal(err)
	}
	if strings.Count(b.String(), "owner:    "+sentence) != 1 {
		t.Errorf("text: want the owner line once:\n%s", b.String())
	}
	b.Reset()
	if err := markdown.Write(&b, ownedReport()); err != nil {
		t.Fatal(err)
	}
	if strings.Count(b.String(), "**Owner:** ") != 1 || !strings.Contains(b.String(), "managed by GKE: not fixable in the cluster") {
		t.Errorf("markdown: want one owner line:\n%s", b.String())
	}
	b.Reset()
	if err := sarif.Write(&b, ownedReport(), sarif.Options{}); err != nil {
		t.Fatal(err)
	}
	var log struct {
		Runs []struct {
			Results []struct {
				Message    struct{ Text string }
				Properties map[string]any
			}
		}
	}
	if err := json.Unmarshal(b.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	res := log.Runs[0].Results
	if len(res) != 2 {
		t.Fatalf("%d SARIF results", len(res))
	}
	owned := 0
	for _, r := range res {
		if o, ok := r.Properties["owner"].(map[string]any); ok {
			owned++
			if o["provider"] != "GKE" || !strings.Contains(r.Message.Text, "Owner: "+sentence) {
				t.Errorf("SARIF owner %v, message %q", o, r.Message.Text)
			}
		}
	}
	if owned != 1 {
		t.Errorf("%d SARIF results with an owner, want 1", owned)
	}
	js, err := json.Marshal(ownedReport().Findings[1])
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(js), `"owner"`) {
		t.Errorf("a finding without an owner carries one in JSON: %s", js)
	}
}

// TestDropProviderOwned: --ignore-provider-owned leaves the owned finding
// out, counts it, and says so in the counts line.
func TestDropProviderOwned(t *testing.T) {
	r := ownedReport()
	r.DropProviderOwned()
	if len(r.Findings) != 1 || r.Findings[0].Owner != nil || r.ProviderOwnedHidden != 1 || r.Summary.Medium != 1 {
		t.Fatalf("after the drop: %d findings, %d hidden, %d medium", len(r.Findings), r.ProviderOwnedHidden, r.Summary.Medium)
	}
	if !strings.Contains(report.FindingCounts(r), "1 provider-owned not shown (--ignore-provider-owned)") {
		t.Errorf("counts %q", report.FindingCounts(r))
	}
}
