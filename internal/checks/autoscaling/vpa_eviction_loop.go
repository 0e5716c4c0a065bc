package autoscaling

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

const (
	vpaEvictionLoopID = "vpa-eviction-loop"
	rulePodLimitRange = "pod-limitrange-multi-container"
	vpaEvictionCase   = "vpa-updater-eviction-loops-and-mass-evictions-2019-2026"
)

// vpaEvictingModes are the updateModes in which the VPA updater evicts (or
// resizes, then evicts) running pods. An unset mode is Recreate, the
// default (VPA's quickstart.md; "Auto" is its deprecated alias).
var vpaEvictingModes = map[string]bool{"": true, "Auto": true, "Recreate": true, "InPlaceOrRecreate": true}

func vpaEvictionLoopCheck() check.Check {
	return check.Check{
		ID:       vpaEvictionLoopID,
		Title:    "VerticalPodAutoscalers that evict multi-container pods in a namespace with a Pod LimitRange",
		Severity: finding.Medium,
		Description: "Reads VerticalPodAutoscalers (autoscaling.k8s.io/v1), LimitRanges and the workloads the VPAs " +
			"target. A VPA whose updatePolicy.updateMode evicts pods (Recreate, its default when unset; Auto; " +
			"InPlaceOrRecreate) and whose target's pod template has two or more containers the VPA manages, in a " +
			"namespace with a LimitRange that has a limit of type Pod, is medium: VPA 1.6.0 fits a pod's recommendations " +
			"to a Pod LimitRange by scaling all containers together, which can leave a container's target outside its " +
			"own bounds, and the updater then evicts the pod in every loop (kubernetes/autoscaler#8776, #9935). VPAs " +
			"in Off or Initial mode, and single-container targets, are not flagged.",
		Reads: []check.Input{check.Optional(snapshot.VerticalPodAutoscalers), check.Optional(snapshot.LimitRanges),
			check.Optional(snapshot.Deployments), check.Optional(snapshot.StatefulSets),
			check.Optional(snapshot.DaemonSets), check.Optional(snapshot.ReplicaSets)},
		Rules: []check.Rule{
			{ID: rulePodLimitRange, Summary: "no evicting VPA manages a multi-container pod in a namespace with a Pod LimitRange",
				Needs: []snapshot.Resource{snapshot.VerticalPodAutoscalers, snapshot.LimitRanges}},
		},
		Cases: check.Cite(check.Prevents(vpaEvictionCase)),
		Run:   runVPAEvictionLoop,
	}
}

// workloadIndex holds the pod templates of the workloads read, by kind
// and namespace/name, so that each VPA's target is one map lookup.
type workloadIndex map[string]map[string]*corev1.PodTemplateSpec

func indexWorkloads(s *snapshot.Snapshot) workloadIndex {
	idx := workloadIndex{"Deployment": {}, "StatefulSet": {}, "DaemonSet": {}, "ReplicaSet": {}}
	for i := range s.Deployments {
		d := &s.Deployments[i]
		idx["Deployment"][d.Namespace+"/"+d.Name] = &d.Spec.Template
	}
	for i := range s.StatefulSets {
		d := &s.StatefulSets[i]
		idx["StatefulSet"][d.Namespace+"/"+d.Name] = &d.Spec.Template
	}
	for i := range s.DaemonSets {
		d := &s.DaemonSets[i]
		idx["DaemonSet"][d.Namespace+"/"+d.Name] = &d.Spec.Template
	}
	for i := range s.ReplicaSets {
		d := &s.ReplicaSets[i]
		idx["ReplicaSet"][d.Namespace+"/"+d.Name] = &d.Spec.Template
	}
	return idx
}

// workloadResource is the resource each target kind is read as.
var workloadResource = map[string]snapshot.Resource{"Deployment": snapshot.Deployments,
	"StatefulSet": snapshot.StatefulSets, "DaemonSet": snapshot.DaemonSets, "ReplicaSet": snapshot.ReplicaSets}

