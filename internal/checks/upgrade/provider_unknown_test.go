package upgrade

import (
	"slices"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// stripProvider removes what tells a node's managed provider: its
// providerID and labels, as an export that drops them would.
func stripProvider(s *snapshot.Snapshot, name string) {
	for i := range s.Nodes {
		if s.Nodes[i].Name == name {
			s.Nodes[i].Spec.ProviderID = ""
			s.Nodes[i].Labels = nil
		}
	}
}

// TestProviderChangesUnknownProviderIsPartial: an AKS 1.34 cluster whose
// azure-cns switches at 1.35, with one FIPS node whose provider the input
// does not show. The node the rule can place is still reported; the
// other is not silently passed over: the rule is partial, saying why.
func TestProviderChangesUnknownProviderIsPartial(t *testing.T) {
	s := at(checktest.Complete(checktest.Load(t, "aks-134-fips.yaml")), "v1.34.7")
	stripProvider(s, "aks-fips2004-12345678-vmss000001")
	fs, ctx := runWith(t, upgradePreflightCheck(), s, target("1.35"))
	var seed bool
	for _, f := range fs {
		if slices.Contains(f.Cases, caseAzureCNI) && strings.Contains(f.Title, "glibc") {
			seed = true
		}
	}
	if !seed {
		t.Error("the placeable FIPS node's glibc finding is gone")
	}
	if n := ctx.Notes()[ruleProviderChanges]; !strings.Contains(n.Reason, "1 node whose provider the input does not show") {
		t.Errorf("provider-changes note %+v, want partial naming the node of unknown provider", n)
	}
}

// TestProviderChangesMidUpgradeUnknownProvider: the control plane is past
// 1.35 and azure-cns already on the /v2/ image; the only nodes below 1.35
// are of unknown provider. Passing them over would claim the change
// reaches no old node: the rule is partial instead.
func TestProviderChangesMidUpgradeUnknownProvider(t *testing.T) {
	s := at(checktest.Complete(checktest.Load(t, "aks-134-fips.yaml")), "v1.35.2")
	f, err := loadFacts()
	if err != nil {
		t.Fatal(err)
	}
	var v2 string
	for _, pc := range f.ProviderChanges {
		if pc.DaemonSet == "kube-system/azure-cns" {
			v2 = pc.Image
		}
	}
	for i := range s.DaemonSets {
		spec := &s.DaemonSets[i].Spec.Template.Spec
		for j := range spec.InitContainers {
			if s.DaemonSets[i].Name == "azure-cns" && strings.Contains(spec.InitContainers[j].Image, "azure-cni") {
				spec.InitContainers[j].Image = v2
			}
		}
	}
	for i := range s.Nodes {
		if strings.Contains(s.Nodes[i].Name, "system") {
			s.Nodes[i].Status.NodeInfo.KubeletVersion = "v1.35.2"
		} else {
			stripProvider(s, s.Nodes[i].Name)
		}
	}
	_, ctx := runWith(t, upgradePreflightCheck(), s, target("1.35"))
	if n := ctx.Notes()[ruleProviderChanges]; !strings.Contains(n.Reason, "2 nodes below 1.35 whose provider the input does not show") {
		t.Errorf("provider-changes note %+v, want partial for the nodes of unknown provider", n)
	}
}
