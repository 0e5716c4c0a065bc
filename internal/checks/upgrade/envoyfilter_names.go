package upgrade

import (
	_ "embed"
	"errors"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

const (
	envoyFilterID         = "envoyfilter-upgrade-hazards"
	ruleDeprecatedNames   = "deprecated-filter-names"
	ruleLegacyFilterField = "legacy-filters-field"
	envoyFilterCase       = "istio-envoyfilters-break-across-upgrades-2020-2024"
)

//go:embed data/envoyfilter-names.yaml
var envoyFilterNamesYAML []byte

type envoyFilterFacts struct {
	DeprecatedNames []struct {
		Deprecated string   `json:"deprecated"`
		Canonical  string   `json:"canonical"`
		Sources    []string `json:"sources"`
	} `json:"deprecatedNames"`
	DroppedIn []struct {
		Istio   string   `json:"istio"`
		Sources []string `json:"sources"`
	} `json:"droppedIn"`

	canonical map[string]string
	dropped   string
}

var loadEnvoyFilterFacts = check.Facts("EnvoyFilter names", envoyFilterNamesYAML, func(f *envoyFilterFacts) error {
	if len(f.DroppedIn) != 1 || len(f.DeprecatedNames) == 0 {
		return errors.New("EnvoyFilter names: want deprecated names and one droppedIn row")
	}
	f.canonical = map[string]string{}
	for _, n := range f.DeprecatedNames {
		f.canonical[n.Deprecated] = n.Canonical
	}
	f.dropped = f.DroppedIn[0].Istio
	return nil
})

func envoyFilterUpgradeHazardsCheck() check.Check {
	return check.Check{
		ID:       envoyFilterID,
		Title:    "Istio EnvoyFilters written for older Istio and Envoy releases",
		Severity: finding.High,
		Description: "Reads Istio's EnvoyFilters (networking.istio.io/v1alpha3). An EnvoyFilter patches Envoy's " +
			"configuration directly, and Istio does not promise it keeps working across releases. High: a patch " +
			"that matches on a filter by a name Envoy 1.14 deprecated (envoy.http_connection_manager, " +
			"envoy.router and others in data/envoyfilter-names.yaml), which Istio no longer matches from 1.19, or " +
			"inserts one by such a name without a typed_config; " +
			"and an EnvoyFilter still in the pre-1.6 form (spec.filters with listenerMatch and filterName), which " +
			"stopped working on Istio 1.6.0. Either patch is silently not applied, or breaks the listener, after " +
			"the control plane is upgraded.",
		Reads: []check.Input{check.Optional(snapshot.IstioEnvoyFilters)},
		Rules: []check.Rule{
			{ID: ruleDeprecatedNames, Summary: "no EnvoyFilter names an Envoy filter by a deprecated name",
				Needs: []snapshot.Resource{snapshot.IstioEnvoyFilters}},
			{ID: ruleLegacyFilterField, Summary: "no EnvoyFilter uses the pre-1.6 spec.filters form",
				Needs: []snapshot.Resource{snapshot.IstioEnvoyFilters}},
		},
		Cases: check.Cite(check.Prevents(envoyFilterCase)),
		Run:   runEnvoyFilterUpgradeHazards,
	}
}

// filterNamePaths are where a configPatch names an Envoy filter: the
// network filter and the HTTP sub-filter it matches, and the filter it
// inserts or replaces.
var filterNamePaths = [][]string{
	{"match", "listener", "filterChain", "filter", "name"},
	{"match", "listener", "filterChain", "filter", "subFilter", "name"},
	{"patch", "value", "name"},
}

// namedByValueOnly reports whether a patch's inserted filter is found by
// its name alone: patch.value carries no typed_config (or typedConfig).
// With a type URL Envoy resolves the extension by type, and Istio 1.19's
// upgrade notes name only lookups by name without typed_config as
// removed, so a deprecated value name beside a type URL is not flagged.
func namedByValueOnly(patch map[string]any) bool {
	value, _ := patch["patch"].(map[string]any)
	value, _ = value["value"].(map[string]any)
	_, typed := value["typed_config"]
	_, typedCamel := value["typedConfig"]
	return !typed && !typedCamel
}

func runEnvoyFilterUpgradeHazards(ctx *check.Context) ([]finding.Finding, error) {
	facts, err := loadEnvoyFilterFacts()
	if err != nil {
		return nil, err
	}
	filters := ctx.Snapshot.CustomObjects(snapshot.IstioEnvoyFilters)
	if len(filters) == 0 {
		return nil, nil
	}
	type hit struct {
		ref    finding.ObjectRef
		fields []finding.Field
		line   string
	}
	var deprecated, legacy []hit
	for _, ef := range filters {
		ref := finding.ObjectRef{APIVersion: "networking.istio.io/v1alpha3", Kind: "EnvoyFilter", Namespace: ef.GetNamespace(), Name: ef.GetName()}
		if old, found := nestedSlice(ef.Object, "spec", "filters"); found && len(old) > 0 {
			h := hit{ref: ref, line: fmt.Sprintf("EnvoyFilter %s/%s has %s in spec.filters", ref.Namespace, ref.Name,
				check.Plural(len(old), "filter", "filters"))}
			if m, ok := old[0].(map[string]any); ok {
				if name, ok := m["filterName"].(string); ok && name != "" {
					h.fields = append(h.fields, finding.Value("spec.filters[0].filterName", name))
				}
			}
			if len(h.fields) == 0 {
				h.fields = append(h.fields, finding.Value("spec.filters", finding.JSONText(old)))
			}
			legacy = append(legacy, h)
		}
		patches, _ := nestedSlice(ef.Object, "spec", "configPatches")
		h := hit{ref: ref}
		var names []string
		for i, p := range patches {
			pm, ok := p.(map[string]any)
			if !ok {
				continue
			}
			for _, path := range filterNamePaths {
				name, found, _ := unstructured.NestedString(pm, path...)
				canonical, bad := facts.canonical[name]
				if !found || !bad {
					continue
				}
				if path[0] == "patch" && !namedByValueOnly(pm) {
					continue
				}
				h.fields = append(h.fields, finding.Value(fmt.Sprintf("spec.configPatches[%d].%s", i, strings.Join(path, ".")), name))
				names = append(names, fmt.Sprintf("%s (now %s)", name, canonical))
			}
		}
		if len(h.fields) > 0 {
			h.line = fmt.Sprintf("EnvoyFilter %s/%s names %s", ref.Namespace, ref.Name, strings.Join(dedupe(names), ", "))
			deprecated = append(deprecated, h)
		}
	}
	var out []finding.Finding
	build := func(rule string, hits []hit, title, message string) {
		if len(hits) == 0 {
			return
		}
		sort.Slice(hits, func(i, j int) bool { return hits[i].line < hits[j].line })
		f := finding.Finding{Check: envoyFilterID, Rule: rule, Severity: finding.High, Cases: []string{envoyFilterCase}}
		var lines []string
		for _, h := range hits {
			if len(f.Objects) < check.MaxListedObjects {
				f.Objects = append(f.Objects, h.ref)
				f.AddEvidence(finding.Quote(h.ref, h.fields...))
			}
			if len(lines) < check.MaxEvidence {
				lines = append(lines, h.line)
			}
		}
		f.Evidence = append(f.Evidence, lines...)
		f.Title = fmt.Sprintf(title, check.Plural(len(hits), "EnvoyFilter", "EnvoyFilters"))
		f.Message = message
		f.Remediation = "Rewrite these EnvoyFilters for the Istio release you run and the one you upgrade to: the " +
			"configPatches form, canonical filter names (envoy.filters.network.http_connection_manager, " +
			"envoy.filters.http.router, ...) and v3 typed_config; run istioctl analyze against the target release " +
			"and check each proxy's listeners after a canary upgrade before moving every workload."
		out = append(out, f)
	}
	build(ruleDeprecatedNames, deprecated, "%s name Envoy filters by deprecated names",
		fmt.Sprintf("These EnvoyFilters match on, or insert, Envoy filters by the names Envoy 1.14 deprecated. Istio "+
			"matched both old and canonical names for a while, and from Istio %s matches only the canonical ones, so after "+
			"that upgrade such a patch no longer applies. Earlier, an Istio bug let a patch using an old name overwrite "+
			"other EnvoyFilters' changes (fixed in istio/istio#29984, backported to 1.8).", facts.dropped))
	build(ruleLegacyFilterField, legacy, "%s use the pre-1.6 spec.filters form",
		"These EnvoyFilters still use the original form (spec.filters with listenerMatch, filterName and filterConfig). "+
			"A filter in that form that worked on Istio 1.5.4 stopped working on 1.6.0, and Istio's maintainers answered "+
			"that it used deprecated fields and that EnvoyFilters are not guaranteed to work across releases.")
	return out, nil
}

func dedupe(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
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
