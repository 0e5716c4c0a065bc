package scheduling

import (
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

func bgpPeerRuleFindings(fs []finding.Finding) map[string]finding.Finding {
	out := map[string]finding.Finding{}
	for _, f := range fs {
		if f.Rule == ruleRemovedBGPPeer {
			out[f.Objects[0].Name] = f
		}
	}
	return out
}

// Before the 1.24 upgrade (Reddit's state): the two route reflector
// peerings that name the master label are medium, and say the upgrade
// takes their nodes away; the rack peering is not reported.
func TestRemovedLabelBGPPeerBeforeUpgrade(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "removed-node-labels/bgp-nodes-1.23.yaml", "removed-node-labels/bgp-peers.yaml"))
	fs, _, ok := checktest.Run(t, removedNodeLabelsCheck(), s)
	if !ok {
		t.Fatal("not evaluated")
	}
	got := bgpPeerRuleFindings(fs)
	for _, name := range []string{"peer-with-route-reflectors", "route-reflector-mesh"} {
		f, ok := got[name]
		if !ok || f.Severity != finding.Medium || !strings.Contains(f.Title, "the upgrade to 1.24") || f.Cases[0] != caseReddit {
			t.Errorf("%s: want a medium finding about the 1.24 upgrade citing Reddit, got %+v", name, f)
		}
	}
	if _, ok := got["tor-rack1"]; ok || len(got) != 2 {
		t.Errorf("want the two master-label peerings only, got %v", got)
	}
}

// After the upgrade no node carries the label: the same peerings are high.
func TestRemovedLabelBGPPeerAfterUpgrade(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "removed-node-labels/bgp-nodes-1.24.yaml", "removed-node-labels/bgp-peers.yaml"))
	fs, _, _ := checktest.Run(t, removedNodeLabelsCheck(), s)
	got := bgpPeerRuleFindings(fs)
	for _, name := range []string{"peer-with-route-reflectors", "route-reflector-mesh"} {
		if f, ok := got[name]; !ok || f.Severity != finding.High || !strings.Contains(f.Title, "which no node carries") {
			t.Errorf("%s: want a high finding, got %+v", name, f)
		}
	}
}

// Peerings on labels the operator owns are quiet with every rule judged;
// without BGPPeers in the input the rule says so instead of passing.
func TestRemovedLabelBGPPeerQuietAndPartial(t *testing.T) {
	checktest.Quiet(t, removedNodeLabelsCheck(), checktest.Complete(checktest.Load(t,
		"removed-node-labels/bgp-nodes-1.23.yaml", "removed-node-labels/bgp-peers-clean.yaml")))
	s := checktest.Without(checktest.Load(t, "removed-node-labels/bgp-nodes-1.23.yaml"), snapshot.CalicoBGPPeers)
	_, ctx, _ := checktest.Run(t, removedNodeLabelsCheck(), s)
	if _, ok := ctx.Notes()[ruleRemovedBGPPeer]; !ok {
		t.Errorf("no partial note without BGPPeers: %v", ctx.Notes())
	}
}

func TestSelectorNamesKey(t *testing.T) {
	const key = "node-role.kubernetes.io/master"
	for sel, want := range map[string]bool{
		"has(node-role.kubernetes.io/master)":                 true,
		"!has(node-role.kubernetes.io/master)":                true,
		"node-role.kubernetes.io/master == 'true'":            true,
		"a == 'b' && node-role.kubernetes.io/master in {'x'}": true,
		"has(node-role.kubernetes.io/master-x)":               false,
		"has(x.node-role.kubernetes.io/master)":               false,
		"has(node-role.kubernetes.io/control-plane)":          false,
		"": false,
	} {
		if got := selectorNamesKey(sel, key); got != want {
			t.Errorf("selectorNamesKey(%q) = %v, want %v", sel, got, want)
		}
	}
}

// With only the worker in an incomplete input, no node shown carries the
// master label, but the control-plane node may be the one missing: before
// 1.24 the peerings are medium (the upgrade removes the label), not high.
func TestRemovedLabelBGPPeerIncompleteNodesBeforeUpgrade(t *testing.T) {
	s := checktest.Load(t, "removed-node-labels/bgp-nodes-1.23.yaml", "removed-node-labels/bgp-peers.yaml")
	nodes := s.Nodes[:0]
	for _, n := range s.Nodes {
		if n.Name == "worker-1" {
			nodes = append(nodes, n)
		}
	}
	s.Nodes = nodes
	fs, _, _ := checktest.Run(t, removedNodeLabelsCheck(), s)
	got := bgpPeerRuleFindings(fs)
	for _, name := range []string{"peer-with-route-reflectors", "route-reflector-mesh"} {
		if f, ok := got[name]; !ok || f.Severity != finding.Medium {
			t.Errorf("%s: want a medium finding, got %+v", name, f)
		}
	}
}

// With calico-node on the etcd datastore an empty BGPPeer list is no pass:
// the rule says the peerings in etcd are not judged.
func TestRemovedLabelBGPPeerEtcdDatastorePartial(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "removed-node-labels/bgp-nodes-1.23.yaml", "removed-node-labels/calico-etcd.yaml"))
	_, ctx, _ := checktest.Run(t, removedNodeLabelsCheck(), s)
	if n, ok := ctx.Notes()[ruleRemovedBGPPeer]; !ok || !strings.Contains(n.Reason, "etcd datastore") {
		t.Errorf("note %+v, want the etcd datastore named", n)
	}
}
