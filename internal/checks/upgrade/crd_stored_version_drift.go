package upgrade

import (
	_ "embed"
	"fmt"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

const (
	crdDriftID = "crd-stored-version-drift"
	// The rules, from the one that breaks the next upgrade for certain to
	// the one that only says a migration is pending.
	ruleOperatorRemoves = "operator-release-removes-stored-version"
	ruleStoredUndefined = "stored-version-undefined"
	ruleStoredUnserved  = "stored-version-unserved-or-deprecated"
	ruleStoredSeveral   = "several-stored-versions"
)

//go:embed data/crd-stored-version-drift.yaml
var crdDriftData []byte

// operatorRemoval is one row of data/crd-stored-version-drift.yaml.
type operatorRemoval struct {
	ID       string   `json:"id"`
	Case     string   `json:"case"`
	Operator string   `json:"operator"`
	Groups   []string `json:"groups"`
	// CRDs, when set, narrows the row to these CRD names: one group's
	// kinds can drop the same version in different releases.
	CRDs         []string `json:"crds"`
	Versions     []string `json:"versions"`
	RemovedIn    string   `json:"removedIn"`
	VersionLabel string   `json:"versionLabel"`
	Note         string   `json:"note"`
	// Remediation, when set, is the operator's own migration tool or
	// steps, from the row's sources; it follows the generic rewrite-and-
	// trim steps in the finding.
	Remediation string   `json:"remediation"`
	Sources     []string `json:"sources"`

	removedIn check.KubeVersion
}

type crdDriftFacts struct {
	Rows []*operatorRemoval `json:"rows"`
}

var loadCRDDrift = check.Facts("data/crd-stored-version-drift.yaml", crdDriftData, func(f *crdDriftFacts) error {
	for _, r := range f.Rows {
		v, ok := check.ParseKubeVersion(r.RemovedIn)
		if !ok {
			return fmt.Errorf("data/crd-stored-version-drift.yaml: %s: removedIn %q", r.ID, r.RemovedIn)
		}
		r.removedIn = v
		if r.Case == "" || len(r.Groups) == 0 || len(r.Versions) == 0 {
			return fmt.Errorf("data/crd-stored-version-drift.yaml: %s: needs case, groups and versions", r.ID)
		}
	}
	return nil
})

// crdStoredVersionDriftCheck reads every CRD's status.storedVersions: the
// versions its objects may still be stored in. A version there that
// spec.versions no longer defines, serves, or keeps undeprecated, or that
// the operator's next release drops, is a migration the next upgrade of
// the CRDs needs done first.
func crdStoredVersionDriftCheck() check.Check {
	var cases []string
	if f, err := loadCRDDrift(); err == nil {
		for _, r := range f.Rows {
			if !slices.Contains(cases, r.Case) {
				cases = append(cases, r.Case)
			}
		}
	}
	crds := []snapshot.Resource{snapshot.CustomResourceDefinitions}
	return check.Check{
		ID:       crdDriftID,
		Title:    "Custom resources still stored in API versions their CRD drops or stops serving",
		Severity: finding.High,
		Description: "Reads every CustomResourceDefinition's status.storedVersions (every version its objects have been " +
			"stored in since the list was last trimmed) against its spec.versions. A stored version that an operator's " +
			"later release no longer defines (data/crd-stored-version-drift.yaml: cert-manager 1.7 drops v1alpha2, " +
			"v1alpha3 and v1beta1; Gateway API 1.0 and 1.2, Flux 2.7 and Karpenter 1.1 drop older versions of their kinds; external-snapshotter 8.2 " +
			"drops v1alpha1, the group snapshot CRDs' storage version until then, which is flagged although it is the storage version) is high: installing that release's CRDs is refused until every object is rewritten " +
			"and the version is trimmed from storedVersions. A stored version spec.versions does not define at all is " +
			"high too. One that is served false or deprecated is medium (a later release may drop it), and an older " +
			"stored version that is still served is info: a migration is pending. A CRD read without its status (a " +
			"manifest file) cannot be judged. Whether objects are still stored at the old version the API does not " +
			"show: storedVersions says they may be, until it is trimmed.",
		Reads: check.Needs(snapshot.CustomResourceDefinitions),
		Rules: []check.Rule{
			{ID: ruleOperatorRemoves, Summary: "no CRD lists as stored a version a listed operator release drops", Needs: crds},
			{ID: ruleStoredUndefined, Summary: "no CRD lists as stored a version its spec.versions does not define", Needs: crds},
			{ID: ruleStoredUnserved, Summary: "no CRD lists as stored a version it no longer serves or marks deprecated", Needs: crds},
			{ID: ruleStoredSeveral, Summary: "every CRD's objects are stored at its storage version alone", Needs: crds},
		},
		Cases: check.Graded(cases, check.Prevents("cert-manager-1-7-removed-apis-stored-versions-2022"),
			check.Prevents("gateway-api-crd-v1alpha2-stored-version-upgrade-blocked-2023-2026"),
			check.Prevents("flux-2-7-removed-beta-apis-crd-upgrade-fails-2025"),
			check.Prevents("karpenter-v1-migration-conversion-webhook-and-stored-versions-2024"),
			check.Prevents("csi-snapshot-crd-version-removals-block-upgrades-2022-2025")),
		Run: runCRDStoredVersionDrift,
	}
}

// crdVersion is one entry of a CRD's spec.versions.
type crdVersion struct {
	served, storage, deprecated bool
}

// driftHit is one finding being built: the CRDs one rule (and, for the
// operator rule, one row) flags.
type driftHit struct {
	rule  string
	row   *operatorRemoval
	sev   finding.Severity
	crds  []string
	seen  []string // the flagged stored versions, in order met
	fixes []string
	ev    finding.Grouper
	// storageDropped: a flagged version is the CRD's storage version
	// today, so there is no newer version to rewrite the objects at
	// before the new CRDs are applied.
	storageDropped bool
}

func runCRDStoredVersionDrift(ctx *check.Context) ([]finding.Finding, error) {
	facts, err := loadCRDDrift()
	if err != nil {
		return nil, err
	}
	objs := ctx.Snapshot.CustomObjects(snapshot.CustomResourceDefinitions)
	hits := map[string]*driftHit{}
	hit := func(rule string, row *operatorRemoval, sev finding.Severity) *driftHit {
		key := rule
		if row != nil {
			key += "|" + row.ID
		}
		h := hits[key]
		if h == nil {
			h = &driftHit{rule: rule, row: row, sev: sev}
			hits[key] = h
		}
		return h
	}
	noStatus, unreadable := 0, 0
	for i := range objs {
		u := &objs[i]
		stored, found, err := unstructured.NestedStringSlice(u.Object, "status", "storedVersions")
		if err != nil {
			unreadable++
			continue
		}
		if !found || len(stored) == 0 {
			noStatus++
			continue
		}
		group, _, _ := unstructured.NestedString(u.Object, "spec", "group")
		versions, storage, ok := crdVersions(u)
		if !ok {
			unreadable++
			continue
		}
		ref := check.Ref("apiextensions.k8s.io/v1", "CustomResourceDefinition", u)
		for _, sv := range stored {
			row := removalFor(facts.Rows, u.GetName(), group, sv)
			// The storage version itself is a gap only when the
			// operator's next release drops it: external-snapshotter
			// v8.2.0's group snapshot CRDs define v1beta1 alone, so
			// a cluster still storing v1alpha1 (its storage version
			// under v8.1) cannot apply them.
			if sv == storage && row == nil {
				continue
			}
			def, defined := versions[sv]
			fields := []finding.Field{finding.Value("status.storedVersions", finding.JSONText(stored))}
			var h *driftHit
			switch {
			case row != nil:
				h = hit(ruleOperatorRemoves, row, finding.High)
				if sv == storage {
					h.storageDropped = true
					fields = append(fields, finding.Value("spec.versions[name="+sv+"].storage", true))
				}
				if row.VersionLabel != "" {
					if v, has := u.GetLabels()[row.VersionLabel]; has {
						fields = append(fields, finding.Entry("metadata.labels["+row.VersionLabel+"]", v))
					}
				}
			case !defined:
				h = hit(ruleStoredUndefined, nil, finding.High)
			case !def.served || def.deprecated:
				h = hit(ruleStoredUnserved, nil, finding.Medium)
				fields = append(fields, finding.Value("spec.versions[name="+sv+"].served", def.served))
				if def.deprecated {
					fields = append(fields, finding.Value("spec.versions[name="+sv+"].deprecated", true))
				}
			default:
				h = hit(ruleStoredSeveral, nil, finding.Info)
			}
			if !slices.Contains(h.seen, sv) {
				h.seen = append(h.seen, sv)
			}
			if !slices.Contains(h.crds, u.GetName()) {
				h.crds = append(h.crds, u.GetName())
				h.ev.Add(ref, fields...)
				if storage != "" {
					h.fixes = append(h.fixes, trimCommand(u.GetName(), storage))
				}
			}
		}
	}
	if noStatus > 0 {
		for _, r := range []string{ruleOperatorRemoves, ruleStoredUndefined, ruleStoredUnserved, ruleStoredSeveral} {
			ctx.Incomplete(r, "%s carry no status.storedVersions (read from a manifest, not from the cluster): "+
				"which versions their objects are stored in is unknown", check.Plural(noStatus, "CRD", "CRDs"))
		}
	}
	if unreadable > 0 {
		for _, r := range []string{ruleOperatorRemoves, ruleStoredUndefined, ruleStoredUnserved, ruleStoredSeveral} {
			ctx.Incomplete(r, "%s have a status.storedVersions or spec.versions kubegap cannot read", check.Plural(unreadable, "CRD", "CRDs"))
		}
	}
	keys := make([]string, 0, len(hits))
	for k := range hits {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []finding.Finding
	for _, k := range keys {
		out = append(out, driftFinding(hits[k]))
	}
	return out, nil
}

// crdVersions reads spec.versions by name, and the storage version.
func crdVersions(u *unstructured.Unstructured) (map[string]crdVersion, string, bool) {
	list, _, err := unstructured.NestedSlice(u.Object, "spec", "versions")
	if err != nil {
		return nil, "", false
	}
	out := map[string]crdVersion{}
	storage := ""
	for _, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, "", false
		}
		name, _ := m["name"].(string)
		served, _ := m["served"].(bool)
		st, _ := m["storage"].(bool)
		dep, _ := m["deprecated"].(bool)
		out[name] = crdVersion{served: served, storage: st, deprecated: dep}
		if st {
			storage = name
		}
	}
	return out, storage, true
}

