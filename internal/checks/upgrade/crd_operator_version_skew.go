package upgrade

import (
	_ "embed"
	"fmt"
	"slices"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

const (
	crdSkewID         = "crd-operator-version-skew"
	ruleCRDsBehind    = "crds-older-than-operator"
	crdSkewPromOpCase = "prometheus-operator-crds-lag-operator-2021-2025"
)

//go:embed data/crd-operator-version-skew.yaml
var crdSkewData []byte

// stampedOperator is one row of data/crd-operator-version-skew.yaml: an
// operator that writes its release on the CRDs it ships.
type stampedOperator struct {
	ID         string   `json:"id"`
	Case       string   `json:"case"`
	Operator   string   `json:"operator"`
	Group      string   `json:"group"`
	Annotation string   `json:"annotation"`
	Images     []string `json:"images"`
	Note       string   `json:"note"`
	Sources    []string `json:"sources"`
}

type crdSkewFacts struct {
	Rows []*stampedOperator `json:"rows"`
}

var loadCRDSkew = check.Facts("data/crd-operator-version-skew.yaml", crdSkewData, func(f *crdSkewFacts) error {
	for _, r := range f.Rows {
		if r.Case == "" || r.Group == "" || r.Annotation == "" || len(r.Images) == 0 || len(r.Sources) == 0 {
			return fmt.Errorf("data/crd-operator-version-skew.yaml: %s: needs case, group, annotation, images and sources", r.ID)
		}
	}
	return nil
})

// crdOperatorVersionSkewCheck compares the release an operator stamped on
// its CRDs with the release of the operator's running image. Charts that
// ship CRDs in Helm's crds directory upgrade the operator and leave the
// CRDs as first installed, and a newer operator writes fields the older
// schemas do not declare.
func crdOperatorVersionSkewCheck() check.Check {
	var cases []string
	if f, err := loadCRDSkew(); err == nil {
		for _, r := range f.Rows {
			if !slices.Contains(cases, r.Case) {
				cases = append(cases, r.Case)
			}
		}
	}
	return check.Check{
		ID:       crdSkewID,
		Title:    "Operators running a newer release than the CRDs installed for them",
		Severity: finding.Medium,
		Description: "Reads the CustomResourceDefinitions of operators that stamp their release on their CRDs " +
			"(data/crd-operator-version-skew.yaml: the Prometheus Operator's operator.prometheus.io/version on the " +
			"monitoring.coreos.com CRDs) and the image tags of the Deployments running that operator. CRDs stamped " +
			"with an older minor release than the newest operator image running are medium: Helm installs a chart's " +
			"crds directory once and never upgrades it, and a newer operator can write fields the older schemas do not " +
			"declare (the Prometheus Operator then fails to apply the status of its Prometheus and Alertmanager " +
			"objects). CRDs without the annotation, and images whose tag is not a release, are not compared.",
		Reads: check.Needs(snapshot.CustomResourceDefinitions, snapshot.Deployments),
		Rules: []check.Rule{
			{ID: ruleCRDsBehind, Summary: "every stamped operator's CRDs are of the operator's running minor release or newer",
				Needs: []snapshot.Resource{snapshot.CustomResourceDefinitions, snapshot.Deployments}},
		},
		Cases: check.Graded(cases, check.Detects(crdSkewPromOpCase)),
		Run:   runCRDOperatorVersionSkew,
	}
}

// operatorImage is a container running an operator's image, and its
// release read from the tag.
type operatorImage struct {
	d       *appsv1.Deployment
	name    string
	image   string
	version check.KubeVersion
}

// stampedCRD is a CRD of the operator's group and the release it carries.
type stampedCRD struct {
	name, stamp string
	version     check.KubeVersion
}

func runCRDOperatorVersionSkew(ctx *check.Context) ([]finding.Finding, error) {
	facts, err := loadCRDSkew()
	if err != nil {
		return nil, err
	}
	var out []finding.Finding
	for _, row := range facts.Rows {
		if f, ok := crdSkewFor(ctx, row); ok {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		switch {
		case !ctx.Complete(snapshot.CustomResourceDefinitions):
			ctx.Incomplete(ruleCRDsBehind, "the CRD list was not read whole, so older stamped CRDs may be missing")
		case !ctx.Complete(snapshot.Deployments):
			ctx.Incomplete(ruleCRDsBehind, "Deployments were not read in every namespace, so a newer operator may be missing")
		}
	}
	return out, nil
}

// crdSkewFor is the finding for one operator row: its stamped CRDs older,
// by minor release, than the newest of its running images.
func crdSkewFor(ctx *check.Context, row *stampedOperator) (finding.Finding, bool) {
	s := ctx.Snapshot
	var crds []stampedCRD
	for _, o := range s.CustomObjects(snapshot.CustomResourceDefinitions) {
		if g, _, _ := unstructured.NestedString(o.Object, "spec", "group"); g != row.Group {
			continue
		}
		stamp := o.GetAnnotations()[row.Annotation]
		if v, ok := check.ParseKubeVersion(stamp); ok {
			crds = append(crds, stampedCRD{name: o.GetName(), stamp: stamp, version: v})
		}
	}
	if len(crds) == 0 {
		return finding.Finding{}, false
	}
	var ops []operatorImage
	for i := range s.Deployments {
		d := &s.Deployments[i]
		for _, c := range d.Spec.Template.Spec.Containers {
			if !slices.Contains(row.Images, check.ImageName(c.Image)) {
				continue
			}
			_, tag, _ := check.ImageParts(c.Image)
			if v, ok := check.ParseKubeVersion(tag); ok {
				ops = append(ops, operatorImage{d: d, name: c.Name, image: c.Image, version: v})
			}
		}
	}
	if len(ops) == 0 {
		return finding.Finding{}, false
	}
	sort.SliceStable(ops, func(i, j int) bool { return ops[j].version.Less(ops[i].version) })
	newest := ops[0]
	var behind []stampedCRD
	for _, c := range crds {
		if c.version.MinorsBehind(newest.version) > 0 {
			behind = append(behind, c)
		}
	}
	if len(behind) == 0 {
		return finding.Finding{}, false
	}
	sort.Slice(behind, func(i, j int) bool { return behind[i].name < behind[j].name })
	f := finding.Finding{Check: crdSkewID, Rule: ruleCRDsBehind, Severity: finding.Medium, Cases: []string{row.Case}}
	opRef := check.Ref("apps/v1", "Deployment", newest.d)
	f.Objects = append(f.Objects, opRef)
	f.AddEvidence(finding.Quote(opRef, finding.Value("spec.template.spec.containers[name="+newest.name+"].image", newest.image)))
	var g finding.Grouper
	oldest := behind[0].version
	for i, c := range behind {
		if c.version.Less(oldest) {
			oldest = c.version
		}
		if i >= check.MaxListedObjects {
			continue
		}
		ref := finding.ObjectRef{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: c.name}
		f.Objects = append(f.Objects, ref)
		g.Add(ref, finding.Value("metadata.annotations["+row.Annotation+"]", c.stamp))
	}
	f.AddEvidence(g.Items()...)
	f.Title = fmt.Sprintf("%s runs %s but %s of %s %s stamped with an older release (oldest %s)",
		row.Operator, newest.version.String(), check.Plural(len(behind), "CRD", "CRDs"), row.Group,
		isAre(len(behind)), oldest.String())
	f.Message = fmt.Sprintf("Deployment %s/%s runs %s, a newer minor release than the %s recorded on %s. "+
		"The CRDs were not upgraded with the operator (Helm, for one, installs a chart's crds directory once and never "+
		"upgrades it), and a newer operator can write fields their schemas do not declare: after one such chart "+
		"upgrade the Prometheus Operator could not apply the status of its Prometheus and Alertmanager objects "+
		"(\".status.selector: field not declared in schema\").",
		newest.d.Namespace, newest.d.Name, newest.image, row.Annotation, check.Plural(len(behind), "CRD", "CRDs"))
	f.Remediation = fmt.Sprintf("Apply the CRDs of the operator's release (%s) with server-side apply (kubectl apply "+
		"--server-side; the largest CRDs no longer fit client-side apply's last-applied-configuration annotation), "+
		"and make the CRD update a step of every chart upgrade.", newest.version.String())
	return f, true
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}
