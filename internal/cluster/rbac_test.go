package cluster

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubegap/kubegap/internal/audit"
	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// TestRBACMatchesChecks keeps deploy/rbac.yaml least-privilege: it grants
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

// TestRBACFile regenerates deploy/rbac.yaml from the checks' inputs with
// UPDATE_DOCS=1 (go test ./internal/cluster -run TestRBACFile), so that
// adding a check that reads a new resource is one command away from a
// role that grants it; TestRBACMatchesChecks keeps the two in step.
func TestRBACFile(t *testing.T) {
	if os.Getenv("UPDATE_DOCS") == "" {
		t.Skip("set UPDATE_DOCS=1 to rewrite deploy/rbac.yaml")
	}
	groups := map[string][]string{}
	var named []snapshot.Resource
	for _, r := range audit.Resources(checks.All()) {
		if r.Named {
			named = append(named, r)
			continue
		}
		if !slices.Contains(groups[r.Group], r.Resource) {
			groups[r.Group] = append(groups[r.Group], r.Resource)
		}
	}
	var b strings.Builder
	b.WriteString(`# kubegap's least-privilege access: get, list and watch on exactly the
# resources its checks read, and nothing else. No Secrets; ConfigMaps only
# by name (get on the few kubegap reads, never list); no write verb, no
# subresource. Generated from the checks by
# UPDATE_DOCS=1 go test ./internal/cluster -run TestRBACFile, and kept in
# step with them by TestRBACMatchesChecks.
#
#   kubectl apply -f deploy/rbac.yaml
#   kubectl create clusterrolebinding kubegap-reader-me \
#     --clusterrole=kubegap-reader --user=<you>
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: kubegap-reader
  labels:
    app.kubernetes.io/name: kubegap
rules:
`)
	for _, g := range slices.Sorted(maps.Keys(groups)) {
		rs := groups[g]
		slices.Sort(rs)
		fmt.Fprintf(&b, "- apiGroups: [%q]\n  resources: [%s]\n  verbs: [get, list, watch]\n", g, strings.Join(rs, ", "))
	}
	for _, r := range named {
		var names []string
		for _, nn := range snapshot.NamesOf(r) {
			_, name, _ := strings.Cut(nn, "/")
			if !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
		fmt.Fprintf(&b, "- apiGroups: [%q]\n  resources: [%s]\n  resourceNames: [%s]\n  verbs: [get]\n", r.Group, r.Resource, strings.Join(names, ", "))
	}
	if err := os.WriteFile("../../deploy/rbac.yaml", []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	// deploy/cronjob.yaml carries the same rules in its own ClusterRole:
	// replace its rules block (from "rules:" to the next document).
	rules := b.String()[strings.Index(b.String(), "rules:\n"):]
	cron, err := os.ReadFile("../../deploy/cronjob.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cs := string(cron)
	start := strings.Index(cs, "\nrules:\n")
	end := strings.Index(cs[start+1:], "\n---\n")
	if start < 0 || end < 0 {
		t.Fatal("deploy/cronjob.yaml: no rules block before the next document")
	}
	cs = cs[:start+1] + rules + cs[start+1+end+1:]
	if err := os.WriteFile("../../deploy/cronjob.yaml", []byte(cs), 0o644); err != nil {
		t.Fatal(err)
	}
}
