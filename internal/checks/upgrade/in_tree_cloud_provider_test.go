package upgrade

import (
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
)

const inTreeGap = "in-tree-cloud-provider/gap.yaml"

// With --target-version 1.27 both static pods started with
// --cloud-provider=aws are one high finding; without a target, medium.
func TestInTreeCloudProviderGap(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, inTreeGap))
	v127 := check.KubeVersion{Major: 1, Minor: 27}
	ctx := &check.Context{Snapshot: s, Target: &v127}
	fs, err := inTreeCloudProviderCheck().Run(ctx)
	if err != nil || len(fs) != 1 {
		t.Fatalf("findings %+v, err %v", fs, err)
	}
	f := fs[0]
	if f.Severity != finding.High || f.Cases[0] != caseInTreeAWS1_27 || len(f.Objects) != 2 ||
		!strings.Contains(f.Title, "2 control-plane pods are started with --cloud-provider=aws") || !strings.Contains(f.Title, "upgrade to 1.27") {
		t.Errorf("finding %+v", f)
	}
	if n := checktest.EvidenceTrue(t, fs, inTreeGap); n != 2 {
		t.Errorf("%d evidence items resolved, want 2", n)
	}
	fs, _, ok := checktest.Run(t, inTreeCloudProviderCheck(), s)
	if !ok || len(fs) != 1 || fs[0].Severity != finding.Medium {
		t.Errorf("without a target: %+v", fs)
	}
	// A target before the removal is the same as none.
	v126 := check.KubeVersion{Major: 1, Minor: 26}
	if fs, _ := inTreeCloudProviderCheck().Run(&check.Context{Snapshot: s, Target: &v126}); len(fs) != 1 || fs[0].Severity != finding.Medium {
		t.Errorf("target 1.26: %+v", fs)
	}
}

// --cloud-provider=external: quiet. No static pods, every kube-system pod
// read (a managed control plane): quiet; not all read: partial.
func TestInTreeCloudProviderClean(t *testing.T) {
	checktest.Quiet(t, inTreeCloudProviderCheck(), checktest.Complete(checktest.Load(t, "in-tree-cloud-provider/clean.yaml")))
	s := checktest.Complete(checktest.Load(t, inTreeGap))
	s.Pods = nil
	checktest.Quiet(t, inTreeCloudProviderCheck(), s)
	partial := checktest.Load(t, inTreeGap)
	partial.Pods = nil
	_, ctx, _ := checktest.Run(t, inTreeCloudProviderCheck(), partial)
	if _, ok := ctx.Notes()[ruleInTreeAWS]; !ok {
		t.Error("pods not read completely, but the rule is not noted partial")
	}
}

func TestCloudProviderFlag(t *testing.T) {
	for _, c := range []struct {
		words []string
		want  string
		ok    bool
	}{
		{[]string{"kube-controller-manager", "--cloud-provider=aws"}, "aws", true},
		{[]string{"--cloud-provider", "aws"}, "aws", true},
		{[]string{"--cloud-provider"}, "", false},
		{[]string{"--cloud-config=/etc/aws.conf"}, "", false},
	} {
		if got, ok := cloudProviderFlag(c.words); got != c.want || ok != c.ok {
			t.Errorf("%v: %q %v, want %q %v", c.words, got, ok, c.want, c.ok)
		}
	}
}
