package autoscaling

import (
	_ "embed"
	"fmt"
	"slices"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

const (
	kedaPodIdentityID   = "keda-pod-identity-removal"
	ruleKedaPodIdentity = "auth-uses-removed-pod-identity"
	caseKedaPodIdentity = "keda-2-15-pod-identity-removal-aks-addon-2023-2024"
)

//go:embed data/keda-pod-identity-removal.yaml
var kedaPodIdentityData []byte

type kedaPodIdentityFacts struct {
	// Sources back the operator and the removal (checktest.FactsSourced).
	Sources  []string `json:"sources"`
	Operator struct {
		Name         string   `json:"name"`
		Images       []string `json:"images"`
		ImageSources []string `json:"imageSources"`
		RemovedIn    string   `json:"removedIn"`
		Case         string   `json:"case"`

		removed check.KubeVersion
	} `json:"operator"`
	RemovedProviders []string          `json:"removedProviders"`
	Facts            []check.Statement `json:"facts"`
}

var loadKedaPodIdentityFacts = check.Facts("data/keda-pod-identity-removal.yaml", kedaPodIdentityData, func(f *kedaPodIdentityFacts) error {
	const file = "data/keda-pod-identity-removal.yaml"
	v, ok := check.ParseKubeVersion(f.Operator.RemovedIn)
	if !ok || f.Operator.Name == "" || len(f.Operator.Images) == 0 || len(f.Operator.ImageSources) == 0 ||
		f.Operator.Case != caseKedaPodIdentity || len(f.RemovedProviders) == 0 || len(f.Facts) == 0 || len(f.Sources) == 0 {
		return fmt.Errorf("%s: operator needs a name, images with sources, a removedIn version and the case %s; removedProviders and facts are required", file, caseKedaPodIdentity)
	}
	for _, st := range f.Facts {
		if len(st.Sources) == 0 {
			return fmt.Errorf("%s: fact %q has no source", file, st.What)
		}
	}
	f.Operator.removed = v
	return nil
})

// kedaPodIdentityRemovalCheck finds KEDA authentications that still use
// Azure AD Pod Identity, which KEDA 2.15 removed: the scalers that use them
// stop authenticating, and scaling stops, once the operator reaches 2.15
// (on AKS, with the managed add-on at Kubernetes 1.31).
func kedaPodIdentityRemovalCheck() check.Check {
	auths := []snapshot.Resource{snapshot.KedaTriggerAuthentications, snapshot.KedaClusterTriggerAuthentications}
	return check.Check{
		ID:       kedaPodIdentityID,
		Title:    "KEDA authentications still on Azure AD Pod Identity, which KEDA 2.15 removed",
		Severity: finding.High,
		Description: "Reads KEDA TriggerAuthentications and ClusterTriggerAuthentications (keda.sh, trimmed to " +
			"spec.podIdentity.provider) and the KEDA operator's Deployment against data/keda-pod-identity-removal.yaml " +
			"(every row sourced). An authentication whose provider is azure (Azure AD Pod Identity) is medium while " +
			"the operator runs a release before 2.15: KEDA 2.15 removed that provider, and AKS moves its managed KEDA " +
			"add-on to 2.15 with Kubernetes 1.31, so the next KEDA or cluster upgrade leaves the scalers that use it " +
			"without credentials. High when the operator already runs 2.15 or later. An operator image from another " +
			"repository, or none found, leaves the release unknown: the finding stays medium and says so.",
		Reads: append(check.Needs(snapshot.Deployments), check.Optional(auths[0]), check.Optional(auths[1])),
		Rules: []check.Rule{
			{ID: ruleKedaPodIdentity, Summary: "no KEDA authentication uses Azure AD Pod Identity",
				Needs: append(slices.Clone(auths), snapshot.Deployments)},
		},
		Cases: check.Prevents(caseKedaPodIdentity),
		Run:   runKedaPodIdentityRemoval,
	}
}

// kedaOperator is the newest KEDA operator container the Deployments run.
type kedaOperator struct {
	deploy    *appsv1.Deployment
	container string
	image     string
	version   check.KubeVersion
}

func runKedaPodIdentityRemoval(ctx *check.Context) ([]finding.Finding, error) {
	facts, err := loadKedaPodIdentityFacts()
	if err != nil {
		return nil, err
	}
	s := ctx.Snapshot
	if !ctx.Present(snapshot.KedaTriggerAuthentications) && !ctx.Present(snapshot.KedaClusterTriggerAuthentications) {
		ctx.Skip(ruleKedaPodIdentity, "KEDA TriggerAuthentications were not read")
		return nil, nil
	}
	var uses []unstructured.Unstructured
	for _, r := range []snapshot.Resource{snapshot.KedaTriggerAuthentications, snapshot.KedaClusterTriggerAuthentications} {
		for _, a := range s.CustomObjects(r) {
			p, _, _ := unstructured.NestedString(a.Object, "spec", "podIdentity", "provider")
			if slices.Contains(facts.RemovedProviders, p) {
				uses = append(uses, a)
			}
		}
	}
	if len(uses) == 0 {
		for _, r := range []snapshot.Resource{snapshot.KedaTriggerAuthentications, snapshot.KedaClusterTriggerAuthentications} {
			if !ctx.Complete(r) {
				ctx.Incomplete(ruleKedaPodIdentity, "KEDA %ss were not read whole", r.Kind)
				break
			}
		}
		return nil, nil
	}
	sort.Slice(uses, func(i, j int) bool {
		if uses[i].GetNamespace() != uses[j].GetNamespace() {
			return uses[i].GetNamespace() < uses[j].GetNamespace()
		}
		return uses[i].GetName() < uses[j].GetName()
	})
	op := newestKedaOperator(s.Deployments, facts.Operator.Images)
	if op == nil && !ctx.Complete(snapshot.Deployments) {
		ctx.Incomplete(ruleKedaPodIdentity, "no KEDA operator among the Deployments read: its release, and so whether "+
			"these authentications already fail, is unknown")
	}
	return []finding.Finding{podIdentityFinding(uses, op, facts)}, nil
}

// newestKedaOperator is the newest KEDA operator container among the
// Deployments; the metrics server runs another image.
func newestKedaOperator(deploys []appsv1.Deployment, images []string) *kedaOperator {
	var best *kedaOperator
	for i := range deploys {
		d := &deploys[i]
		for _, c := range d.Spec.Template.Spec.Containers {
			repo, tag, _ := check.ImageParts(c.Image)
			if !slices.Contains(images, strings.ToLower(repo)) {
				continue
			}
			v, ok := check.ParseKubeVersion(tag)
			if !ok {
				continue
			}
			if best == nil || best.version.Less(v) {
				best = &kedaOperator{deploy: d, container: c.Name, image: c.Image, version: v}
			}
		}
	}
	return best
}

func podIdentityFinding(uses []unstructured.Unstructured, op *kedaOperator, facts *kedaPodIdentityFacts) finding.Finding {
	removed := facts.Operator.removed.MinorString()
	f := finding.Finding{
		Check: kedaPodIdentityID, Rule: ruleKedaPodIdentity, Severity: finding.Medium,
		Cases: []string{facts.Operator.Case},
		Remediation: "Move each authentication to Azure Workload Identity (spec.podIdentity.provider: azure-workload, " +
			"with the KEDA operator's service account federated to the managed identity) before KEDA reaches " + removed +
			"; on AKS with the managed KEDA add-on, before the cluster moves to Kubernetes 1.31.",
	}
	var g finding.Grouper
	names := make([]string, 0, len(uses))
	for i, a := range uses {
		kind := a.GetKind()
		ref := finding.ObjectRef{APIVersion: "keda.sh/v1alpha1", Kind: kind, Namespace: a.GetNamespace(), Name: a.GetName()}
		label := kind + " " + a.GetName()
		if a.GetNamespace() != "" {
			label = kind + " " + a.GetNamespace() + "/" + a.GetName()
		}
		names = append(names, label)
		if i >= check.MaxListedObjects {
			continue
		}
		f.Objects = append(f.Objects, ref)
		p, _, _ := unstructured.NestedString(a.Object, "spec", "podIdentity", "provider")
		g.Add(ref, finding.Value("spec.podIdentity.provider", p))
	}
	shown := strings.Join(names[:min(len(names), 5)], ", ")
	if len(names) > 5 {
		shown += fmt.Sprintf(" and %d more", len(names)-5)
	}
	n := check.Plural(len(uses), "KEDA authentication uses", "KEDA authentications use")
	switch {
	case op != nil && !op.version.Less(facts.Operator.removed):
		f.Severity = finding.High
		f.Title = fmt.Sprintf("%s Azure AD Pod Identity, which KEDA %s no longer supports", n, op.version)
		f.Message = fmt.Sprintf("%s name spec.podIdentity.provider azure. Deployment %s/%s runs %s (%s), and KEDA removed "+
			"Azure AD Pod Identity in %s (its TriggerAuthentication schema no longer lists provider azure): the scalers "+
			"that authenticate through these get no credentials for their event sources, so their workloads stop scaling.", shown, op.deploy.Namespace, op.deploy.Name, facts.Operator.Name, op.image, removed)
	case op != nil:
		f.Title = fmt.Sprintf("%s Azure AD Pod Identity, which KEDA %s removes", n, removed)
		f.Message = fmt.Sprintf("%s name spec.podIdentity.provider azure. Deployment %s/%s runs %s (%s), which still "+
			"supports it, but KEDA %s removed Azure AD Pod Identity (its project is archived) and AKS moves its managed KEDA "+
			"add-on to %s with Kubernetes 1.31: the next KEDA upgrade (on AKS's managed add-on, the cluster's move to "+
			"1.31) leaves the scalers that authenticate through these without credentials, and their workloads stop scaling.",
			shown, op.deploy.Namespace, op.deploy.Name, facts.Operator.Name, op.image, removed, removed)
	default:
		f.Title = fmt.Sprintf("%s Azure AD Pod Identity, which KEDA %s removes", n, removed)
		f.Message = fmt.Sprintf("%s name spec.podIdentity.provider azure. No KEDA operator image from %s was found among "+
			"the Deployments (the AKS add-on's, %s, is one), so which release serves them is unknown; KEDA %s removed "+
			"Azure AD Pod Identity.", shown, strings.Join(facts.Operator.Images, ", "), facts.Operator.Images[len(facts.Operator.Images)-1], removed)
	}
	for _, st := range facts.Facts {
		f.Evidence = append(f.Evidence, strings.Join(strings.Fields(st.What), " ")+" ("+strings.Join(st.Sources, " ")+")")
	}
	f.AddEvidence(g.Items()...)
	if op != nil {
		dref := check.Ref("apps/v1", "Deployment", op.deploy)
		f.Objects = append(f.Objects, dref)
		f.AddEvidence(finding.Quote(dref, finding.Value(check.ContainerField("Deployment", "", op.container, "image"), op.image)))
	}
	return f
}
