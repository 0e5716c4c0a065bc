package dns

import (
	"slices"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// eksCoredns loads an eks-coredns-version fixture, read whole, with the
// given API server version.
func eksCoredns(t *testing.T, file, server string) *snapshot.Snapshot {
	t.Helper()
	s := checktest.Complete(checktest.Load(t, "eks-coredns-version/"+file))
	s.Source.ServerVersion = server
	return s
}

func setCorednsTag(s *snapshot.Snapshot, tag string) {
	c := &s.Deployments[0].Spec.Template.Spec.Containers[0]
	repo, _, _ := strings.Cut(c.Image, ":v")
	c.Image = repo + ":" + tag
}

func TestEKSCorednsGap(t *testing.T) {
	fs, _ := run(t, eksCorednsVersionCheck(), eksCoredns(t, "gap.yaml", "v1.20.15-eks-ba74326"))
	if len(fs) != 1 {
		t.Fatalf("%d findings, want 1: %v", len(fs), titles(fs))
	}
	f := fs[0]
	if f.Severity != finding.Medium || !checktest.HasObject(fs, "Deployment", "kube-system", "coredns") ||
		!slices.Contains(f.Cases, caseDFDSCoreDNS) || !strings.Contains(f.Title, "1.8.3") {
		t.Errorf("finding %+v", f)
	}
	// The registry's corpus has no EKS server version, so the items are
	// resolved here.
	if n := checktest.EvidenceTrue(t, fs, "eks-coredns-version/gap.yaml"); n == 0 {
		t.Error("no evidence item quotes the CoreDNS image")
	}
}

func TestEKSCorednsClean(t *testing.T) {
	fs, ctx := run(t, eksCorednsVersionCheck(), eksCoredns(t, "clean.yaml", "v1.20.15-eks-ba74326"))
	if len(fs) != 0 || len(ctx.Notes()) != 0 {
		t.Errorf("findings %v, notes %v", titles(fs), ctx.Notes())
	}
}

// Only the patch behind: low.
func TestEKSCorednsPatchBehindIsLow(t *testing.T) {
	s := eksCoredns(t, "clean.yaml", "v1.29.10-eks-7f9249a")
	setCorednsTag(s, "v1.11.1-eksbuild.9")
	fs, _ := run(t, eksCorednsVersionCheck(), s)
	if len(fs) != 1 || fs[0].Severity != finding.Low {
		t.Errorf("findings %v, want one low", titles(fs))
	}
}

// A control plane newer than the table (its newest row is 1.36, 1.14.3):
// the newest row is a lower bound.
func TestEKSCorednsNewerThanTable(t *testing.T) {
	s := eksCoredns(t, "clean.yaml", "v1.37.1-eks-0a1b2c3")
	setCorednsTag(s, "v1.12.4-eksbuild.24")
	fs, _ := run(t, eksCorednsVersionCheck(), s)
	if len(fs) != 1 || fs[0].Severity != finding.Medium || !strings.Contains(fs[0].Message, "lower bound") {
		t.Errorf("below the lower bound: %v", fs)
	}
	setCorednsTag(s, "v1.14.3-eksbuild.3")
	fs, ctx := run(t, eksCorednsVersionCheck(), s)
	if len(fs) != 0 || ctx.Notes()[ruleEKSCoredns].Reason == "" {
		t.Errorf("at the lower bound: findings %v, notes %v; want none and partial", titles(fs), ctx.Notes())
	}
}

// Plain files without the server version: partial, never pass.
func TestEKSCorednsFilesWithoutServerIsPartial(t *testing.T) {
	fs, ctx := run(t, eksCorednsVersionCheck(), checktest.Load(t, "eks-coredns-version/gap.yaml"))
	if len(fs) != 0 || ctx.Notes()[ruleEKSCoredns].Reason == "" {
		t.Errorf("findings %v, notes %v", titles(fs), ctx.Notes())
	}
}

// Not EKS: nothing to judge.
func TestEKSCorednsOtherClusterQuiet(t *testing.T) {
	s := eksCoredns(t, "gap.yaml", "v1.20.15")
	s.Nodes[0].Labels = nil
	s.Nodes[0].Spec.ProviderID = ""
	fs, ctx := run(t, eksCorednsVersionCheck(), s)
	if len(fs) != 0 || len(ctx.Notes()) != 0 {
		t.Errorf("findings %v, notes %v", titles(fs), ctx.Notes())
	}
}

// DFDS's shape: a 1.14 control plane with CoreDNS rolled back to the
// 1.13-era 1.2.6, while AWS listed 1.6.6 for 1.14.
func TestEKSCorednsDFDS114Rollback(t *testing.T) {
	s := eksCoredns(t, "gap.yaml", "v1.14.9-eks-f459c0")
	setCorednsTag(s, "v1.2.6")
	fs, _ := run(t, eksCorednsVersionCheck(), s)
	if len(fs) != 1 || fs[0].Severity != finding.Medium || !strings.Contains(fs[0].Title, "1.6.6") {
		t.Errorf("findings %v, want one medium naming 1.6.6", fs)
	}
}

// A control plane older than the table: unknown, never pass.
func TestEKSCorednsOlderThanTableIsPartial(t *testing.T) {
	s := eksCoredns(t, "gap.yaml", "v1.12.10-eks-aae39f")
	setCorednsTag(s, "v1.1.3")
	fs, ctx := run(t, eksCorednsVersionCheck(), s)
	if len(fs) != 0 || ctx.Notes()[ruleEKSCoredns].Reason == "" {
		t.Errorf("findings %v, notes %v", titles(fs), ctx.Notes())
	}
}

// TargetEKSCoreDNS serves the same rows to the upgrade preflight: exact
// for a tabled minor, the newest row as a lower bound past the table,
// nothing before it.
func TestTargetEKSCoreDNS(t *testing.T) {
	for _, tt := range []struct {
		minor, coredns string
		ok, exact      bool
	}{
		{"1.35", "1.14.3", true, true},
		{"1.20", "1.8.3", true, true},
		{"1.37", "1.14.3", true, false},
		{"1.12", "", false, false},
	} {
		m, _ := check.ParseKubeVersion(tt.minor)
		r, ok, err := TargetEKSCoreDNS(m)
		if err != nil || ok != tt.ok || r.Exact != tt.exact || r.CoreDNS != tt.coredns || ok && len(r.Sources) == 0 {
			t.Errorf("TargetEKSCoreDNS(%s) = %+v, %v, %v", tt.minor, r, ok, err)
		}
	}
}
