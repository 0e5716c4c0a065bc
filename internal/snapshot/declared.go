package snapshot

import (
	"fmt"
	"slices"
	"strings"
)

// Declaration is completeness the user declares for file input: "my dump
// holds every object of these kinds" (kubegap audit --complete,
// --complete-kinds). Files cannot prove it; the user may know it (the
// dump was `kubectl get nodes,pods,ds -A -o yaml`). Declared resources are
// marked complete in the input's scope and listed in the source's
// DeclaredComplete, so every report says the completeness was declared,
// not observed.
type Declaration struct {
	// All declares complete every resource the input holds objects of
	// (or an empty typed List of).
	All bool
	// Resources are declared complete whether or not the input holds
	// objects of them: one it holds none of is then declared to have none.
	Resources []Resource
}

// Empty reports whether nothing is declared.
func (d Declaration) Empty() bool { return !d.All && len(d.Resources) == 0 }

// Declare applies d. Resources the input already holds completely in
// its whole scope (a recipe dump's, a cluster-info dump's Nodes) stay
// observed and are not listed as declared. A resource complete only in
// some namespaces (a cluster-info dump's pods) becomes complete in the
// whole scope, on the user's word, and is listed.
func (s *Snapshot) Declare(d Declaration) {
	targets := slices.Clone(d.Resources)
	if d.All {
		for _, r := range Known() {
			if c := s.Status(r); c.Status == StatusRead && !slices.Contains(targets, r) {
				targets = append(targets, r)
			}
		}
	}
	for _, r := range Known() { // in Known order, for a stable report
		if !slices.Contains(targets, r) {
			continue
		}
		c := s.Status(r)
		if c.Complete && (len(c.Namespaces) == 0 || !r.Namespaced || slices.Equal(c.Namespaces, s.Source.Scope.Namespaces)) {
			continue
		}
		s.SetCoverage(r, StatusRead, "declared complete by the user (not observed)")
		s.SetComplete(r, s.Source.Scope.Namespaces)
		s.Source.DeclaredComplete = append(s.Source.DeclaredComplete, r.String())
	}
	if len(s.Source.DeclaredComplete) > 0 {
		s.index = buildIndex(s)
	}
}

// DeclaredText is the line a report prints for declared completeness, or
// "" when nothing was declared.
func DeclaredText(src Source) string {
	if len(src.DeclaredComplete) == 0 {
		return ""
	}
	var names []string
	for _, name := range src.DeclaredComplete {
		if r, ok := Parse(name); ok {
			names = append(names, r.Resource)
		} else {
			names = append(names, name)
		}
	}
	return "declared complete by the user, not observed: " + strings.Join(names, ", ") + " (" + src.Scope.String() + ")"
}

// CompletenessNotes are the lines a report prints beside its scope about
// completeness the input's layout proves (a cluster-info dump) or the
// user declared; none for other input.
func CompletenessNotes(src Source) []string {
	var out []string
	if src.ClusterInfo != nil {
		out = append(out, src.ClusterInfo.String())
	}
	if t := DeclaredText(src); t != "" {
		out = append(out, t)
	}
	return out
}

// shortNames are the short names kube-apiserver gives the built-in
// resources kubegap reads (each resource's ShortNames in k8s.io/kubernetes
// v1.37.2 pkg/registry/*/*/storage, and apiextensions-apiserver's for
// CRDs), which kubectl accepts for them.
var shortNames = map[Resource][]string{
	Nodes: {"no"}, Namespaces: {"ns"}, Pods: {"po"}, Services: {"svc"}, Events: {"ev"},
	DaemonSets: {"ds"}, Deployments: {"deploy"}, ReplicaSets: {"rs"}, StatefulSets: {"sts"},
	PodDisruptionBudgets: {"pdb"}, CronJobs: {"cj"}, Ingresses: {"ing"}, NetworkPolicies: {"netpol"},
	PersistentVolumes: {"pv"}, PersistentVolumeClaims: {"pvc"}, StorageClasses: {"sc"},
	HorizontalPodAutoscalers: {"hpa"}, ConfigMaps: {"cm"}, CustomResourceDefinitions: {"crd", "crds"},
}

// ParseKinds resolves resource names as kubectl spells them: plural
// ("pods"), singular ("pod"), short name ("po"), kind ("Pod"),
// RESOURCE.GROUP ("daemonsets.apps") or RESOURCE.VERSION.GROUP, case
// aside. A bare name two groups share ("events") means the core group's,
// as kubectl takes it.
func ParseKinds(names []string) ([]Resource, error) {
	var out []Resource
	for _, n := range names {
		n = strings.ToLower(strings.TrimSpace(n))
		if n == "" {
			continue
		}
		r, ok := resolveName(n)
		if !ok {
			var known []string
			for _, k := range Known() {
				known = append(known, k.Resource)
			}
			return nil, fmt.Errorf("%q is not a resource kubegap reads (it reads %s)", n, strings.Join(slices.Compact(known), ", "))
		}
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out, nil
}

func resolveName(n string) (Resource, bool) {
	for _, r := range Known() {
		names := append([]string{r.Resource, strings.ToLower(r.Kind), RecipeName(r)}, shortNames[r]...)
		if r.Group != "" {
			names = append(names, r.Resource+"."+r.Version+"."+r.Group)
		}
		if slices.Contains(names, n) {
			return r, true
		}
	}
	return Resource{}, false
}
