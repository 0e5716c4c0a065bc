package upgrade

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

const (
	ruleRemovedInManifests = "manifests"
	ruleWrittenThrough     = "written-through"
)

var removedAPICases = []string{
	"ingress-nginx-v0-on-k8s-122-ingress-v1beta1-2021",
	"helm-release-history-psp-blocks-upgrade-125-2023",
	"coredns-endpointslice-v1beta1-after-upgrade-2023",
	"psp-mutation-reliance-before-removal-2023",
}

// removedAPIReads are the resources whose objects the check looks at:
// every kind kubegap lists that people or tools write, pods and events
// aside.
var removedAPIReads = []snapshot.Resource{
	snapshot.DaemonSets, snapshot.Deployments, snapshot.StatefulSets, snapshot.ReplicaSets,
	snapshot.Jobs, snapshot.CronJobs, snapshot.PodDisruptionBudgets, snapshot.HorizontalPodAutoscalers,
	snapshot.Ingresses, snapshot.IngressClasses, snapshot.NetworkPolicies, snapshot.EndpointSlices,
	snapshot.ValidatingWebhookConfigurations, snapshot.MutatingWebhookConfigurations,
	snapshot.ClusterRoles, snapshot.ClusterRoleBindings, snapshot.Roles, snapshot.RoleBindings,
	snapshot.StorageClasses, snapshot.CSIDrivers, snapshot.APIServices, snapshot.CustomResourceDefinitions,
}

// removedAPIsCheck finds objects that depend on API versions the API
// server no longer serves, or will not serve at --target-version.
func removedAPIsCheck() check.Check {
	return check.Check{
		ID:       "removed-apis",
		Title:    "Manifests and clients on API versions the server no longer serves",
		Severity: finding.High,
		Description: "Looks for API group/versions that Kubernetes stopped serving (the Deprecated API Migration Guide's " +
			"table, in data/upgrade-facts.yaml): in manifests given with --from, the apiVersion an object is written " +
			"in, which kubectl apply will be refused for once the server no longer serves it (high); in live objects, " +
			"the versions their managedFields and last-applied configuration show they were written through (the " +
			"kubegap.dev/written-as annotation kubegap records while reading), which tells that some client or " +
			"pipeline still holds manifests in that version (low once removed, high when --target-version removes " +
			"it). With --target-version the same table is read against the target: versions removed between the " +
			"control plane's minor and the target are preflight findings to fix before upgrading. Kinds kubegap " +
			"does not list live (PodSecurityPolicy, FlowSchema, RuntimeClass, Lease) are only seen in files. " +
			"Without a server version, manifests are judged against every removal and the check is partial.",
		// Pods: a kube-apiserver Pod's image gives the control plane's version when the input has no /version.
		Reads: append(check.Needs(removedAPIReads...), check.Optional(snapshot.Pods)),
		Rules: []check.Rule{
			{ID: ruleRemovedInManifests, Summary: "no manifest in the input is written in a removed API version",
				Needs: removedAPIReads},
			{ID: ruleWrittenThrough, Summary: "no live object was last written through a removed or soon-removed version",
				Needs: removedAPIReads},
		},
		Cases: check.Graded(removedAPICases, check.Prevents("helm-release-history-psp-blocks-upgrade-125-2023", "psp-mutation-reliance-before-removal-2023"), check.Related(caseIngressNginxV0, "coredns-endpointslice-v1beta1-after-upgrade-2023")),
		Run:   runRemovedAPIs,
	}
}

// use is one object written in a removed version, and how we know.
type use struct {
	ref      finding.ObjectRef
	declared bool // the manifest says so (files); else managedFields history
	// asRead: the input holds the object in the removed version, so its
	// apiVersion field there is that version: kept as read, or converted
	// by the loader as it read it (snapshot.ConvertedOnLoad). Otherwise
	// the input holds kubegap's annotation (a snapshot kubegap wrote) or,
	// for a live object, managedFields history.
	asRead bool
}

func runRemovedAPIs(ctx *check.Context) ([]finding.Finding, error) {
	f, err := loadFacts()
	if err != nil {
		return nil, err
	}
	s := ctx.Snapshot
	cp, cpEvidence, known := check.ServerVersion(s)
	if !known {
		ctx.Incomplete(ruleRemovedInManifests, "no API server version in the input: every removed version is reported, whether or not this cluster still serves it")
		ctx.Incomplete(ruleWrittenThrough, "no API server version in the input")
	}
	uses := map[*removedAPI]map[string][]use{} // row -> kind -> objects
	record := func(apiVersion, kind string, m metav1.Object, declared, asRead bool) {
		row := f.removedAs(apiVersion, kind)
		if row == nil {
			return
		}
		if uses[row] == nil {
			uses[row] = map[string][]use{}
		}
		ref := finding.ObjectRef{APIVersion: apiVersion, Kind: kind, Namespace: m.GetNamespace(), Name: m.GetName()}
		uses[row][kind] = append(uses[row][kind], use{ref: ref, declared: declared, asRead: asRead})
	}
	s.EachObject(func(apiVersion, kind string, m metav1.Object) {
		a := m.GetAnnotations()
		switch {
		case a[snapshot.OriginalAPIVersionAnnotation] != "":
			record(a[snapshot.OriginalAPIVersionAnnotation], kind, m, true, s.ConvertedOnLoad(kind, m.GetNamespace(), m.GetName()))
		case s.Source.Type == snapshot.SourceFiles && f.removedAs(apiVersion, kind) != nil:
			record(apiVersion, kind, m, true, true) // a kind kubegap keeps as written
		}
		for _, gv := range strings.Split(a[snapshot.AnnotationWrittenAs], ",") {
			if gv != "" {
				record(gv, kind, m, false, false)
			}
		}
	})
	var out []finding.Finding
	rows := slices.SortedFunc(maps.Keys(uses), func(a, b *removedAPI) int {
		if a.removedIn != b.removedIn {
			if a.removedIn.Less(b.removedIn) {
				return -1
			}
			return 1
		}
		return strings.Compare(a.GroupVersion, b.GroupVersion)
	})
	for _, row := range rows {
		for _, kind := range slices.Sorted(maps.Keys(uses[row])) {
			var declared, history []use
			for _, u := range uses[row][kind] {
				if u.declared {
					declared = append(declared, u)
				} else {
					history = append(history, u)
				}
			}
			if len(declared) > 0 {
				if fd, ok := removedFinding(ctx, row, kind, declared, true, cp, cpEvidence, known); ok {
					out = append(out, fd)
				}
			}
			if len(history) > 0 {
				if fd, ok := removedFinding(ctx, row, kind, history, false, cp, cpEvidence, known); ok {
					out = append(out, fd)
				}
			}
		}
	}
	return out, nil
}

