package runtime

import (
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
)

// Before the agent restarts: the cluster-wide policy with DNS rules is
// named beside the agent DaemonSet, medium, citing the case.
func TestCiliumDNSProxyRestartGap(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "cilium-dns-proxy-restart/gap.yaml"))
	fs, _, ok := checktest.Run(t, ciliumDNSProxyRestartCheck(), s)
	if !ok {
		t.Fatal("not evaluated")
	}
	if len(fs) != 1 || fs[0].Severity != finding.Medium || fs[0].Cases[0] != caseCiliumDNSProxy {
		t.Fatalf("findings %v, want one medium citing %s", fs, caseCiliumDNSProxy)
	}
	if !checktest.HasObject(fs, "CiliumClusterwideNetworkPolicy", "", "default-allow-egress-to-kube-dns") ||
		!checktest.HasObject(fs, "DaemonSet", "kube-system", "cilium") {
		t.Errorf("finding does not name the policy and the agent: %v", fs[0].Objects)
	}
	checktest.EvidenceTrue(t, fs, "cilium-dns-proxy-restart/gap.yaml")
}

// Without DNS rules nothing is redirected to the proxy.
func TestCiliumDNSProxyRestartClean(t *testing.T) {
	checktest.Quiet(t, ciliumDNSProxyRestartCheck(), checktest.Complete(checktest.Load(t, "cilium-dns-proxy-restart/clean.yaml")))
}

// Policies with DNS rules but no Cilium agent: nothing to restart.
func TestCiliumDNSProxyRestartNoAgent(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "cilium-dns-proxy-restart/gap.yaml"))
	s.DaemonSets = nil
	fs, _, ok := checktest.Run(t, ciliumDNSProxyRestartCheck(), s)
	if !ok || len(fs) != 0 {
		t.Errorf("no agent: evaluated %v, findings %v; want evaluated, none", ok, fs)
	}
}

// A partial read of the policies leaves the rule partial, never silent.
func TestCiliumDNSProxyRestartPartialPolicies(t *testing.T) {
	s := checktest.Load(t, "cilium-dns-proxy-restart/clean.yaml")
	_, ctx, _ := checktest.Run(t, ciliumDNSProxyRestartCheck(), s)
	if _, ok := ctx.Notes()[ruleCiliumDNSRules]; !ok {
		t.Error("policies not read completely, but the rule is not noted partial")
	}
}
