package upgrade

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

const (
	inTreeCloudID     = "in-tree-cloud-provider"
	ruleInTreeAWS     = "in-tree-provider-at-target"
	caseInTreeAWS1_27 = "aws-in-tree-cloud-provider-removed-kubernetes-1-27-2023-2024"
)

// inTreeProviders are the in-tree cloud providers whose removal a case
// backs, with the minor that removed them: AWS in 1.27 (kubernetes pull
// request 115838; the note added to CHANGELOG-1.27's Urgent Upgrade Notes
// by pull request 118899).
var inTreeProviders = map[string]check.KubeVersion{
	"aws": {Major: 1, Minor: 27},
}

// inTreeCloudProviderCheck finds control-plane static pods started with
// --cloud-provider naming an in-tree provider that a later minor removes:
// after that upgrade the component no longer knows the provider.
func inTreeCloudProviderCheck() check.Check {
	return check.Check{
		ID:       inTreeCloudID,
		Title:    "Control plane started with an in-tree cloud provider that a Kubernetes upgrade removes",
		Severity: finding.High,
		Description: "Reads the command and arguments of the kube-system static pods of kube-controller-manager and " +
			"kube-apiserver (the mirror pods of a self-managed control plane: kubeadm writes --cloud-provider into their " +
			"manifests, RKE2 passes its cloud-provider-name to them). --cloud-provider=aws names the in-tree AWS provider, " +
			"which Kubernetes 1.27 removed (kubernetes/kubernetes pull request 115838); a 1.27 RKE2 server so configured " +
			"did not start, and a Rancher cluster with it could not be upgraded. High when --target-version is 1.27 or " +
			"later, medium otherwise (the next such upgrade breaks). Managed control planes show no static pods and are " +
			"not judged. Cannot see: the kubelet's own --cloud-provider flag, which is not in the API.",
		Reads: check.Needs(snapshot.Pods),
		Rules: []check.Rule{
			{ID: ruleInTreeAWS, Summary: "no control-plane component is started with an in-tree cloud provider the target (or a later minor) removes",
				Needs: []snapshot.Resource{snapshot.Pods}},
		},
		Cases: check.Prevents(caseInTreeAWS1_27),
		Run:   runInTreeCloudProvider,
	}
}

// cloudProviderFlag returns the value of --cloud-provider in a container's
// command and arguments, written as one word or two.
func cloudProviderFlag(words []string) (string, bool) {
	for i, w := range words {
		if v, ok := strings.CutPrefix(w, "--cloud-provider="); ok {
			return v, true
		}
		if w == "--cloud-provider" && i+1 < len(words) {
			return words[i+1], true
		}
	}
	return "", false
}

func runInTreeCloudProvider(ctx *check.Context) ([]finding.Finding, error) {
	s := ctx.Snapshot
	type hit struct {
		ref       finding.ObjectRef
		container string
		field     string
		words     []string
		provider  string
	}
	var hits []hit
	seen := false
	for i := range s.Pods {
		p := &s.Pods[i]
		if !snapshot.IsControlPlaneStaticPod(p.Namespace, p.Annotations) {
			continue
		}
		for _, c := range p.Spec.Containers {
			if name := check.ImageName(c.Image); name != "kube-controller-manager" && name != "kube-apiserver" {
				continue
			}
			seen = true
			for _, part := range []struct {
				field string
				words []string
			}{{"command", c.Command}, {"args", c.Args}} {
				v, ok := cloudProviderFlag(part.words)
				if _, inTree := inTreeProviders[v]; ok && inTree {
					hits = append(hits, hit{finding.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: p.Namespace, Name: p.Name}, c.Name, part.field, part.words, v})
				}
			}
		}
	}
	if len(hits) == 0 {
		if !seen && !ctx.CompleteIn(snapshot.Pods, "kube-system") {
			ctx.Incomplete(ruleInTreeAWS, "not every kube-system pod was read: control-plane static pods may be missing")
		}
		return nil, nil
	}
	byProvider := map[string][]hit{}
	for _, h := range hits {
		byProvider[h.provider] = append(byProvider[h.provider], h)
	}
	var out []finding.Finding
	for _, prov := range slices.Sorted(maps.Keys(byProvider)) {
		group, removed := byProvider[prov], inTreeProviders[prov]
		var refs []finding.ObjectRef
		for _, h := range group {
			if !slices.Contains(refs, h.ref) {
				refs = append(refs, h.ref)
			}
		}
		f := finding.Finding{
			Check: inTreeCloudID, Rule: ruleInTreeAWS, Cases: []string{caseInTreeAWS1_27}, Objects: refs,
			Remediation: fmt.Sprintf("Before upgrading to %s, migrate to the external cloud-controller-manager "+
				"(kubernetes/cloud-provider-aws) and the EBS CSI driver, following your distribution's in-tree to out-of-tree "+
				"procedure (Rancher documents one), and remove --cloud-provider=%s from the control plane and the kubelets.",
				removed.MinorString(), prov),
		}
		pods := "1 control-plane pod is"
		if len(refs) > 1 {
			pods = fmt.Sprintf("%d control-plane pods are", len(refs))
		}
		what := fmt.Sprintf("%s started with --cloud-provider=%s, the in-tree provider Kubernetes %s removed",
			pods, prov, removed.MinorString())
		if ctx.Target != nil && !ctx.Target.Less(removed) {
			f.Severity = finding.High
			f.Title = fmt.Sprintf("%s: the upgrade to %s removes it", what, ctx.Target.MinorString())
			f.Message = fmt.Sprintf("%s. From %s the components no longer know this provider: after the upgrade to %s they "+
				"fail instead of running (an RKE2 1.27.1 server with cloud-provider-name %s did not start; a Rancher cluster with "+
				"the Amazon provider could not be upgraded to 1.27).", what, removed.MinorString(), ctx.Target.MinorString(), prov)
		} else {
			f.Severity = finding.Medium
			f.Title = fmt.Sprintf("%s: an upgrade to %s or later breaks", what, removed.MinorString())
			f.Message = fmt.Sprintf("%s. It works on this release, but from %s the components no longer know this provider, "+
				"so the upgrade to %s or any later minor fails (an RKE2 1.27.1 server with cloud-provider-name %s did not start). "+
				"Give --target-version to judge a planned upgrade.", what, removed.MinorString(), removed.MinorString(), prov)
		}
		for _, h := range group {
			f.AddEvidence(finding.Quote(h.ref, finding.Value("spec.containers[name="+h.container+"]."+h.field, finding.JSONText(h.words))))
		}
		out = append(out, f)
	}
	return out, nil
}