// podTemplate finds the pod template of a VPA's target. found is false
// when the target is not among the workloads read; complete says whether
// its kind was read whole in the namespace (never for kinds not read:
// CronJobs, Argo Rollouts, custom controllers).
func (idx workloadIndex) podTemplate(ctx *check.Context, ns, kind, name string) (tmpl *corev1.PodTemplateSpec, found, complete bool) {
	byName, ok := idx[kind]
	if !ok {
		return nil, false, false
	}
	if t, ok := byName[ns+"/"+name]; ok {
		return t, true, true
	}
	return nil, false, ctx.CompleteIn(workloadResource[kind], ns)
}

// managedContainers are the template's containers the VPA does not turn
// off through spec.resourcePolicy.containerPolicies (by name, or "*").
func managedContainers(vpa unstructured.Unstructured, tmpl *corev1.PodTemplateSpec) []string {
	off := map[string]bool{}
	policies, _ := nestedSlice(vpa.Object, "spec", "resourcePolicy", "containerPolicies")
	for _, p := range policies {
		m, _ := p.(map[string]any)
		name, _ := m["containerName"].(string)
		if mode, _ := m["mode"].(string); mode == "Off" {
			off[name] = true
		}
	}
	var out []string
	for _, c := range tmpl.Spec.Containers {
		if !off[c.Name] && !(off["*"] && !hasPolicy(policies, c.Name)) {
			out = append(out, c.Name)
		}
	}
	return out
}

// hasPolicy reports whether a container has a policy of its own, which
// overrides the "*" one.
func hasPolicy(policies []any, name string) bool {
	for _, p := range policies {
		if m, _ := p.(map[string]any); m["containerName"] == name {
			return true
		}
	}
	return false
}

// podLimitRanges maps each namespace to its LimitRanges holding a limit of
// type Pod, with that limit's index.
func podLimitRanges(s *snapshot.Snapshot) map[string][]limitAt {
	out := map[string][]limitAt{}
	for _, lr := range s.CustomObjects(snapshot.LimitRanges) {
		limits, _ := nestedSlice(lr.Object, "spec", "limits")
		for i, l := range limits {
			if m, _ := l.(map[string]any); m["type"] == "Pod" {
				out[lr.GetNamespace()] = append(out[lr.GetNamespace()], limitAt{name: lr.GetName(), index: i})
				break
			}
		}
	}
	return out
}

type limitAt struct {
	name  string
	index int
}

