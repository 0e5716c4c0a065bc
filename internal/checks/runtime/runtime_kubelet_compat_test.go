package runtime

import (
	"strings"
	"testing"
	"time"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
)

var compatNow = func() time.Time { return time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC) }

// findingFor returns the findings naming a node, by title.
func findingsFor(fs []finding.Finding, node string) []finding.Finding {
	var out []finding.Finding
	for _, f := range fs {
		for _, o := range f.Objects {
			if o.Kind == "Node" && o.Name == node {
				out = append(out, f)
			}
		}
	}
	return out
}

func TestRuntimeKubeletCompatGap(t *testing.T) {
	s := checktest.Load(t, "runtime-kubelet-compat/gap.yaml")
	fs, _, ok := checktest.Run(t, runtimeKubeletCompatCheckAt(compatNow), s)
	if !ok {
		t.Fatal("not evaluated")
	}
	want := map[string][]string{ // node -> substrings of its findings' titles, with severities
		"worker-old-containerd": {"high:cannot serve kubelet 1.26", "low:containerd 1.5 reached end of life"},
		"worker-16":             {"medium:outside containerd's support matrix", "low:containerd 1.6 reached end of life"},
		"worker-130":            {"low:below the 1.7.13 patch", "low:containerd 1.7 reached end of life"},
		"worker-cri-dockerd":    {"medium:cri-dockerd"},
		"worker-dockershim":     {"medium:blocks the upgrade to 1.24"},
	}
	for node, titles := range want {
		got := findingsFor(fs, node)
		if len(got) != len(titles) {
			t.Errorf("%s: %d findings, want %d: %v", node, len(got), len(titles), got)
			continue
		}
		for _, w := range titles {
			sev, text, _ := strings.Cut(w, ":")
			found := false
			for _, f := range got {
				found = found || f.Severity.String() == sev && strings.Contains(f.Title, text)
			}
			if !found {
				t.Errorf("%s: no %s finding with %q in %v", node, sev, text, got)
			}
		}
	}
}

func TestRuntimeKubeletCompatManagedEndOfLifeIsInfo(t *testing.T) {
	s := checktest.Load(t, "runtime-kubelet-compat/clean.yaml")
	n := &s.Nodes[0]
	n.Status.NodeInfo.ContainerRuntimeVersion = "containerd://1.7.27-1"
	n.Spec.ProviderID = "azure:///subscriptions/x/vm/0"
	n.Labels = map[string]string{"kubernetes.azure.com/cluster": "MC_rg_c", "kubernetes.azure.com/agentpool": "system"}
	fs, _, _ := checktest.Run(t, runtimeKubeletCompatCheckAt(compatNow), s)
	if len(fs) != 1 || fs[0].Severity != finding.Info {
		t.Fatalf("findings %+v, want one info (AKS builds its own containerd)", fs)
	}
}

func TestRuntimeKubeletCompatClean(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "runtime-kubelet-compat/clean.yaml"))
	checktest.Quiet(t, runtimeKubeletCompatCheckAt(compatNow), s)
}

func TestRuntimeKubeletCompatCRIOIsPartial(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "runtime-kubelet-compat/clean.yaml"))
	s.Nodes[0].Status.NodeInfo.ContainerRuntimeVersion = "cri-o://1.33.2"
	_, ctx, _ := checktest.Run(t, runtimeKubeletCompatCheckAt(compatNow), s)
	if _, ok := ctx.Notes()[ruleCRIv1]; !ok {
		t.Error("CRI-O nodes are not judged: the CRI rule must be partial")
	}
}