func removalFor(rows []*operatorRemoval, crd, group, version string) *operatorRemoval {
	for _, r := range rows {
		if len(r.CRDs) > 0 && !slices.Contains(r.CRDs, crd) {
			continue
		}
		if slices.Contains(r.Groups, group) && slices.Contains(r.Versions, version) {
			return r
		}
	}
	return nil
}

// trimCommand is the last step of a migration: once every object is
// rewritten at the storage version, storedVersions holds it alone.
func trimCommand(crd, storage string) string {
	return fmt.Sprintf(`kubectl patch customresourcedefinition %s --subresource=status --type=merge -p '{"status":{"storedVersions":["%s"]}}'`,
		crd, storage)
}

func driftFinding(h *driftHit) finding.Finding {
	refs := make([]finding.ObjectRef, 0, len(h.crds))
	for _, name := range h.crds {
		refs = append(refs, finding.ObjectRef{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: name})
	}
	n := check.Plural(len(h.crds), "CRD", "CRDs")
	// verb picks the singular or plural form to go with n.
	verb := func(one, many string) string {
		if len(h.crds) == 1 {
			return one
		}
		return many
	}
	f := finding.Finding{Check: crdDriftID, Rule: h.rule, Severity: h.sev, Objects: refs,
		Cases: []string{"cert-manager-1-7-removed-apis-stored-versions-2022"}}
	f.AddEvidence(h.ev.Items()...)
	rewrite := "rewrite every object of the kind at the storage version (read and write each back unchanged: the API " +
		"server stores what it writes at the storage version), then trim storedVersions to the storage version"
	trim := ""
	if len(h.fixes) > 0 {
		trim = " The trim, once no object is left at an old version: " + check.ListText(h.fixes, 3) + "."
	}
	switch h.rule {
	case ruleOperatorRemoves:
		r := h.row
		f.Cases = []string{r.Case}
		f.Title = fmt.Sprintf("%s of %s still %s %s as stored, which %s %s and later no longer define",
			n, r.Operator, verb("lists", "list"), strings.Join(h.seen, ", "), r.Operator, r.removedIn.MinorString())
		f.Message = strings.TrimSpace(r.Note)
		f.Evidence = append(f.Evidence, fmt.Sprintf("table row %s; sources: %s", r.ID, strings.Join(r.Sources, ", ")))
		own := ""
		if r.Remediation != "" {
			own = " " + strings.TrimSpace(r.Remediation)
		}
		if h.storageDropped {
			// Rewriting at today's storage version changes nothing:
			// the version to move to is not defined until the new
			// CRDs are in, and they are what the API server refuses.
			f.Remediation = fmt.Sprintf("Before upgrading %s to %s or later: the dropped version is these CRDs' storage version "+
				"today, so there is no newer version to rewrite the objects at first. Keep the old version in the new CRDs' "+
				"spec.versions (served false) until the objects are rewritten and storedVersions is trimmed, or, where no "+
				"object of the kind exists, delete and recreate the CRDs (deleting a CRD deletes all its objects).%s Read "+
				"the storedVersions again (`kubectl get customresourcedefinition %s -o jsonpath='{.status.storedVersions}'`) "+
				"before the upgrade.", r.Operator, r.removedIn.MinorString(), own, h.crds[0])
			break
		}
		f.Remediation = fmt.Sprintf("Before upgrading %s to %s or later, migrate the stored objects: %s.%s%s Read the storedVersions again "+
			"(`kubectl get customresourcedefinition %s -o jsonpath='{.status.storedVersions}'`) before the upgrade.",
			r.Operator, r.removedIn.MinorString(), rewrite, own, trim, h.crds[0])
	case ruleStoredUndefined:
		f.Title = fmt.Sprintf("%s %s as stored a version %s spec.versions does not define (%s)",
			n, verb("lists", "list"), verb("its", "their"), strings.Join(h.seen, ", "))
		f.Message = "status.storedVersions names a version that spec.versions leaves out. The API server refuses a CRD " +
			"update in that state (\"must appear in spec.versions\"), so this definition cannot be applied as it is, " +
			"and objects still stored at that version cannot be converted."
		f.Remediation = "Put the version back in spec.versions (served false is enough) until the migration is done: " +
			rewrite + "." + trim
	case ruleStoredUnserved:
		f.Title = fmt.Sprintf("%s %s as stored a version %s (%s)",
			n, verb("lists", "list"), verb("it no longer serves or marks deprecated", "they no longer serve or mark deprecated"), strings.Join(h.seen, ", "))
		f.Message = "Objects of these kinds may still be stored at a version the CRD has stopped serving or marked " +
			"deprecated: a later release that drops the version from spec.versions will be refused until the objects " +
			"are rewritten and the version is trimmed from status.storedVersions."
		f.Remediation = "Before the operator's next upgrade, " + rewrite + "." + trim
	default:
		f.Title = fmt.Sprintf("%s %s more than one stored version (older: %s)", n, verb("lists", "list"), strings.Join(h.seen, ", "))
		f.Message = "Objects of these kinds may still be stored at an older version that the CRD still serves: nothing " +
			"breaks now, but the release that drops that version will need the migration first."
		f.Remediation = "When convenient, " + rewrite + "." + trim
	}
	return f
}
