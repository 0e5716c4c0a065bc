package availability

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// ruleOldPool: the stage of a pool migration before the cordon that took
// mybinder.org down. The new pool runs a newer kubelet minor, the old one
// still holds every ready endpoint of an entry-point Service, and the next
// step of the migration (cordoning the old pool) cuts the Service off.
const ruleOldPool = "endpoints-on-retiring-pool"

// poolMinors is, per node pool (check.NodePool), the oldest and newest
// kubelet minor among its nodes.
type poolMinors struct{ oldest, newest check.KubeVersion }

func nodePoolMinors(s *snapshot.Snapshot) map[string]poolMinors {
	out := map[string]poolMinors{}
	for i := range s.Nodes {
		n := &s.Nodes[i]
		pool := check.NodePool(n)
		v, ok := check.ParseKubeVersion(n.Status.NodeInfo.KubeletVersion)
		if pool == "" || !ok {
			continue
		}
		v.Patch = 0
		pm, seen := out[pool]
		if !seen {
			out[pool] = poolMinors{v, v}
			continue
		}
		if v.Less(pm.oldest) {
			pm.oldest = v
		}
		if pm.newest.Less(v) {
			pm.newest = v
		}
		out[pool] = pm
	}
	return out
}

// retiringPoolFinding reports a LoadBalancer or NodePort Service whose every
// ready endpoint is on schedulable nodes of one pool whose kubelets are all
// an older minor than those of another pool: the sign of a pool migration
// under way, whose last step cordons and drains the old pool. It stays
// quiet when some endpoint's node is unknown or names no pool, or when the
// nodes are already cordoned (endpoints-on-cordoned-nodes reports that).
func retiringPoolFinding(ix *snapshot.Index, svc *corev1.Service, nodes map[string]int, withoutNode int, pools map[string]poolMinors) (finding.Finding, bool) {
	if withoutNode > 0 || (svc.Spec.Type != corev1.ServiceTypeLoadBalancer && svc.Spec.Type != corev1.ServiceTypeNodePort) {
		return finding.Finding{}, false
	}
	pool := ""
	names := make([]string, 0, len(nodes))
	for name := range nodes {
		n := ix.Node(name)
		if n == nil || n.Spec.Unschedulable {
			return finding.Finding{}, false
		}
		p := check.NodePool(n)
		if p == "" || (pool != "" && p != pool) {
			return finding.Finding{}, false
		}
		pool = p
		names = append(names, name)
	}
	old, ok := pools[pool]
	if !ok {
		return finding.Finding{}, false
	}
	newer := ""
	for p, pm := range pools {
		if p != pool && old.newest.Less(pm.oldest) && (newer == "" || p < newer) {
			newer = p
		}
	}
	if newer == "" {
		return finding.Finding{}, false
	}
	sort.Strings(names)
	total := 0
	for _, c := range nodes {
		total += c
	}
	ref := check.Ref("v1", "Service", &svc.ObjectMeta)
	f := finding.Finding{
		Check:    disruptionID,
		Severity: finding.Medium,
		Title: fmt.Sprintf("Every ready endpoint of %s Service %s/%s is on pool %s, older than pool %s",
			svc.Spec.Type, svc.Namespace, svc.Name, pool, newer),
		Message: fmt.Sprintf("All %d ready endpoints of Service %s/%s run on %s of pool %s, whose kubelets are Kubernetes %s while "+
			"pool %s runs %s: a pool migration looks under way, and its next step cordons and drains the old pool. "+
			"Nothing moves these pods to the new pool first, so cordoning the old nodes can cut the Service off at once "+
			"(mybinder.org's ingress went down when the last old nodes were cordoned, before any drain).",
			total, svc.Namespace, svc.Name, check.Plural(len(names), "node", "nodes"), pool, old.newest.MinorString(),
			newer, pools[newer].oldest.MinorString()),
		Objects:     []finding.ObjectRef{ref},
		Evidence:    []string{fmt.Sprintf("ready endpoints by node: %s", endpointText(nodes, names))},
		Remediation: "Before cordoning the old pool, move the backends to the new one (kubectl rollout restart once the old nodes are tainted or cordoned one at a time, or a nodeSelector or affinity for the new pool), check that the load balancer sends traffic to the new nodes, and keep a PodDisruptionBudget so drains wait for replacements.",
		Cases:       []string{caseMybinder},
	}
	var grouped finding.Grouper
	for i, name := range names {
		if i < check.MaxListedObjects {
			f.Objects = append(f.Objects, check.NodeRef(name))
		}
		n := ix.Node(name)
		label, value, _ := strings.Cut(pool, "=")
		grouped.Add(check.NodeRef(name), finding.Value("metadata.labels["+label+"]", value),
			finding.Value("status.nodeInfo.kubeletVersion", n.Status.NodeInfo.KubeletVersion))
	}
	f.AddEvidence(grouped.Items()...)
	return f, true
}
