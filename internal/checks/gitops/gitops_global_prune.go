package gitops

import (
	_ "embed"
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

//go:embed data/argocd.yaml
var argoFactsYAML []byte

type behaviour struct {
	Name    string   `json:"name"`
	Fact    string   `json:"fact"`
	Sources []string `json:"sources"`
}

// argoFacts is data/argocd.yaml.
type argoFacts struct {
	Behaviours []behaviour `json:"behaviours"`

	// fact maps a behaviour's name to its fact.
	fact map[string]string
}

var loadArgoFacts = check.Facts("Argo CD facts", argoFactsYAML, func(f *argoFacts) error {
	f.fact = map[string]string{}
	for _, b := range f.Behaviours {
		f.fact[b.Name] = strings.TrimSpace(b.Fact)
	}
	for _, need := range []string{"automated-prune", "all-at-once", "generated-deletion", "prune-false", "controller-policy"} {
		if f.fact[need] == "" {
			return errors.New("Argo CD facts: no " + need)
		}
	}
	return nil
})

const (
	checkID = "gitops-global-prune"
	caseID  = "skyscanner-template-global-delete-2021"
	rule    = "unstaged-prune-fan-out"
	// minClusters is policy: from two destination clusters one commit
	// reaches more than one cluster at the same moment, which is what
	// cell or region isolation exists to prevent.
	minClusters = 2
	maxListed   = 5
)

func gitopsGlobalPruneCheck() check.Check {
	return check.Check{
		ID:       checkID,
		Title:    "Argo CD ApplicationSets that prune in every cluster at once",
		Severity: finding.Medium,
		Description: "Reads Argo CD ApplicationSets and the Applications they generated (by owner reference) and " +
			"reports an ApplicationSet whose template syncs automatically with prune on, whose Applications target " +
			"two or more clusters, and which declares no RollingSync strategy: one change to its source or template " +
			"is applied, deletions included, to every cluster at the same moment. A Prune=false or Prune=confirm " +
			"sync option in the template counts as a guard; per-resource Prune=false annotations live in the " +
			"rendered manifests, which kubegap does not see. Only the cluster Argo CD runs in holds these objects; " +
			"whether the controller has progressive syncs enabled (a flag or a ConfigMap key) is not read, so a " +
			"declared RollingSync is taken at its word.",
		Reads: []check.Input{
			check.Optional(snapshot.ArgoApplicationSets),
			check.Optional(snapshot.ArgoApplications),
		},
		Rules: []check.Rule{
			{ID: rule, Summary: "ApplicationSets with automated prune, no RollingSync, generating into two or more clusters",
				Needs: []snapshot.Resource{snapshot.ArgoApplicationSets, snapshot.ArgoApplications}},
		},
		Cases: check.Prevents(caseID),
		Run:   runGitopsGlobalPrune,
	}
}

func runGitopsGlobalPrune(ctx *check.Context) ([]finding.Finding, error) {
	argo, err := loadArgoFacts()
	if err != nil {
		return nil, err
	}
	facts := argo.fact
	s := ctx.Snapshot
	owned := appsByOwner(s.CustomObjects(snapshot.ArgoApplications))
	var out []finding.Finding
	for _, as := range s.CustomObjects(snapshot.ArgoApplicationSets) {
		if f, ok := judgeAppSet(ctx, as, owned[appSetKey(as.GetNamespace(), as.GetName())], facts); ok {
			out = append(out, f)
		}
	}
	return out, nil
}

// appSetKey names an ApplicationSet by namespace/name.
func appSetKey(ns, name string) string { return ns + "/" + name }

// ownedApps is what the Applications one ApplicationSet owns say about
// where they deploy.
type ownedApps struct {
	// clusters are the distinct clusters (server URL, else name), in the
	// order the Applications name them first.
	clusters []string
	// apps are the Applications with a destination, in input order, each
	// with its destination field.
	apps []ownedApp
}

type ownedApp struct {
	app         *unstructured.Unstructured
	path, value string
}

// appsByOwner maps each owning ApplicationSet (appSetKey, in the
// Application's namespace) to the Applications with a destination that it
// owns. Built once, so that each ApplicationSet reads only its own
// Applications: scanning every Application for every ApplicationSet, and
// decoding each one's owner references each time, was quadratic.
func appsByOwner(apps []unstructured.Unstructured) map[string]*ownedApps {
	out := map[string]*ownedApps{}
	for i := range apps {
		app := &apps[i]
		path, dest := destinationField(app.Object)
		if dest == "" {
			continue
		}
		var seen []string // owners already given this Application
		for _, ref := range app.GetOwnerReferences() {
			if ref.Kind != snapshot.ArgoApplicationSets.Kind || slices.Contains(seen, ref.Name) {
				continue
			}
			seen = append(seen, ref.Name)
			k := appSetKey(app.GetNamespace(), ref.Name)
			o := out[k]
			if o == nil {
				o = &ownedApps{}
				out[k] = o
			}
			if !slices.Contains(o.clusters, dest) {
				o.clusters = append(o.clusters, dest)
			}
			o.apps = append(o.apps, ownedApp{app: app, path: path, value: dest})
		}
	}
	return out
}

// destinationField is the field that names an Application's cluster, and
// its value: spec.destination.server, else spec.destination.name.
func destinationField(obj map[string]any) (path, value string) {
	if s, _, _ := unstructured.NestedString(obj, "spec", "destination", "server"); s != "" {
		return "spec.destination.server", s
	}
	n, _, _ := unstructured.NestedString(obj, "spec", "destination", "name")
	return "spec.destination.name", n
}

// destinationItems quotes the destinations of the Applications an
// ApplicationSet owns, Applications with the same cluster together.
func destinationItems(owned *ownedApps) []finding.EvidenceItem {
	var g finding.Grouper
	for _, a := range owned.apps {
		g.Add(check.Ref("argoproj.io/v1alpha1", "Application", a.app), finding.Value(a.path, a.value))
	}
	return g.Items()
}

// pruning reports whether a template's sync policy prunes automatically,
// and why not when it does not.
func pruning(as unstructured.Unstructured) (bool, string) {
	auto, found, _ := unstructured.NestedMap(as.Object, "spec", "template", "spec", "syncPolicy", "automated")
	if !found {
		return false, "no automated sync"
	}
	if enabled, ok := auto["enabled"].(bool); ok && !enabled {
		return false, "automated.enabled is false"
	}
	if prune, _ := auto["prune"].(bool); !prune {
		return false, "automated sync without prune"
	}
	opts, _, _ := unstructured.NestedStringSlice(as.Object, "spec", "template", "spec", "syncPolicy", "syncOptions")
	for _, o := range opts {
		if o == "Prune=false" || o == "Prune=confirm" {
			return false, "syncOptions " + o
		}
	}
	return true, ""
}

func judgeAppSet(ctx *check.Context, as unstructured.Unstructured, owned *ownedApps, facts map[string]string) (finding.Finding, bool) {
	name := appSetKey(as.GetNamespace(), as.GetName())
	if patch, _, _ := unstructured.NestedString(as.Object, "spec", "templatePatch"); strings.Contains(patch, "syncPolicy") {
		ctx.Incomplete(rule, "ApplicationSet %s sets its sync policy through templatePatch, which kubegap does not render", name)
		return finding.Finding{}, false
	}
	if ok, _ := pruning(as); !ok {
		return finding.Finding{}, false
	}
	if st, _, _ := unstructured.NestedString(as.Object, "spec", "strategy", "type"); st == "RollingSync" {
		return finding.Finding{}, false
	}
	var clusters []string
	if owned != nil {
		clusters = owned.clusters
	}
	if len(clusters) < minClusters {
		if !ctx.CompleteIn(snapshot.ArgoApplications, as.GetNamespace()) {
			ctx.Incomplete(rule, "ApplicationSet %s prunes automatically without RollingSync, but its Applications "+
				"were not read completely, so how many clusters it reaches is unknown", name)
		}
		return finding.Finding{}, false
	}
	return globalPruneFinding(as, owned, facts), true
}

func globalPruneFinding(as unstructured.Unstructured, owned *ownedApps, facts map[string]string) finding.Finding {
	clusters := slices.Sorted(slices.Values(owned.clusters))
	name := appSetKey(as.GetNamespace(), as.GetName())
	policy, _, _ := unstructured.NestedString(as.Object, "spec", "syncPolicy", "applicationsSync")
	preserve, _, _ := unstructured.NestedBool(as.Object, "spec", "syncPolicy", "preserveResourcesOnDeletion")
	strategy, _, _ := unstructured.NestedString(as.Object, "spec", "strategy", "type")
	ref := check.Ref("argoproj.io/v1alpha1", "ApplicationSet", &as)
	// The template's prune, the strategy (absent or not RollingSync) and
	// the two settings that decide what a generator change deletes.
	fields := []finding.Field{finding.Value("spec.template.spec.syncPolicy.automated.prune", true),
		finding.Value("spec.strategy.type", strategy), finding.Value("spec.syncPolicy.applicationsSync", policy)}
	if preserve {
		fields = append(fields, finding.Value("spec.syncPolicy.preserveResourcesOnDeletion", true))
	}
	f := finding.Finding{
		Check:    checkID,
		Severity: finding.Medium,
		Title:    fmt.Sprintf("ApplicationSet %s prunes automatically in %d clusters at once", name, len(clusters)),
		Message: fmt.Sprintf("ApplicationSet %s generates Applications into %d clusters, syncs them automatically with "+
			"prune on, and declares no RollingSync strategy. A change to its source or template that drops objects "+
			"from the rendered manifests, even one reviewed as a no-op, deletes those objects in every one of these "+
			"clusters at the same moment, bypassing whatever isolation the clusters give each other.",
			name, len(clusters)),
		Objects: []finding.ObjectRef{ref},
		Remediation: "Stage the rollout: a RollingSync strategy with a canary step (and progressive syncs enabled on " +
			"the controller), or one ApplicationSet per ring; keep prune off, or set Prune=false on critical " +
			"resources; show reviewers the rendered diff of template changes; and consider applicationsSync " +
			"create-update with preserveResourcesOnDeletion so a generator change cannot delete whole Applications.",
		Cases: []string{caseID},
	}
	f.AddEvidence(finding.Quote(ref, fields...))
	f.AddEvidence(destinationItems(owned)...)
	f.Evidence = append(f.Evidence,
		fmt.Sprintf("its Applications deploy to %d clusters: %s", len(clusters), check.ListText(clusters, maxListed)),
		deletionEvidence(policy, preserve),
		facts["automated-prune"], facts["all-at-once"], facts["generated-deletion"])
	return f
}

func deletionEvidence(policy string, preserve bool) string {
	switch {
	case policy == "create-only" || policy == "create-update":
		return fmt.Sprintf("spec.syncPolicy.applicationsSync: %s (generated Applications are not deleted)", policy)
	case preserve:
		return "spec.syncPolicy.preserveResourcesOnDeletion: true (a deleted Application leaves its resources)"
	default:
		return "a generator change that drops a cluster also deletes that Application and what it deployed " +
			"(no applicationsSync create-only/create-update, no preserveResourcesOnDeletion)"
	}
}
