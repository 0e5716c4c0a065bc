package versions

import (
	_ "embed"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

const (
	addonEOLID     = "addon-end-of-life"
	ruleAddonEOL   = "retired-addon"
	ruleDistroEOL  = "retired-distribution"
	caseIngressEOL = "ingress-nginx-retired-march-2026"
	caseRKE1EOL    = "rancher-rke1-end-of-life-july-2025"
)

//go:embed data/addon-end-of-life.yaml
var addonEOLData []byte

type addonEOLFacts struct {
	Addons []struct {
		Name          string   `json:"name"`
		Images        []string `json:"images"`
		EndOfLife     string   `json:"endOfLife"`
		FinalReleases []string `json:"finalReleases"`
		After         string   `json:"after"`
		Case          string   `json:"case"`
		Sources       []string `json:"sources"`

		end time.Time
	} `json:"addons"`
	Distributions []struct {
		Name            string   `json:"name"`
		NodeAnnotations []string `json:"nodeAnnotations"`
		EndOfLife       string   `json:"endOfLife"`
		After           string   `json:"after"`
		Case            string   `json:"case"`
		Sources         []string `json:"sources"`

		end time.Time
	} `json:"distributions"`
	Thresholds struct {
		WarnDays int `json:"warnDays"`
	} `json:"thresholds"`
}

var loadAddonEOLFacts = check.Facts("data/addon-end-of-life.yaml", addonEOLData, func(f *addonEOLFacts) error {
	const file = "data/addon-end-of-life.yaml"
	if f.Thresholds.WarnDays <= 0 || len(f.Addons) == 0 {
		return fmt.Errorf("%s: addons and thresholds.warnDays are required", file)
	}
	for i := range f.Addons {
		a := &f.Addons[i]
		end, err := time.Parse(time.DateOnly, a.EndOfLife)
		if err != nil || a.Name == "" || len(a.Images) == 0 || a.Case == "" || strings.TrimSpace(a.After) == "" {
			return fmt.Errorf("%s: add-on %q needs images, an endOfLife date, what ends and a case", file, a.Name)
		}
		for _, s := range a.Sources {
			if !strings.HasPrefix(s, "https://") {
				return fmt.Errorf("%s: add-on %q: source %q is not an https URL", file, a.Name, s)
			}
		}
		if len(a.Sources) == 0 {
			return fmt.Errorf("%s: add-on %q has no sources", file, a.Name)
		}
		a.end = end
	}
	for i := range f.Distributions {
		d := &f.Distributions[i]
		end, err := time.Parse(time.DateOnly, d.EndOfLife)
		if err != nil || d.Name == "" || len(d.NodeAnnotations) == 0 || d.Case == "" || strings.TrimSpace(d.After) == "" || len(d.Sources) == 0 {
			return fmt.Errorf("%s: distribution %q needs node annotations, an endOfLife date, what ends, a case and sources", file, d.Name)
		}
		for _, s := range d.Sources {
			if !strings.HasPrefix(s, "https://") {
				return fmt.Errorf("%s: distribution %q: source %q is not an https URL", file, d.Name, s)
			}
		}
		d.end = end
	}
	return nil
})

// addonEndOfLifeCheck finds add-ons whose project has ended maintenance,
// or will within months, by their controller images: nothing in the
// cluster changes on the day, so nothing else shows it.
//
// The date it compares against is the wall clock, as node-os-lifecycle's:
// "is this still maintained" is a question about today. Tests pass their
// own clock through addonEndOfLifeCheckAt.
func addonEndOfLifeCheck() check.Check { return addonEndOfLifeCheckAt(time.Now) }

func addonEndOfLifeCheckAt(now func() time.Time) check.Check {
	return check.Check{
		ID:       addonEOLID,
		Title:    "Add-ons whose project has ended maintenance: no more releases or security fixes",
		Severity: finding.High,
		Description: "Reads the container images of Deployments and DaemonSets against data/addon-end-of-life.yaml (every row " +
			"sourced): ingress-nginx's controller images (registry.k8s.io/ingress-nginx/controller and controller-chroot, and " +
			"the older k8s.gcr.io ones), whose project was retired on 24 March 2026 after best-effort maintenance, its last " +
			"releases v1.15.1, v1.14.5 and v1.13.9. High once the end date has passed: every vulnerability found afterwards " +
			"stays open, whatever the tag. Medium within six months before it (our policy). Builds a provider or " +
			"distribution ships from its own image repository are not matched: their vendor's support terms apply, and " +
			"the check does not judge them. A second rule reads the nodes for distributions their vendor has ended: " +
			"RKE (RKE1), by the annotations rke.cattle.io/internal-ip and rke.cattle.io/external-ip that RKE's own node " +
			"code sets on every node it provisions (a node whose kubelet version names RKE2 or k3s is not counted), ended " +
			"by SUSE on 31 July 2025; high after that day, medium within six months before it.",
		Reads: check.Needs(snapshot.Deployments, snapshot.DaemonSets, snapshot.Nodes),
		Rules: []check.Rule{
			{ID: ruleAddonEOL, Summary: "no workload runs an add-on whose project has ended, or is about to end, maintenance",
				Needs: []snapshot.Resource{snapshot.Deployments, snapshot.DaemonSets}},
			{ID: ruleDistroEOL, Summary: "no node was built by a distribution whose vendor has ended it, or is about to",
				Needs: []snapshot.Resource{snapshot.Nodes}},
		},
		Cases: check.Prevents(caseIngressEOL, caseRKE1EOL),
		Run: func(ctx *check.Context) ([]finding.Finding, error) {
			out, err := runAddonEndOfLife(ctx, now().UTC())
			if err != nil {
				return nil, err
			}
			return append(out, runDistributionEndOfLife(ctx, now().UTC())...), nil
		},
	}
}

func runAddonEndOfLife(ctx *check.Context, now time.Time) ([]finding.Finding, error) {
	facts, err := loadAddonEOLFacts()
	if err != nil {
		return nil, err
	}
	s := ctx.Snapshot
	var out []finding.Finding
	judge := func(kind string, meta *metav1.ObjectMeta, spec *corev1.PodSpec) {
		for j := range spec.Containers {
			c := &spec.Containers[j] // not a copy of the whole container per container
			repo, _, _ := check.ImageParts(c.Image)
			for i := range facts.Addons {
				a := &facts.Addons[i]
				if !slices.Contains(a.Images, repo) {
					continue
				}
				days := int(a.end.Sub(now).Hours() / 24)
				if days > facts.Thresholds.WarnDays {
					continue
				}
				ref := check.Ref("apps/v1", kind, meta)
				f := finding.Finding{
					Check:   addonEOLID,
					Objects: []finding.ObjectRef{ref},
					Cases:   []string{a.Case},
					Evidence: []string{fmt.Sprintf("%s end of maintenance %s; final releases %s (%s)", a.Name, a.EndOfLife,
						strings.Join(a.FinalReleases, ", "), strings.Join(a.Sources, " "))},
					Remediation: fmt.Sprintf("Plan the move off %s now: to a Gateway API implementation or another maintained "+
						"controller; list what depends on it first (kubectl get ingressclass, and the Ingresses naming its class).", a.Name),
				}
				after := strings.Join(strings.Fields(a.After), " ")
				if !now.Before(a.end) {
					f.Severity = finding.High
					f.Title = fmt.Sprintf("%s %s/%s runs %s, retired on %s", kind, meta.Namespace, meta.Name, a.Name, a.EndOfLife)
					f.Message = fmt.Sprintf("%s %s/%s runs %s (container %s, image %s). The project ended maintenance on %s: %s. "+
						"The controller keeps serving, so nothing in the cluster shows it, but the project ships no fix for any "+
						"vulnerability found since. Its last releases were %s.", kind, meta.Namespace, meta.Name, a.Name, c.Name, c.Image, a.EndOfLife,
						after, strings.Join(a.FinalReleases, ", "))
				} else {
					f.Severity = finding.Medium
					f.Title = fmt.Sprintf("%s %s/%s runs %s, which ends maintenance on %s", kind, meta.Namespace, meta.Name, a.Name, a.EndOfLife)
					f.Message = fmt.Sprintf("%s %s/%s runs %s (container %s, image %s). The project ends maintenance on %s, in %d "+
						"days: after that, %s.", kind, meta.Namespace, meta.Name, a.Name, c.Name, c.Image, a.EndOfLife, days, after)
				}
				f.AddEvidence(finding.Quote(ref, finding.Value(check.ContainerField(kind, "", c.Name, "image"), c.Image)))
				out = append(out, f)
			}
		}
	}
	for i := range s.Deployments {
		d := &s.Deployments[i]
		judge("Deployment", &d.ObjectMeta, &d.Spec.Template.Spec)
	}
	for i := range s.DaemonSets {
		d := &s.DaemonSets[i]
		judge("DaemonSet", &d.ObjectMeta, &d.Spec.Template.Spec)
	}
	return out, nil
}

// runDistributionEndOfLife reports, per ended distribution, the nodes that
// carry one of its node annotations: one finding for the cluster, since
// the whole cluster was built by it. The age of the end goes in the
// evidence so that the title and message stay the same from day to day.
func runDistributionEndOfLife(ctx *check.Context, now time.Time) []finding.Finding {
	facts, err := loadAddonEOLFacts()
	if err != nil {
		return nil
	}
	var out []finding.Finding
	for i := range facts.Distributions {
		d := &facts.Distributions[i]
		days := int(d.end.Sub(now).Hours() / 24)
		if days > facts.Thresholds.WarnDays {
			continue
		}
		var nodes []*corev1.Node
		var marks []string
		for j := range ctx.Snapshot.Nodes {
			n := &ctx.Snapshot.Nodes[j]
			if v := n.Status.NodeInfo.KubeletVersion; strings.Contains(v, "+rke2") || strings.Contains(v, "+k3s") {
				// A kubelet RKE2 or k3s built is not RKE's, whatever
				// annotation a migration or a copied manifest left behind.
				continue
			}
			for _, k := range d.NodeAnnotations {
				if _, ok := n.Annotations[k]; ok {
					nodes = append(nodes, n)
					if !slices.Contains(marks, k) {
						marks = append(marks, k)
					}
					break
				}
			}
		}
		if len(nodes) == 0 {
			continue
		}
		nodesWere := check.Subject(len(nodes), "node was", "nodes were", "built by", "built by")
		nodesCarry := check.Subject(len(nodes), "node", "nodes", "carries", "carry")
		refs, more := check.NodeRefs(nodes)
		after := strings.Join(strings.Fields(d.After), " ")
		f := finding.Finding{
			Check:   addonEOLID,
			Objects: refs,
			Cases:   []string{d.Case},
			Remediation: fmt.Sprintf("Re-platform off %s: build a cluster on a maintained distribution (for RKE, SUSE points to "+
				"RKE2 or k3s), move the workloads, then retire these nodes. This is a rebuild, not an in-place upgrade: "+
				"plan it before the next Kubernetes minor or vulnerability that needs a fix.", d.Name),
		}
		if !now.Before(d.end) {
			f.Severity = finding.High
			f.Title = fmt.Sprintf("%s %s, which its vendor ended on %s", nodesWere, d.Name, d.EndOfLife)
			f.Message = fmt.Sprintf("%s carry %s, which %s writes on the nodes it provisions: the cluster was built by %s. "+
				"Its vendor ended it on %s: %s. The cluster keeps running, so nothing in it shows the change, but no later "+
				"Kubernetes minor or fix will come for it.%s", nodesCarry, strings.Join(marks, " and "), d.Name, d.Name,
				d.EndOfLife, after, check.MoreText(more))
			f.Evidence = append(f.Evidence, fmt.Sprintf("%s ended %d days before this audit (%s)", d.Name, -days, now.Format(time.DateOnly)))
		} else {
			f.Severity = finding.Medium
			f.Title = fmt.Sprintf("%s %s, which its vendor ends on %s", nodesWere, d.Name, d.EndOfLife)
			f.Message = fmt.Sprintf("%s carry %s, which %s writes on the nodes it provisions: the cluster was built by %s. "+
				"Its vendor ends it on %s: after that, %s.%s", nodesCarry, strings.Join(marks, " and "), d.Name, d.Name,
				d.EndOfLife, after, check.MoreText(more))
			f.Evidence = append(f.Evidence, fmt.Sprintf("%s ends in %d days (%s)", d.Name, days, now.Format(time.DateOnly)))
		}
		f.Evidence = append(f.Evidence, fmt.Sprintf("%s end of life %s (%s)", d.Name, d.EndOfLife, strings.Join(d.Sources, " ")))
		var rt finding.Grouper
		for _, n := range nodes {
			rt.Add(check.NodeRef(n.Name), finding.Value("status.nodeInfo.containerRuntimeVersion", n.Status.NodeInfo.ContainerRuntimeVersion),
				finding.Value("status.nodeInfo.kubeletVersion", n.Status.NodeInfo.KubeletVersion))
		}
		f.AddEvidence(rt.Items()...)
		out = append(out, f)
	}
	return out
}
