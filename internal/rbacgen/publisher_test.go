package rbacgen_test

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/rbacgen"
	"github.com/kubegap/kubegap/internal/reportapi"
)

// TestPublisherFile keeps deploy/rbac-publisher.yaml what `kubegap rbac
// --publisher` prints, and deploy/cronjob.yaml's kubegap-publisher
// ClusterRole the same document; UPDATE_DOCS=1 rewrites both.
func TestPublisherFile(t *testing.T) {
	want := rbacgen.PublisherYAML(rbacgen.PublisherOptions{})
	role := want[strings.Index(want, "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\n"):]
	cron, err := os.ReadFile("../../deploy/cronjob.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cs := string(cron)
	start := strings.Index(cs, "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: kubegap-publisher\n")
	if start < 0 {
		t.Fatal("deploy/cronjob.yaml has no kubegap-publisher ClusterRole")
	}
	end := strings.Index(cs[start:], "---\n")
	if end < 0 {
		t.Fatal("deploy/cronjob.yaml: the kubegap-publisher ClusterRole is the last document")
	}
	cronWant := cs[:start] + role + cs[start+end:]
	if os.Getenv("UPDATE_DOCS") != "" {
		if err := os.WriteFile("../../deploy/rbac-publisher.yaml", []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile("../../deploy/cronjob.yaml", []byte(cronWant), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile("../../deploy/rbac-publisher.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("deploy/rbac-publisher.yaml is not kubegap rbac --publisher's output; UPDATE_DOCS=1 go test ./internal/rbacgen rewrites it")
	}
	if cs != cronWant {
		t.Errorf("deploy/cronjob.yaml's kubegap-publisher ClusterRole differs from kubegap rbac --publisher's; UPDATE_DOCS=1 go test ./internal/rbacgen rewrites it")
	}
}

// TestPublisherGrantsOnlyReports: every rule of every role names only
// report resources of the formats asked for, with exactly the publisher's
// verbs.
func TestPublisherGrantsOnlyReports(t *testing.T) {
	cases := []struct {
		name string
		o    rbacgen.PublisherOptions
		// granted group/resource per role name
		roles map[string][]string
	}{
		{"both formats", rbacgen.PublisherOptions{}, map[string][]string{
			"ClusterRole/kubegap-publisher": {"wgpolicyk8s.io/policyreports", "wgpolicyk8s.io/clusterpolicyreports", "openreports.io/reports", "openreports.io/clusterreports"}}},
		{"openreports", rbacgen.PublisherOptions{Formats: []reportapi.Format{reportapi.OpenReports}}, map[string][]string{
			"ClusterRole/kubegap-publisher": {"openreports.io/reports", "openreports.io/clusterreports"}}},
		{"namespace", rbacgen.PublisherOptions{Namespace: "team-a", Formats: []reportapi.Format{reportapi.PolicyReport},
			Subject: rbacgen.Subject{Kind: "ServiceAccount", Name: "pub", Namespace: "kubegap"}}, map[string][]string{
			"ClusterRole/kubegap-publisher-cluster": {"wgpolicyk8s.io/clusterpolicyreports"},
			"Role/kubegap-publisher":                {"wgpolicyk8s.io/policyreports"}}},
	}
	for _, tc := range cases {
		out := rbacgen.PublisherYAML(tc.o)
		roles, nsRoles, bindings, nsBindings := objects(t, out)
		got := map[string][]string{}
		for _, r := range roles {
			for _, rule := range r.Rules {
				if !slices.Equal(rule.Verbs, rbacgen.PublisherVerbs) || len(rule.ResourceNames) > 0 || len(rule.NonResourceURLs) > 0 {
					t.Errorf("%s: ClusterRole %s rule %+v", tc.name, r.Name, rule)
				}
			}
			for k := range granted(r.Rules) {
				got["ClusterRole/"+r.Name] = append(got["ClusterRole/"+r.Name], k)
			}
		}
		for _, r := range nsRoles {
			if r.Namespace != tc.o.Namespace {
				t.Errorf("%s: Role in %q", tc.name, r.Namespace)
			}
			for _, rule := range r.Rules {
				if !slices.Equal(rule.Verbs, rbacgen.PublisherVerbs) {
					t.Errorf("%s: Role rule %+v", tc.name, rule)
				}
			}
			for k := range granted(r.Rules) {
				got["Role/"+r.Name] = append(got["Role/"+r.Name], k)
			}
		}
		if len(got) != len(tc.roles) {
			t.Errorf("%s: roles %v, want %v", tc.name, got, tc.roles)
		}
		for name, res := range tc.roles {
			g := got[name]
			slices.Sort(g)
			w := slices.Clone(res)
			slices.Sort(w)
			if !slices.Equal(g, w) {
				t.Errorf("%s: %s grants %v, want %v", tc.name, name, g, w)
			}
		}
		if tc.o.Subject.Name != "" && (len(bindings) != 1 || len(nsBindings) != 1 || bindings[0].Subjects[0].Name != "pub" || nsBindings[0].Namespace != "team-a") {
			t.Errorf("%s: bindings %+v %+v", tc.name, bindings, nsBindings)
		}
		if tc.o.Subject.Name == "" && (len(bindings) > 0 || len(nsBindings) > 0) {
			t.Errorf("%s: bindings without a subject", tc.name)
		}
	}
}