func runVPAEvictionLoop(ctx *check.Context) ([]finding.Finding, error) {
	s := ctx.Snapshot
	vpas := s.CustomObjects(snapshot.VerticalPodAutoscalers)
	if len(vpas) == 0 {
		// No VPA read: nothing to judge; an unread resource leaves the rule
		// unknown through its Needs.
		return nil, nil
	}
	podLRs := podLimitRanges(s)
	idx := indexWorkloads(s)
	var g finding.Grouper
	var objects []finding.ObjectRef
	var lines []string
	unknownLR, unknownTarget := 0, 0
	for _, vpa := range vpas {
		ns := vpa.GetNamespace()
		mode, modeFound, _ := unstructured.NestedString(vpa.Object, "spec", "updatePolicy", "updateMode")
		if !vpaEvictingModes[mode] {
			continue
		}
		lrs := podLRs[ns]
		if len(lrs) == 0 {
			if !ctx.CompleteIn(snapshot.LimitRanges, ns) {
				unknownLR++
			}
			continue
		}
		kind, _, _ := unstructured.NestedString(vpa.Object, "spec", "targetRef", "kind")
		name, _, _ := unstructured.NestedString(vpa.Object, "spec", "targetRef", "name")
		tmpl, found, complete := idx.podTemplate(ctx, ns, kind, name)
		if !found {
			if !complete {
				unknownTarget++
			}
			continue
		}
		managed := managedContainers(vpa, tmpl)
		if len(managed) < 2 {
			continue
		}
		vref := finding.ObjectRef{APIVersion: "autoscaling.k8s.io/v1", Kind: "VerticalPodAutoscaler", Namespace: ns, Name: vpa.GetName()}
		modeField := finding.Absent("spec.updatePolicy.updateMode")
		if modeFound {
			modeField = finding.Value("spec.updatePolicy.updateMode", mode)
		}
		g.Add(vref, modeField, finding.Value("spec.targetRef.kind", kind), finding.Value("spec.targetRef.name", name))
		wref := finding.ObjectRef{APIVersion: "apps/v1", Kind: kind, Namespace: ns, Name: name}
		var cf []finding.Field
		for i := range tmpl.Spec.Containers {
			cf = append(cf, finding.Value(fmt.Sprintf("spec.template.spec.containers[%d].name", i), tmpl.Spec.Containers[i].Name))
		}
		g.Add(wref, cf...)
		lr := lrs[0]
		lref := finding.ObjectRef{APIVersion: "v1", Kind: "LimitRange", Namespace: ns, Name: lr.name}
		g.Add(lref, finding.Value(fmt.Sprintf("spec.limits[%d].type", lr.index), "Pod"))
		objects = append(objects, vref, wref, lref)
		shown := mode
		if !modeFound {
			shown = "unset (Recreate)"
		}
		lines = append(lines, fmt.Sprintf("VPA %s/%s (updateMode %s) manages containers %s of %s %s; LimitRange %s has a limit of type Pod",
			ns, vpa.GetName(), shown, strings.Join(managed, ", "), kind, name, lr.name))
	}
	if unknownLR > 0 {
		ctx.Incomplete(rulePodLimitRange, "LimitRanges were not read whole in the namespaces of %s, so whether a Pod LimitRange applies there is unknown",
			check.Plural(unknownLR, "evicting VPA", "evicting VPAs"))
	}
	if unknownTarget > 0 {
		ctx.Incomplete(rulePodLimitRange, "the targets of %s were not among the workloads read, so their containers are unknown",
			check.Plural(unknownTarget, "evicting VPA", "evicting VPAs"))
	}
	if len(lines) == 0 {
		return nil, nil
	}
	sort.Strings(lines)
	n := len(lines)
	if len(objects) > check.MaxListedObjects {
		objects = objects[:check.MaxListedObjects]
	}
	f := finding.Finding{Check: vpaEvictionLoopID, Rule: rulePodLimitRange, Severity: finding.Medium,
		Cases: []string{vpaEvictionCase}, Objects: objects}
	f.AddEvidence(g.Items()...)
	if n > check.MaxEvidence {
		lines = lines[:check.MaxEvidence]
	}
	f.Evidence = append(f.Evidence, lines...)
	f.Title = fmt.Sprintf("%s evict multi-container pods in a namespace with a Pod LimitRange",
		check.Plural(n, "VerticalPodAutoscaler may", "VerticalPodAutoscalers may"))
	f.Message = fmt.Sprintf("%s pods with two or more managed containers, in a namespace whose LimitRange "+
		"has a limit of type Pod. VPA fits a pod's recommendations to a Pod LimitRange by scaling the containers' "+
		"values together; once one container's recommendation is stable, that can leave its target outside its own "+
		"lower and upper bounds, and the updater then evicts the pod in every loop (each minute, in a VPA 1.6.0 "+
		"report) although the recommendation has not changed. No fix was merged in the reports read.",
		check.Plural(n, "An evicting VPA manages", "Evicting VPAs manage"))
	f.Remediation = "Until a VPA release fixes the Pod LimitRange capping (kubernetes/autoscaler#9935, open), set these " +
		"VPAs to Initial or Off, or turn off all but one container in spec.resourcePolicy.containerPolicies, or replace " +
		"the Pod limit with per-container (type Container) limits; watch for EvictedByVPA events on the targets."
	return []finding.Finding{f}, nil
}

// nestedSlice is unstructured.NestedSlice without its deep copy: the
// check only reads the list.
func nestedSlice(obj map[string]any, fields ...string) ([]any, bool) {
	v, found, err := unstructured.NestedFieldNoCopy(obj, fields...)
	if !found || err != nil {
		return nil, false
	}
	s, ok := v.([]any)
	return s, ok
}
