package upgrade

// upgrade-preflight: what blocks the drains of an upgrade (budgets, pods a
// drain cannot evict, pending nodes).

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// drainBlockers finds what stops kubectl drain (and managed node-pool
// upgrades, which drain the same way) during the rolling upgrade.
func drainBlockers(ctx *check.Context, t check.KubeVersion) []finding.Finding {
	s := ctx.Snapshot
	ix := s.Index()
	var out []finding.Finding
	for i := range s.PodDisruptionBudgets {
		pdb := &s.PodDisruptionBudgets[i]
		why, whyFields := blocksEviction(pdb)
		if why == "" {
			continue
		}
		nodes := map[string]bool{}
		var held finding.Grouper // the budget's pods on nodes still to drain, by node
		if sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector); err == nil && pdb.Spec.Selector != nil && !sel.Empty() {
			for _, p := range ix.PodsMatching(pdb.Namespace, sel) {
				if p.Spec.NodeName != "" && pendingNode(ix, p.Spec.NodeName, t) {
					nodes[p.Spec.NodeName] = true
					held.Add(finding.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: p.Namespace, Name: p.Name},
						finding.Value("spec.nodeName", p.Spec.NodeName))
				}
			}
			if len(nodes) == 0 && len(ix.PodsMatching(pdb.Namespace, sel)) > 0 {
				continue // its pods run only on nodes already at the target
			}
		}
		pools := map[string]int{}
		var pooled []*corev1.Node // the nodes in the input that a pool label names
		for _, n := range slices.Sorted(maps.Keys(nodes)) {
			if node := ix.Node(n); node != nil {
				pools[check.NodePool(node)]++
				if check.NodePool(node) != "" {
					pooled = append(pooled, node)
				}
			}
		}
		var poolText []string
		for _, p := range slices.Sorted(maps.Keys(pools)) {
			name := p
			if name == "" {
				name = "no pool label"
			}
			poolText = append(poolText, fmt.Sprintf("%s: %s", name, check.Plural(pools[p], "node", "nodes")))
		}
		ref := check.Ref("policy/v1", "PodDisruptionBudget", pdb)
		ev := []string{"PodDisruptionBudget " + pdb.Namespace + "/" + pdb.Name + " " + why}
		if len(poolText) > 0 {
			ev = append(ev, "its pods run on "+strings.Join(poolText, ", "))
		}
		fd := finding.Finding{
			Check: "upgrade-preflight", Severity: finding.Medium, Preflight: finding.PreflightDuring,
			Title:   fmt.Sprintf("PodDisruptionBudget %s/%s allows no eviction: draining %s will stall", pdb.Namespace, pdb.Name, check.Plural(len(nodes), "node", "nodes")),
			Message: fmt.Sprintf("The budget allows no voluntary disruption (%s), so the drain of every node running one of its pods waits, and managed node-pool upgrades retry and fail.%s", why, poolSentence(poolText)),
			Objects: []finding.ObjectRef{ref}, Evidence: ev,
			Remediation: "Before the node upgrade, scale the workload so the budget allows at least one disruption, or relax " +
				"minAvailable/maxUnavailable for the upgrade window.",
			Cases: []string{casePDBUpgrade, caseKubeflowPDBs},
		}
		// The fields the verdict rests on: the spec that forbids every
		// eviction, or the status the controller wrote (never a zero of a
		// budget without status).
		fd.AddEvidence(finding.Quote(ref, whyFields...))
		// Where its pods run, and the pool labels of those nodes: what the
		// per-pool count is read from.
		pods := held.Items()
		if len(pods) > check.MaxEvidence {
			pods = pods[:check.MaxEvidence]
			fd.Evidence = append(fd.Evidence, fmt.Sprintf("the budget's pods on the first %d nodes:", check.MaxEvidence))
		}
		fd.AddEvidence(pods...)
		fd.AddEvidence(check.NodeValues(pooled, func(n *corev1.Node) []finding.Field {
			key, value, _ := strings.Cut(check.NodePool(n), "=")
			return []finding.Field{finding.Value("metadata.labels["+key+"]", value)}
		})...)
		out = append(out, fd)
	}
	// Pods a drain refuses: the tests on the pod itself first, the node
	// lookup (a map read and a version parse) only for a pod that would be
	// listed, since most pods have a controller and no emptyDir.
	var bare, local []*snapshot.Pod
	for i := range s.Pods {
		p := &s.Pods[i]
		bareP := len(p.OwnerReferences) == 0
		localP := !bareP && p.Spec.LocalStorage && p.OwnerReferences[0].Kind != "DaemonSet"
		if !bareP && !localP {
			continue
		}
		if p.Spec.NodeName == "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed || p.Annotations["kubernetes.io/config.mirror"] != "" ||
			!pendingNode(ix, p.Spec.NodeName, t) {
			continue
		}
		if bareP {
			bare = append(bare, p)
		} else {
			local = append(local, p)
		}
	}
	if f, ok := podsFinding(bare, "without a controller", "kubectl drain refuses pods no controller will recreate unless --force is given, and then deletes them for good",
		"Give these pods a controller (a Deployment or Job), or delete them before the upgrade."); ok {
		out = append(out, f)
	}
	if f, ok := podsFinding(local, "with emptyDir data", "kubectl drain refuses pods with emptyDir volumes unless --delete-emptydir-data is given, and their data is lost when they move",
		"Make sure the emptyDir data can be lost (caches, scratch space), or move it to a persistent volume, before draining."); ok {
		f.Severity = finding.Low
		out = append(out, f)
	}
	return out
}

