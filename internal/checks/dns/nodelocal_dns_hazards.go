package dns

import (
	"encoding/json"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

const (
	nodelocalID      = "nodelocal-dns-hazards"
	ruleCalicoPolicy = "calico-ingress-policies"
	ruleCacheCrashes = "cache-restarts"
	caseNotrack      = "nodelocaldns-notrack-breaks-calico-policy-2021"
	caseRuleGrowth   = "nodelocaldns-iptables-rule-growth-and-teardown-2023"

	// maxCacheRestarts: more restarts than this on one node-local-dns pod
	// is reported. Policy: a cache that restarts now and then is normal;
	// each unclean stop may leave its rules behind.
	maxCacheRestarts = 5
)

// nodelocalDNSHazardsCheck finds NodeLocal DNSCache deployments in the
// failure modes the cases show.
func nodelocalDNSHazardsCheck() check.Check {
	return check.Check{
		ID:       nodelocalID,
		Title:    "NodeLocal DNSCache with known failure modes",
		Severity: finding.High,
		Description: "NodeLocal DNSCache (the node-local-dns DaemonSet, image k8s-dns-node-cache) answers every pod's " +
			"DNS on its node through iptables rules it installs itself, which makes it a per-node single point of " +
			"failure with two reported hazards. calico-ingress-policies (medium): its NOTRACK rules take DNS out of " +
			"connection tracking, and Calico, which enforces NetworkPolicy statefully, was reported (Calico v3.14, " +
			"kubernetes#98758) to drop the DNS replies of pods whose policies restrict ingress; the finding lists the " +
			"policies that restrict ingress without allowing all of it, to be verified. cache-restarts: node-local-dns " +
			"pods OOM-killed (high) or restarted more than 5 times (medium, our threshold): only a clean stop removes " +
			"its rules, so a killed cache can leave the node's DNS pointed at nothing. Cannot see: the node-cache's " +
			"iptables version, Calico's own GlobalNetworkPolicies (not read).",
		Reads: append(check.Needs(snapshot.DaemonSets), check.Optional(snapshot.Pods), check.Optional(snapshot.NetworkPolicies),
			check.Optional(snapshot.CustomResourceDefinitions)),
		Rules: []check.Rule{
			{ID: ruleCalicoPolicy, Summary: "NodeLocal DNSCache on Calico with NetworkPolicies that restrict ingress",
				Needs: []snapshot.Resource{snapshot.DaemonSets, snapshot.NetworkPolicies}},
			{ID: ruleCacheCrashes, Summary: "node-local-dns pods OOM-killed or restarting",
				Needs: []snapshot.Resource{snapshot.DaemonSets, snapshot.Pods}},
		},
		Cases: check.Cite(check.Detects(caseNotrack), check.Prevents(caseRuleGrowth)),
		Run:   runNodelocalDNSHazards,
	}
}

func nodelocalDaemonSet(s *snapshot.Snapshot) *appsv1.DaemonSet {
	for i := range s.DaemonSets {
		d := &s.DaemonSets[i]
		if d.Name == "node-local-dns" {
			return d
		}
		for _, c := range d.Spec.Template.Spec.Containers {
			if check.ImageName(c.Image) == "k8s-dns-node-cache" {
				return d
			}
		}
	}
	return nil
}

// calicoEvidence is why the cluster reads as running Calico: the image of
// a calico/node container, or a Calico CRD's name; nil when neither.
func calicoEvidence(s *snapshot.Snapshot) *finding.EvidenceItem {
	for i := range s.DaemonSets {
		d := &s.DaemonSets[i]
		for _, c := range d.Spec.Template.Spec.Containers {
			repo, _, _ := check.ImageParts(c.Image)
			if strings.HasSuffix(repo, "calico/node") {
				it := finding.Quote(check.Ref("apps/v1", "DaemonSet", d),
					finding.Value(check.ContainerField("DaemonSet", "", c.Name, "image"), c.Image))
				return &it
			}
		}
	}
	for _, u := range s.CustomObjects(snapshot.CustomResourceDefinitions) {
		if strings.HasSuffix(u.GetName(), ".crd.projectcalico.org") {
			it := finding.Quote(finding.ObjectRef{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: u.GetName()},
				finding.Value("metadata.name", u.GetName()))
			return &it
		}
	}
	return nil
}

// nodelocalEvidence is why the DaemonSet reads as NodeLocal DNSCache: its
// node-cache container's image, else its name.
func nodelocalEvidence(ds *appsv1.DaemonSet, ref finding.ObjectRef) finding.EvidenceItem {
	for _, c := range ds.Spec.Template.Spec.Containers {
		if check.ImageName(c.Image) == "k8s-dns-node-cache" {
			return finding.Quote(ref, finding.Value(check.ContainerField("DaemonSet", "", c.Name, "image"), c.Image))
		}
	}
	return finding.Quote(ref, finding.Value("metadata.name", ds.Name))
}

// policyTypesField is a policy's spec.policyTypes as kubectl prints the
// list (JSON), or absent when unset (Ingress is then implied).
func policyTypesField(p *networkingv1.NetworkPolicy) finding.Field {
	const path = "spec.policyTypes"
	if len(p.Spec.PolicyTypes) == 0 {
		return finding.Absent(path)
	}
	b, err := json.Marshal(p.Spec.PolicyTypes)
	if err != nil {
		return finding.Absent(path)
	}
	return finding.Value(path, string(b))
}

// restrictsIngress reports whether a policy limits ingress to its pods:
// Ingress among its types (the default when policyTypes is unset) and no
// rule that allows everything (no from and no ports).
func restrictsIngress(p *networkingv1.NetworkPolicy) bool {
	ingress := len(p.Spec.PolicyTypes) == 0
	for _, t := range p.Spec.PolicyTypes {
		ingress = ingress || t == networkingv1.PolicyTypeIngress
	}
	if !ingress {
		return false
	}
	for _, r := range p.Spec.Ingress {
		if len(r.From) == 0 && len(r.Ports) == 0 {
			return false
		}
	}
	return true
}

func runNodelocalDNSHazards(ctx *check.Context) ([]finding.Finding, error) {
	s := ctx.Snapshot
	ds := nodelocalDaemonSet(s)
	if ds == nil {
		if ctx.Complete(snapshot.DaemonSets) {
			return nil, nil // known absent: no cache, none of its hazards
		}
		return nil, check.NotEvaluated("no NodeLocal DNSCache DaemonSet in the input")
	}
	dsRef := check.Ref("apps/v1", "DaemonSet", ds)
	var out []finding.Finding
	if calico := calicoEvidence(s); calico != nil {
		var names []string
		refs := []finding.ObjectRef{dsRef}
		var types finding.Grouper
		for i := range s.NetworkPolicies {
			p := &s.NetworkPolicies[i]
			if restrictsIngress(p) {
				names = append(names, p.Namespace+"/"+p.Name)
				ref := check.Ref("networking.k8s.io/v1", "NetworkPolicy", p)
				if len(refs) <= check.MaxListedObjects {
					refs = append(refs, ref)
				}
				types.Add(ref, policyTypesField(p))
			}
		}
		if len(names) > 0 {
			f := finding.Finding{
				Check:    nodelocalID,
				Severity: finding.Medium,
				Title:    fmt.Sprintf("NodeLocal DNSCache runs with Calico and %s that restrict ingress", check.Plural(len(names), "NetworkPolicy", "NetworkPolicies")),
				Message: fmt.Sprintf("DaemonSet %s/%s adds NOTRACK rules so DNS packets skip connection tracking; Calico enforces "+
					"policy through connection tracking and was reported to drop the untracked DNS replies to pods whose "+
					"policies allow DNS out but restrict ingress. The pods selected by these %d policies may fail every lookup.",
					ds.Namespace, ds.Name, len(names)),
				Objects: refs,
				Remediation: "Resolve a name from a pod under each policy (kubectl exec POD -- nslookup kubernetes.default); " +
					"where replies are dropped, allow the DNS replies in those policies or follow your Calico version's " +
					"guidance for NodeLocal DNSCache before relying on it.",
				Cases: []string{caseNotrack},
			}
			// Calico, the cache, and the policies' types (grouped): each
			// policy also has no ingress rule open to all, which is what
			// restrictsIngress read beside the types.
			f.AddEvidence(*calico, nodelocalEvidence(ds, dsRef))
			f.AddEvidence(types.Items()...)
			f.Evidence = append(f.Evidence, "policies restricting ingress (Ingress among their types, no rule allowing all): "+check.ListText(names, 10))
			out = append(out, f)
		}
	}
	out = append(out, crashFindings(ctx, ds, dsRef)...)
	return out, nil
}

func crashFindings(ctx *check.Context, ds *appsv1.DaemonSet, dsRef finding.ObjectRef) []finding.Finding {
	var oom, restarts []finding.EvidenceItem
	refs := []finding.ObjectRef{dsRef}
	for _, p := range ctx.Snapshot.Index().PodsControlledBy(snapshot.IDOf("DaemonSet", &ds.ObjectMeta)) {
		bad := false
		ref := finding.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: p.Namespace, Name: p.Name}
		for _, c := range p.Status.ContainerStatuses {
			status := "status.containerStatuses[name=" + c.Name + "]."
			fields := []finding.Field{finding.Value("spec.nodeName", p.Spec.NodeName), finding.Value(status+"restartCount", c.RestartCount)}
			if t := c.LastTerminationState.Terminated; t != nil && t.Reason == "OOMKilled" {
				oom = append(oom, finding.Quote(ref, append(fields, finding.Value(status+"lastState.terminated.reason", t.Reason))...))
				bad = true
			} else if c.RestartCount > maxCacheRestarts {
				restarts = append(restarts, finding.Quote(ref, fields...))
				bad = true
			}
		}
		if bad && len(refs) <= check.MaxListedObjects {
			refs = append(refs, ref)
		}
	}
	if len(oom) == 0 && len(restarts) == 0 {
		if !ctx.CompleteIn(snapshot.Pods, ds.Namespace) {
			ctx.Incomplete(ruleCacheCrashes, "the node-local-dns pods are not all in the input")
		}
		return nil
	}
	sev := finding.Medium
	title := fmt.Sprintf("node-local-dns pods restart repeatedly (%d)", len(restarts))
	if len(oom) > 0 {
		sev = finding.High
		title = fmt.Sprintf("node-local-dns pods were OOM-killed (%d)", len(oom))
	}
	f := finding.Finding{
		Check:    nodelocalID,
		Severity: sev,
		Title:    title,
		Message: fmt.Sprintf("Pods of DaemonSet %s/%s were killed or restarted repeatedly. NodeLocal DNSCache removes its "+
			"iptables rules and interface only when it stops cleanly, so each OOM kill or crash can leave the pods of that node "+
			"sending DNS to a listener that is gone; some node-cache builds also re-added their rules on every sync until node load climbed.",
			ds.Namespace, ds.Name),
		Objects:     refs,
		Remediation: "Raise the node-local-dns memory limit, upgrade the node-cache image, and check the affected nodes' iptables rules (iptables-save | grep -c NODE-LOCAL or the cache's chain) for leftovers or duplicates.",
		Cases:       []string{caseRuleGrowth},
	}
	ev := append(oom, restarts...)
	if len(ev) > check.MaxEvidence {
		f.AddEvidence(ev[:check.MaxEvidence]...)
		f.Evidence = append(f.Evidence, fmt.Sprintf("and %d more", len(ev)-check.MaxEvidence))
	} else {
		f.AddEvidence(ev...)
	}
	return []finding.Finding{f}
}
