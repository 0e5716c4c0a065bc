package upgrade

import (
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
)

// Before the upgrade: the 1.9 upgrade notes' filter is flagged for its
// two deprecated names, the 1.5-era filter for its spec.filters form.
func TestEnvoyFilterUpgradeHazardsGap(t *testing.T) {
	const file = "envoyfilter-upgrade-hazards/gap.yaml"
	s := checktest.Complete(checktest.Load(t, file))
	fs, _, ok := checktest.Run(t, envoyFilterUpgradeHazardsCheck(), s)
	if !ok {
		t.Fatal("not evaluated")
	}
	if len(fs) != 2 {
		t.Fatalf("findings %v, want one per rule", fs)
	}
	for _, f := range fs {
		if f.Severity != finding.High || f.Cases[0] != envoyFilterCase {
			t.Errorf("finding %s: severity %s, cases %v", f.Rule, f.Severity, f.Cases)
		}
		switch f.Rule {
		case ruleDeprecatedNames:
			ev := strings.Join(f.Evidence, "\n")
			if !checktest.HasObject([]finding.Finding{f}, "EnvoyFilter", "istio-system", "add-header") ||
				!strings.Contains(ev, "envoy.router (now envoy.filters.http.router)") ||
				!strings.Contains(ev, "envoy.http_connection_manager (now envoy.filters.network.http_connection_manager)") {
				t.Errorf("deprecated-names finding %v: want add-header and both names", f.Evidence)
			}
			if strings.Contains(ev, "payload-check") {
				t.Error("the legacy filter is listed for names")
			}
		case ruleLegacyFilterField:
			if !checktest.HasObject([]finding.Finding{f}, "EnvoyFilter", "default", "payload-check") || len(f.Objects) != 1 {
				t.Errorf("legacy finding objects %v: want payload-check alone", f.Objects)
			}
		default:
			t.Errorf("unexpected rule %s", f.Rule)
		}
	}
	checktest.EvidenceTrue(t, fs, file)
}

// Canonical names and the configPatches form are quiet.
func TestEnvoyFilterUpgradeHazardsClean(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "envoyfilter-upgrade-hazards/clean.yaml"))
	checktest.Quiet(t, envoyFilterUpgradeHazardsCheck(), s)
}

// An inserted filter's deprecated name counts only when nothing else
// identifies it: without typed_config it is flagged, beside a type URL
// it is not (Istio 1.19's upgrade notes remove lookups by name alone).
func TestEnvoyFilterValueNameNeedsNoTypedConfig(t *testing.T) {
	const file = "envoyfilter-upgrade-hazards/value-name.yaml"
	s := checktest.Complete(checktest.Load(t, file))
	fs, _, ok := checktest.Run(t, envoyFilterUpgradeHazardsCheck(), s)
	if !ok {
		t.Fatal("not evaluated")
	}
	if len(fs) != 1 || fs[0].Rule != ruleDeprecatedNames {
		t.Fatalf("findings %v, want one deprecated-names finding", fs)
	}
	if !checktest.HasObject(fs, "EnvoyFilter", "istio-system", "authz-by-name") {
		t.Errorf("objects %v: want authz-by-name", fs[0].Objects)
	}
	if checktest.HasObject(fs, "EnvoyFilter", "istio-system", "authz-typed") {
		t.Errorf("objects %v: authz-typed has a typed_config and is flagged", fs[0].Objects)
	}
	checktest.EvidenceTrue(t, fs, file)
}
