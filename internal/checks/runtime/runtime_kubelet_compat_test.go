package runtime

import (
	"slices"
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

// TestRuntimeKubeletCompatEvidenceGroupsByValue: one end-of-life finding
// for the 1.7 line names five nodes of two version pairs; its evidence
// gives each group its own values, never the first node's for all.
func TestRuntimeKubeletCompatEvidenceGroupsByValue(t *testing.T) {
	s := checktest.Load(t, "runtime-kubelet-compat/mixed-versions.yaml")
	fs, _, _ := checktest.Run(t, runtimeKubeletCompatCheckAt(compatNow), s)
	if len(fs) != 1 || !strings.Contains(fs[0].Title, "1.7 reached end of life") {
		t.Fatalf("findings %+v, want the one end-of-life finding", fs)
	}
	want := []string{
		"2 Nodes (new-a, new-b): status.nodeInfo.containerRuntimeVersion=containerd://1.7.31, status.nodeInfo.kubeletVersion=v1.35.4",
		"3 Nodes (old-a, old-b, old-c): status.nodeInfo.containerRuntimeVersion=containerd://1.7.27-1, status.nodeInfo.kubeletVersion=v1.34.3",
	}
	f := fs[0]
	if len(f.EvidenceItems) != len(want) {
		t.Fatalf("evidence items %v, want %d groups", f.EvidenceItems, len(want))
	}
	for i, w := range want {
		if got := f.EvidenceItems[i].String(); got != w || f.Evidence[i] != w {
			t.Errorf("group %d: item %q, line %q; want %q", i, got, f.Evidence[i], w)
		}
	}
	if !slices.Contains(f.Cases, caseRuncCVE) || slices.Contains(f.Cases, caseCRIv1) ||
		!strings.Contains(strings.Join(f.Evidence, "\n"), "containerd/containerd/blob/main/RELEASES.md") {
		t.Errorf("cases %v, evidence %q: want the release table and the runc case, not the CRI v1 one", f.Cases, f.Evidence)
	}
}