// poolSentence is " pool: N nodes; pool: M nodes." or "" for none.
func poolSentence(poolText []string) string {
	if len(poolText) == 0 {
		return ""
	}
	return " " + strings.Join(poolText, "; ") + "."
}

// pendingNode reports whether the named node is still to be drained for
// the target: below it, or not in the input (unknown).
func pendingNode(ix *snapshot.Index, name string, t check.KubeVersion) bool {
	n := ix.Node(name)
	return n == nil || belowTarget(n, t)
}

// blocksEviction says why a budget lets no pod be evicted, or "" when it
// lets one: its spec says so whatever the pods' health (maxUnavailable 0
// or 0%, minAvailable 100% or at least the pods it expects), or its status
// allows no disruption while its pods are healthy (a budget short of
// healthy pods blocks too, but that is the workload's state, which
// pdb-blocks-drain reports).
func blocksEviction(pdb *policyv1.PodDisruptionBudget) (string, []finding.Field) {
	if mu := pdb.Spec.MaxUnavailable; mu != nil &&
		(mu.Type == intstr.Int && mu.IntVal == 0 || mu.Type == intstr.String && mu.StrVal == "0%") {
		return fmt.Sprintf("spec.maxUnavailable=%s: no pod may ever be evicted", mu.String()),
			[]finding.Field{finding.Value("spec.maxUnavailable", mu.String())}
	}
	if ma := pdb.Spec.MinAvailable; ma != nil {
		switch {
		case ma.Type == intstr.String && ma.StrVal == "100%":
			return "spec.minAvailable=100%: no pod may ever be evicted", []finding.Field{finding.Value("spec.minAvailable", "100%")}
		case ma.Type == intstr.Int && pdb.Status.ExpectedPods > 0 && ma.IntVal >= pdb.Status.ExpectedPods:
			return fmt.Sprintf("spec.minAvailable=%d for status.expectedPods=%d: even with every pod healthy no eviction is allowed",
					ma.IntVal, pdb.Status.ExpectedPods),
				[]finding.Field{finding.Value("spec.minAvailable", ma.IntVal), finding.Value("status.expectedPods", pdb.Status.ExpectedPods)}
		}
	}
	if pdb.Status.ExpectedPods > 0 && pdb.Status.DisruptionsAllowed == 0 && pdb.Status.CurrentHealthy >= pdb.Status.DesiredHealthy {
		return fmt.Sprintf("status.disruptionsAllowed=0 with currentHealthy=%d, desiredHealthy=%d", pdb.Status.CurrentHealthy, pdb.Status.DesiredHealthy),
			[]finding.Field{finding.Value("status.disruptionsAllowed", pdb.Status.DisruptionsAllowed),
				finding.Value("status.expectedPods", pdb.Status.ExpectedPods),
				finding.Value("status.currentHealthy", pdb.Status.CurrentHealthy), finding.Value("status.desiredHealthy", pdb.Status.DesiredHealthy)}
	}
	return "", nil
}

func podsFinding(pods []*snapshot.Pod, what, why, fix string) (finding.Finding, bool) {
	if len(pods) == 0 {
		return finding.Finding{}, false
	}
	nodes := map[string]bool{}
	var refs []finding.ObjectRef
	var ev []string
	for i, p := range pods {
		nodes[p.Spec.NodeName] = true
		if i < check.MaxListedObjects {
			refs = append(refs, finding.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: p.Namespace, Name: p.Name})
		}
	}
	var where finding.Grouper
	for _, p := range pods {
		where.Add(finding.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: p.Namespace, Name: p.Name}, finding.Value("spec.nodeName", p.Spec.NodeName))
	}
	ev = append(ev, "kubectl drain reference: "+kubectlDrainDocURL)
	fd := finding.Finding{
		Check: "upgrade-preflight", Severity: finding.Medium, Preflight: finding.PreflightDuring,
		Title: fmt.Sprintf("%s %s %s up the drain of %s", check.Plural(len(pods), "pod", "pods"), what, drainVerb(len(pods), "holds", "hold"),
			check.Plural(len(nodes), "node", "nodes")),
		Message: fmt.Sprintf("%s %s %s on %s: %s.", check.Plural(len(pods), "pod", "pods"), what, drainVerb(len(pods), "runs", "run"),
			check.Plural(len(nodes), "node", "nodes"), why),
		Objects:     refs,
		Evidence:    ev,
		Remediation: fix,
		Cases:       []string{casePDBUpgrade},
	}
	fd.AddEvidence(where.Items()...)
	return fd, true
}

// drainVerb is the verb for n subjects: one or many.
func drainVerb(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// nodesRun is "1 node runs" or "3 nodes run".
func nodesRun(n int) string {
	if n == 1 {
		return "1 node runs"
	}
	return fmt.Sprintf("%d nodes run", n)
}
