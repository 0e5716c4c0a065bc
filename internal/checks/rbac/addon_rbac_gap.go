// Package rbac holds the checks that read RBAC: what add-ons are allowed
// to do against what their versions need.
package rbac

import (
	_ "embed"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

const (
	addonRBACID   = "addon-rbac-gap"
	ruleAddonRBAC = "addon-cluster-permissions"
	// ruleAddonRBACAhead: an add-on release before the one that needs the
	// permissions, whose service account lacks them, for the rows that
	// say warnBefore: the upgrade to that release breaks it unless the
	// role is changed first.
	ruleAddonRBACAhead = "addon-permissions-before-upgrade"
	caseCoreDNSRBAC    = "eks-distro-coredns-endpointslice-rbac-2021"
	maxRBACEvidence    = 10
)

//go:embed data/addon-rbac-gap.yaml
var addonRBACData []byte

type permission struct {
	APIGroup, Resource string
	Verbs              []string
}

// parsePermission reads "group/resource:verb,verb" ("/pods:list" for the
// core group).
func parsePermission(s string) (permission, bool) {
	gr, verbs, ok := strings.Cut(s, ":")
	group, resource, ok2 := strings.Cut(gr, "/")
	if !ok || !ok2 || resource == "" || verbs == "" {
		return permission{}, false
	}
	return permission{APIGroup: group, Resource: resource, Verbs: strings.Split(verbs, ",")}, true
}

type addonNeed struct {
	ID       string   `json:"id"`
	Name     string   `json:"name"`
	Case     string   `json:"case"`
	Image    string   `json:"image"`
	From     string   `json:"from"`
	Severity string   `json:"severity"`
	Effect   string   `json:"effect"`
	Needs    []string `json:"needs"`
	Sources  []string `json:"sources"`
	// WarnBefore also judges releases before From (low): the grant the
	// next upgrade needs is missing already.
	WarnBefore bool `json:"warnBefore"`
	from       check.KubeVersion
	perms      []permission
}

// addonNeedFacts is data/addon-rbac-gap.yaml.
type addonNeedFacts struct {
	Addons []*addonNeed `json:"addons"`
}

var loadAddonNeeds = check.Facts("data/addon-rbac-gap.yaml", addonRBACData, func(f *addonNeedFacts) error {
	for _, a := range f.Addons {
		var ok bool
		if a.from, ok = check.ParseKubeVersion(a.From); !ok {
			return fmt.Errorf("data/addon-rbac-gap.yaml: %s: bad version %q", a.ID, a.From)
		}
		for _, n := range a.Needs {
			p, ok := parsePermission(n)
			if !ok {
				return fmt.Errorf("data/addon-rbac-gap.yaml: %s: bad need %q", a.ID, n)
			}
			a.perms = append(a.perms, p)
		}
	}
	return nil
})

// addonRBACGapCheck resolves each add-on's service account to the
// (Cluster)Roles bound to it and reports the cluster-scope permissions its
// version needs that none of them grants.
func addonRBACGapCheck() check.Check {
	cases := []string{}
	if facts, err := loadAddonNeeds(); err == nil {
		seen := map[string]bool{}
		for _, a := range facts.Addons {
			if !seen[a.Case] {
				seen[a.Case] = true
				cases = append(cases, a.Case)
			}
		}
	}
	return check.Check{
		ID:       addonRBACID,
		Title:    "Add-on versions that need API permissions their service account lacks",
		Severity: finding.High,
		Description: "Finds CoreDNS and cluster-autoscaler in Deployments, DaemonSets, StatefulSets and pods, reads the version " +
			"from the image tag, and resolves the pod template's service account through ClusterRoleBindings to ClusterRoles " +
			"(aggregated ClusterRoles included, by their aggregationRule, and wildcards in groups, resources and verbs; rules " +
			"limited by resourceNames do not allow list or watch). Group subjects that include every service account count. " +
			"CoreDNS 1.8.1 and later need list and watch on discovery.k8s.io endpointslices (high: cluster DNS stops syncing); " +
			"cluster-autoscaler 1.17 and later need csinodes, and 1.21 and later csidrivers and csistoragecapacities, in " +
			"storage.k8s.io (medium: its scheduling simulation runs without them). These lists are cluster-wide, so a " +
			"RoleBinding does not satisfy them; the evidence says when one grants them in a single namespace. A missing " +
			"permission is only reported when every ClusterRole and ClusterRoleBinding was read; otherwise the rule is partial. " +
			"Before the release that needs them (low, rows marked warnBefore: CoreDNS before 1.8.1): the service account " +
			"already lacks what the next upgrade needs, so the role has to change before or with the image.",
		// Pods find the add-ons whose workload is not in the input (a bare
		// CoreDNS pod): the rule's silence depends on them. Roles and
		// RoleBindings only add the "granted in one namespace" evidence.
		Reads: append(check.Needs(snapshot.Deployments, snapshot.DaemonSets, snapshot.StatefulSets, snapshot.Pods,
			snapshot.ClusterRoles, snapshot.ClusterRoleBindings), check.Optional(snapshot.Roles), check.Optional(snapshot.RoleBindings)),
		Rules: []check.Rule{
			{ID: ruleAddonRBAC, Summary: "every CoreDNS and cluster-autoscaler service account holds the cluster-scope permissions its version needs",
				Needs: []snapshot.Resource{snapshot.Deployments, snapshot.DaemonSets, snapshot.StatefulSets, snapshot.Pods,
					snapshot.ClusterRoles, snapshot.ClusterRoleBindings}},
			{ID: ruleAddonRBACAhead, Summary: "no CoreDNS before 1.8.1 runs as a service account that lacks what 1.8.1 and later need",
				Needs: []snapshot.Resource{snapshot.Deployments, snapshot.DaemonSets, snapshot.StatefulSets, snapshot.Pods,
					snapshot.ClusterRoles, snapshot.ClusterRoleBindings}},
		},
		// The CoreDNS case's upgrades (1.8.0 to 1.8.3 or 1.8.4) left the old
		// role in place: the rule before the upgrade flags that.
		Cases: check.Graded(cases, check.Detects(cases...), check.Prevents(caseCoreDNSRBAC)),
		Run:   runAddonRBACGap,
	}
}

// addonWorkload is one add-on found in the input.
type addonWorkload struct {
	ref       finding.ObjectRef
	ns        string
	sa        string
	image     string
	v         check.KubeVersion
	container string
	saWritten string // spec.serviceAccountName as written ("" when not)
}

func runAddonRBACGap(ctx *check.Context) ([]finding.Finding, error) {
	s := ctx.Snapshot
	facts, err := loadAddonNeeds()
	if err != nil {
		return nil, err
	}
	needs := facts.Addons
	images := map[string]bool{}
	for _, a := range needs {
		images[a.Image] = true
	}
	var addons []addonWorkload
	seen := map[string]bool{} // namespace/serviceaccount/image
	add := func(ref finding.ObjectRef, spec *corev1.PodSpec) {
		for _, c := range spec.Containers {
			if addonImage(c.Image, images) == "" {
				continue
			}
			_, tag, _ := check.ImageParts(c.Image)
			v, ok := check.ParseKubeVersion(tag)
			if !ok {
				ctx.Incomplete(ruleAddonRBAC, "%s runs %s without a version tag kubegap can read", ref, c.Image)
				continue
			}
			sa := spec.ServiceAccountName
			if sa == "" {
				sa = "default"
			}
			key := ref.Namespace + "/" + sa + "/" + c.Image
			if seen[key] {
				continue
			}
			seen[key] = true
			addons = append(addons, addonWorkload{ref, ref.Namespace, sa, c.Image, v, c.Name, spec.ServiceAccountName})
		}
	}
	for i := range s.Deployments {
		d := &s.Deployments[i]
		add(check.Ref("apps/v1", "Deployment", d), &d.Spec.Template.Spec)
	}
	for i := range s.DaemonSets {
		d := &s.DaemonSets[i]
		add(check.Ref("apps/v1", "DaemonSet", d), &d.Spec.Template.Spec)
	}
	for i := range s.StatefulSets {
		d := &s.StatefulSets[i]
		add(check.Ref("apps/v1", "StatefulSet", d), &d.Spec.Template.Spec)
	}
	for i := range s.Pods {
		p := &s.Pods[i]
		// A pod's own spec, for add-ons whose workload is not in the input;
		// built only for pods that run an add-on image (pods are many).
		var spec corev1.PodSpec
		for _, c := range p.Spec.Containers {
			if addonImage(c.Image, images) != "" {
				spec.Containers = append(spec.Containers, corev1.Container{Name: c.Name, Image: c.Image})
			}
		}
		if len(spec.Containers) == 0 {
			continue
		}
		spec.ServiceAccountName = p.Spec.ServiceAccountName
		add(finding.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: p.Namespace, Name: p.Name}, &spec)
	}
	if len(addons) == 0 {
		return nil, nil
	}
	g := newGrants(s)
	rbacComplete := ctx.Complete(snapshot.ClusterRoles) && ctx.Complete(snapshot.ClusterRoleBindings)
	var out []finding.Finding
	for _, a := range addons {
		for _, need := range needs {
			before := a.v.Less(need.from)
			if addonImage(a.image, images) != need.Image || before && !need.WarnBefore {
				continue
			}
			rule := ruleAddonRBAC
			if before {
				rule = ruleAddonRBACAhead
			}
			var missing []string
			var evidence []string
			var namespaced []finding.EvidenceItem // RoleBindings granting a need in one namespace
			for _, p := range need.perms {
				for _, verb := range p.Verbs {
					if via, ok := g.clusterAllows(a.ns, a.sa, p.APIGroup, p.Resource, verb); ok {
						if len(evidence) < maxRBACEvidence {
							evidence = append(evidence, fmt.Sprintf("%s %s.%s: granted by %s", verb, p.Resource, groupName(p.APIGroup), via))
						}
						continue
					}
					missing = append(missing, fmt.Sprintf("%s %s.%s", verb, p.Resource, groupName(p.APIGroup)))
					if b, ok := g.namespacedAllows(a.ns, a.sa, p.APIGroup, p.Resource, verb); ok {
						evidence = append(evidence, fmt.Sprintf("%s %s.%s is granted only in namespace %s (RoleBinding %s), not cluster-wide",
							verb, p.Resource, groupName(p.APIGroup), b.ns, b.binding))
						it := finding.Quote(finding.ObjectRef{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding", Namespace: b.ns, Name: b.binding},
							finding.Value("roleRef.kind", b.kind), finding.Value("roleRef.name", b.name))
						if !slices.ContainsFunc(namespaced, func(o finding.EvidenceItem) bool { return o.String() == it.String() }) {
							namespaced = append(namespaced, it)
						}
					}
				}
			}
			if len(missing) == 0 {
				continue
			}
			if !rbacComplete || g.unresolved[a.ns+"/"+a.sa] != "" {
				reason := "not every ClusterRole and ClusterRoleBinding is in the input"
				if r := g.unresolved[a.ns+"/"+a.sa]; r != "" {
					reason = r
				}
				ctx.Incomplete(rule, "%s (service account %s/%s) may lack %s: %s",
					a.ref, a.ns, a.sa, strings.Join(missing, ", "), reason)
				continue
			}
			f := rbacFinding(a, need, missing, evidence, namespaced, g)
			f.Rule = rule
			if before {
				aheadOf(&f, a, need, missing)
			}
			out = append(out, f)
		}
	}
	return out, nil
}

// addonImage returns the add-on an image runs: its name is the add-on's
// image name, or ends in "-" and that name, as mirrors name their copies
// (k3s runs rancher/mirrored-coredns-coredns).
func addonImage(image string, images map[string]bool) string {
	name := check.ImageName(image)
	if images[name] {
		return name
	}
	if i := strings.LastIndexByte(name, '-'); i >= 0 {
		for img := range images {
			if strings.HasSuffix(name, "-"+img) {
				return img
			}
		}
	}
	return ""
}

func groupName(g string) string {
	if g == "" {
		return "core"
	}
	return g
}

func rbacFinding(a addonWorkload, need *addonNeed, missing, evidence []string, namespaced []finding.EvidenceItem, g *grants) finding.Finding {
	sev := finding.Medium
	if need.Severity == "high" {
		sev = finding.High
	}
	f := finding.Finding{Check: addonRBACID, Severity: sev, Cases: []string{need.Case},
		Objects: []finding.ObjectRef{a.ref, {APIVersion: "v1", Kind: "ServiceAccount", Namespace: a.ns, Name: a.sa}},
		Title:   fmt.Sprintf("%s %s (%s) lacks %s", need.Name, a.v, a.ref, strings.Join(missing, ", ")),
		Message: fmt.Sprintf("%s runs %s %s as service account %s/%s, and no ClusterRole bound to it grants %s at cluster scope: %s.",
			a.ref, need.Name, a.v, a.ns, a.sa, strings.Join(missing, ", "), strings.TrimSpace(need.Effect)),
		Remediation: fmt.Sprintf("Add the missing verbs to the ClusterRole bound to %s/%s (for example a rule for %s), or "+
			"install the RBAC that ships with this %s release; upgrade RBAC and image together.", a.ns, a.sa,
			strings.Join(missing, ", "), need.Name),
	}
	// The image (the version), the service account as the pod spec names
	// it (absent: "default"), the bindings to it and the rules of the
	// ClusterRoles they bind, from which the missing verbs are derived.
	spec := check.PodSpecPath(a.ref.Kind)
	f.AddEvidence(finding.Quote(a.ref, finding.Value(check.ContainerField(a.ref.Kind, "", a.container, "image"), a.image),
		finding.Value(spec+".serviceAccountName", a.saWritten)))
	bindings := g.bindingsOf(a.ns, a.sa)
	for i, b := range bindings {
		if i == maxRBACEvidence {
			break
		}
		fields := []finding.Field{finding.Value("roleRef.name", b.role)}
		sub := fmt.Sprintf("subjects[%d].", b.subject)
		fields = append(fields, finding.Value(sub+"kind", b.subjectKind), finding.Value(sub+"name", b.subjectName))
		if b.subjectKind == rbacv1.ServiceAccountKind {
			fields = append(fields, finding.Value(sub+"namespace", a.ns))
		}
		f.AddEvidence(finding.Quote(finding.ObjectRef{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding", Name: b.binding}, fields...))
	}
	roles := g.rolesOf(a.ns, a.sa)
	if len(roles) == 0 {
		f.Evidence = append(f.Evidence, "no ClusterRoleBinding names the service account or a group holding it")
	} else {
		f.Evidence = append(f.Evidence, "bound ClusterRoles: "+check.ListText(roles, maxRBACEvidence))
	}
	for i, r := range roles {
		cr := g.clusterRoles[r]
		if cr == nil || i == maxRBACEvidence {
			continue
		}
		f.AddEvidence(finding.Quote(finding.ObjectRef{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: cr.Name},
			finding.Value("rules", finding.JSONText(cr.Rules))))
		if cr.AggregationRule != nil {
			f.Evidence = append(f.Evidence, fmt.Sprintf("ClusterRole %s aggregates the rules of the ClusterRoles its aggregationRule selects", cr.Name))
		}
	}
	f.AddEvidence(namespaced...)
	f.Evidence = append(f.Evidence, evidence...)
	f.Evidence = append(f.Evidence, "rule "+need.ID+": "+strings.Join(need.Sources, ", "))
	return f
}

// aheadOf rewrites f for an add-on before the release that needs the
// permissions: nothing fails yet, the upgrade to that release will.
func aheadOf(f *finding.Finding, a addonWorkload, need *addonNeed, missing []string) {
	f.Severity = finding.Low
	f.Title = fmt.Sprintf("%s %s (%s) lacks %s, which %s %s and later need", need.Name, a.v, a.ref,
		strings.Join(missing, ", "), need.Name, need.from)
	f.Message = fmt.Sprintf("%s runs %s %s as service account %s/%s, which no ClusterRole grants %s at cluster scope. This "+
		"release does not need it, but from %s it does: %s. Upgrading the image without the role is what broke cluster DNS "+
		"for EKS users whose CoreDNS was moved to 1.8.3, or from 1.8.0 to 1.8.4, with the old role left in place.", a.ref, need.Name, a.v, a.ns, a.sa,
		strings.Join(missing, ", "), need.from, strings.TrimSpace(need.Effect))
	f.Remediation = fmt.Sprintf("Before upgrading %s past %s, add %s to the ClusterRole bound to %s/%s (extra verbs do no "+
		"harm to this release), or install the RBAC that ships with the target release together with its image.",
		need.Name, need.from, strings.Join(missing, ", "), a.ns, a.sa)
}
