package cluster

import (
	"os"
	"sort"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubegap/kubegap/internal/audit"
	"github.com/kubegap/kubegap/internal/checks"
)

// TestRBACMatchesChecks keeps deploy/rbac.yaml least-privilege: it grants
// get/list/watch on exactly the resources the checks read, nothing more
// (no Secrets, no ConfigMaps, no write verb, no wildcard) and nothing less.
func TestRBACMatchesChecks(t *testing.T) {
	raw, err := os.ReadFile("../../deploy/rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict(raw, &role); err != nil {
		t.Fatal(err)
	}
	granted := map[string]bool{}
	for _, rule := range role.Rules {
		verbs := append([]string{}, rule.Verbs...)
		sort.Strings(verbs)
		if strings.Join(verbs, ",") != "get,list,watch" {
			t.Errorf("rule %v grants verbs %v, want exactly get, list, watch", rule.Resources, rule.Verbs)
		}
		if len(rule.NonResourceURLs) > 0 || len(rule.ResourceNames) > 0 {
			t.Errorf("rule %v has non-resource URLs or resource names", rule.Resources)
		}
		for _, g := range rule.APIGroups {
			for _, r := range rule.Resources {
				if g == "*" || r == "*" || r == "secrets" || r == "configmaps" || strings.Contains(r, "/") {
					t.Errorf("rule grants %q in group %q", r, g)
				}
				granted[g+"/"+r] = true
			}
		}
	}
	needed := map[string]bool{}
	for _, r := range audit.Resources(checks.All()) {
		needed[r.Group+"/"+r.Resource] = true
		if !granted[r.Group+"/"+r.Resource] {
			t.Errorf("checks read %s but deploy/rbac.yaml does not grant it", r)
		}
	}
	for g := range granted {
		if !needed[g] {
			t.Errorf("deploy/rbac.yaml grants %s, which no check reads", g)
		}
	}
}
