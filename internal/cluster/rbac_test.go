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
	"github.com/kubegap/kubegap/internal/snapshot"
)

// TestRBACMatchesChecks keeps deploy/rbac.yaml (kubegap rbac's output for
// every check, internal/rbacgen) least-privilege: it grants
// get/list/watch on exactly the resources the checks read, nothing more
// (no Secrets, no write verb, no wildcard) and nothing less. Named
// resources (ConfigMaps) get one rule of their own: get only, on exactly
// the names kubegap reads, never list.
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
		if len(rule.ResourceNames) > 0 {
			checkNamedRule(t, rule, verbs)
			for _, r := range rule.Resources {
				granted[rule.APIGroups[0]+"/"+r] = true
			}
			continue
		}
		if len(rule.NonResourceURLs) > 0 {
			// The API server's /metrics: get alone, on exactly that URL.
			if strings.Join(verbs, ",") != "get" || len(rule.APIGroups)+len(rule.Resources) > 0 {
				t.Errorf("non-resource rule %+v, want get alone", rule)
			}
			for _, u := range rule.NonResourceURLs {
				granted[u] = true
			}
			continue
		}
		if strings.Join(verbs, ",") != "get,list,watch" {
			t.Errorf("rule %v grants verbs %v, want exactly get, list, watch", rule.Resources, rule.Verbs)
		}
		if len(rule.NonResourceURLs) > 0 {
			t.Errorf("rule %v has non-resource URLs", rule.Resources)
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
		key := r.Group + "/" + r.Resource
		if r.NonResourceURL != "" {
			key = r.NonResourceURL
		}
		needed[key] = true
		if !granted[key] {
			t.Errorf("checks read %s but deploy/rbac.yaml does not grant it", r)
		}
	}
	for g := range granted {
		if !needed[g] {
			t.Errorf("deploy/rbac.yaml grants %s, which no check reads", g)
		}
	}
}

// checkNamedRule: a rule with resourceNames grants get on one Named
// resource, for exactly the names kubegap reads.
func checkNamedRule(t *testing.T, rule rbacv1.PolicyRule, verbs []string) {
	t.Helper()
	if strings.Join(verbs, ",") != "get" || len(rule.APIGroups) != 1 || len(rule.Resources) != 1 {
		t.Errorf("named rule %v: verbs %v, want get alone on one resource", rule.Resources, verbs)
		return
	}
	res, ok := snapshot.Parse(rule.Resources[0])
	if !ok || !res.Named || res.Group != rule.APIGroups[0] {
		t.Errorf("named rule on %v: not a resource kubegap reads by name", rule.Resources)
		return
	}
	want := map[string]bool{}
	for _, nn := range snapshot.NamesOf(res) {
		_, name, _ := strings.Cut(nn, "/")
		want[name] = true
	}
	got := map[string]bool{}
	for _, n := range rule.ResourceNames {
		got[n] = true
		if !want[n] {
			t.Errorf("named rule grants %s %q, which kubegap does not read", res.Resource, n)
		}
	}
	for n := range want {
		if !got[n] {
			t.Errorf("kubegap reads %s %q but the named rule does not grant it", res.Resource, n)
		}
	}
}