// removedFinding judges objects of one kind in one removed version: gone
// already, gone at the target, or not yet relevant (ok false).
func removedFinding(ctx *check.Context, row *removedAPI, kind string, us []use, declared bool,
	cp check.KubeVersion, cpEvidence string, known bool) (finding.Finding, bool) {
	removedNow := !known || !cp.Less(row.removedIn)
	atTarget := ctx.Target != nil && !ctx.Target.Less(row.removedIn) && (!known || cp.Less(row.removedIn))
	if !removedNow && !atTarget {
		return finding.Finding{}, false
	}
	gvk := row.GroupVersion + " " + kind
	fd := finding.Finding{Check: "removed-apis", Cases: removedAPICases}
	// Objects the input holds in the removed version quote their
	// apiVersion, and those whose input carries kubegap's annotation
	// quote that, grouped. A live object's history stays a sentence:
	// kubegap.dev/written-as is made from managedFields it then drops.
	var written finding.Grouper
	lines := 0
	for i, u := range us {
		if i < check.MaxListedObjects {
			fd.Objects = append(fd.Objects, u.ref)
		}
		switch {
		case u.asRead:
			written.Add(u.ref, finding.Value("apiVersion", row.GroupVersion))
		case declared:
			written.Add(u.ref, finding.Entry("metadata.annotations["+snapshot.OriginalAPIVersionAnnotation+"]", row.GroupVersion))
		case lines == check.MaxEvidence:
		default:
			lines++
			fd.Evidence = append(fd.Evidence, fmt.Sprintf("%s: %s lists %s (from managedFields or last-applied-configuration)",
				u.ref, snapshot.AnnotationWrittenAs, row.GroupVersion))
		}
	}
	fd.AddEvidence(written.Items()...)
	n := check.Plural(len(us), "object", "objects")
	fd.Evidence = append(fd.Evidence, fmt.Sprintf("%s is not served from Kubernetes %s on (%s)", gvk, row.removedIn.MinorString(), strings.Join(row.Sources, ", ")))
	if known {
		fd.Evidence = append(fd.Evidence, cpEvidence)
	}
	fd.Remediation = fmt.Sprintf("Rewrite the manifests, charts and client code that use %s in %s and apply them again; "+
		"kubectl convert can translate a manifest. Check the Deprecated API Migration Guide for the fields that changed.", gvk, row.Replacement)
	switch {
	case atTarget:
		fd.Preflight = finding.PreflightBefore
		fd.Severity = finding.High
		fd.Title = fmt.Sprintf("%s %s in %s, which Kubernetes %s no longer serves", n, verb(declared), gvk, row.removedIn.MinorString())
		fd.Message = fmt.Sprintf("%s %s in %s. The upgrade to %s crosses %s, from which the API server refuses that version: "+
			"every apply, Helm upgrade or client call still using it fails after the upgrade, while the objects themselves are "+
			"kept and served in %s.", n, verb(declared), gvk, ctx.Target.MinorString(), row.removedIn.MinorString(), row.Replacement)
	case declared:
		fd.Severity = finding.High
		fd.Title = fmt.Sprintf("%s written in %s, which the API server no longer serves", n, gvk)
		fd.Message = fmt.Sprintf("%s in the input are written in %s, removed in Kubernetes %s: applying them to this cluster "+
			"is refused.", n, gvk, row.removedIn.MinorString())
		if !known {
			fd.Severity = finding.Medium
			fd.Message = fmt.Sprintf("%s in the input are written in %s, which Kubernetes %s and later no longer serve; the "+
				"input does not say which version the cluster runs.", n, gvk, row.removedIn.MinorString())
		}
	default:
		fd.Severity = finding.Low
		fd.Title = fmt.Sprintf("%s were last written through %s, removed in %s", n, gvk, row.removedIn.MinorString())
		fd.Message = fmt.Sprintf("%s still record, in their managedFields or last-applied configuration, writes through %s. "+
			"The server has refused that version since %s, so whatever pipeline or tool made those writes will fail the next "+
			"time it applies its old manifests.", n, gvk, row.removedIn.MinorString())
	}
	return fd, true
}

func verb(declared bool) string {
	if declared {
		return "are written"
	}
	return "were written through clients"
}
