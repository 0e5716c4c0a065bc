package runtime

// The kube-proxy-iptables-backend rule of dataplane-node-compat: kube-proxy
// images that only write legacy iptables tables, on nodes whose OS image
// defaults to the nf_tables backend.

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

func backendFindings(ctx *check.Context, facts *dataplaneFacts, kps []kubeProxyDS) []finding.Finding {
	s := ctx.Snapshot
	var out []finding.Finding
	for _, kp := range kps {
		repo, tag, _ := check.ImageParts(kp.image)
		for _, r := range facts.KubeProxyImages {
			if !r.repoRE.MatchString(repo) {
				continue
			}
			v, ok := check.ParseKubeVersion(tag)
			if !ok {
				ctx.Incomplete(ruleIPTablesBackend, "DaemonSet %s/%s image %s carries no version tag kubegap can read",
					kp.ds.Namespace, kp.ds.Name, kp.image)
				continue
			}
			if !v.Less(r.detects) {
				continue
			}
			if f, ok := backendFinding(s, facts, kp, v, r.dataplaneRow, r.detects); ok {
				out = append(out, f)
			}
		}
	}
	return out
}

func backendFinding(s *snapshot.Snapshot, facts *dataplaneFacts, kp kubeProxyDS, v check.KubeVersion,
	r dataplaneRow, detects check.KubeVersion) (finding.Finding, bool) {
	var hit []*corev1.Node
	families := map[string]bool{}
	sources := append([]string{}, r.Sources...)
	for _, n := range nodesOf(s, kp) {
		for _, os := range facts.NFTDefault {
			if !os.osRE.MatchString(n.Status.NodeInfo.OSImage) {
				continue
			}
			hit = append(hit, n)
			if !families[os.Name] {
				families[os.Name] = true
				sources = append(sources, os.Sources...)
			}
			break
		}
	}
	if len(hit) == 0 {
		return finding.Finding{}, false
	}
	names := make([]string, 0, len(families))
	for n := range families {
		names = append(names, n)
	}
	sort.Strings(names)
	refs, more := check.NodeRefs(hit)
	objs := append([]finding.ObjectRef{check.Ref("apps/v1", "DaemonSet", kp.ds)}, refs...)
	f := finding.Finding{
		Check: dataplaneID, Severity: finding.High, Cases: []string{r.Case}, Objects: objs,
		Title: fmt.Sprintf("kube-proxy %s, older than %s, programs %s whose iptables defaults to nf_tables",
			v.String(), detects.MinorString(), check.Plural(len(hit), "node", "nodes")),
		Message: strings.TrimSpace(r.Note) + fmt.Sprintf(" These nodes run %s. A host switched to iptables-legacy "+
			"(update-alternatives) is not affected, and the API does not show that.", strings.Join(names, ", ")) + check.MoreText(more),
		Evidence: []string{fmt.Sprintf("nf_tables by default on %s; reviewed %s; sources: %s", strings.Join(names, ", "), r.Reviewed, strings.Join(sources, ", "))},
		Remediation: "Upgrade kube-proxy to 1.17 or later, whose image detects the host's iptables mode, or switch these " +
			"hosts to iptables-legacy (iptables, ip6tables, arptables, ebtables) before kube-proxy starts; introduce a new " +
			"node OS in a canary pool first.",
	}
	withImage(&f, kp.ds, kp.image)
	f.AddEvidence(check.NodeValues(hit, nodeField("status.nodeInfo.osImage", func(n *corev1.Node) string { return n.Status.NodeInfo.OSImage }))...)
	return f, true
}
