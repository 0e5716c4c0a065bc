package rbacgen_test

import (
	"bytes"
	"os"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubegap/kubegap/internal/audit"
	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/rbacgen"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// TestRBACFile keeps deploy/rbac.yaml what `kubegap rbac` prints for
// every check, and deploy/cronjob.yaml's ClusterRole rules the same;
// UPDATE_DOCS=1 rewrites both. internal/cluster's TestRBACMatchesChecks
// holds the file to least privilege.
func TestRBACFile(t *testing.T) {
	want := rbacgen.YAML(audit.Resources(checks.All()), rbacgen.Options{})
	rules := want[strings.Index(want, "rules:\n"):]
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
	cronWant := cs[:start+1] + rules + cs[start+1+end+1:]
	if os.Getenv("UPDATE_DOCS") != "" {
		if err := os.WriteFile("../../deploy/rbac.yaml", []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile("../../deploy/cronjob.yaml", []byte(cronWant), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile("../../deploy/rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("deploy/rbac.yaml is not kubegap rbac's output; UPDATE_DOCS=1 go test ./internal/rbacgen rewrites it")
	}
	if cs != cronWant {
		t.Errorf("deploy/cronjob.yaml's rules differ from kubegap rbac's; UPDATE_DOCS=1 go test ./internal/rbacgen rewrites them")
	}
}

// objects parses every document of out strictly as RBAC objects.
func objects(t *testing.T, out string) (roles []rbacv1.ClusterRole, nsRoles []rbacv1.Role, bindings []rbacv1.ClusterRoleBinding, nsBindings []rbacv1.RoleBinding) {
	t.Helper()
	for _, doc := range bytes.Split([]byte(out), []byte("\n---\n")) {
		var meta struct{ Kind string }
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			t.Fatalf("%v\n%s", err, doc)
		}
		var err error
		switch meta.Kind {
		case "ClusterRole":
			var r rbacv1.ClusterRole
			err = yaml.UnmarshalStrict(doc, &r)
			roles = append(roles, r)
		case "Role":
			var r rbacv1.Role
			err = yaml.UnmarshalStrict(doc, &r)
			nsRoles = append(nsRoles, r)
		case "ClusterRoleBinding":
			var r rbacv1.ClusterRoleBinding
			err = yaml.UnmarshalStrict(doc, &r)
			bindings = append(bindings, r)
		case "RoleBinding":
			var r rbacv1.RoleBinding
			err = yaml.UnmarshalStrict(doc, &r)
			nsBindings = append(nsBindings, r)
		default:
			t.Fatalf("document of kind %q:\n%s", meta.Kind, doc)
		}
		if err != nil {
			t.Fatalf("%s: %v\n%s", meta.Kind, err, doc)
		}
	}
	return
}

func granted(rules []rbacv1.PolicyRule) map[string]bool {
	out := map[string]bool{}
	for _, r := range rules {
		// A non-resource URL is keyed as a Resource names it: "/metrics".
		for _, u := range r.NonResourceURLs {
			out[u] = true
		}
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				out[g+"/"+res] = true
			}
		}
	}
	return out
}

func TestSelectionAndBinding(t *testing.T) {
	selected, err := audit.Select(checks.All(), []string{"image-pull-always"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res := audit.Resources(selected)
	roles, _, bindings, _ := objects(t, rbacgen.YAML(res, rbacgen.Options{Subject: rbacgen.Subject{Kind: "ServiceAccount", Name: "audit", Namespace: "ops"}}))
	if len(roles) != 1 || len(bindings) != 1 {
		t.Fatalf("%d ClusterRoles, %d bindings; want one each", len(roles), len(bindings))
	}
	g := granted(roles[0].Rules)
	for _, r := range res {
		if !g[r.Group+"/"+r.Resource] {
			t.Errorf("image-pull-always reads %s; the role does not grant it", r)
		}
	}
	if len(g) != len(res) || g["apps/daemonsets"] && !slicesHas(res, "daemonsets") {
		t.Errorf("role grants %v for one check reading %v", g, res)
	}
	b := bindings[0]
	if b.RoleRef.Name != roles[0].Name || b.Subjects[0].Kind != "ServiceAccount" || b.Subjects[0].Namespace != "ops" || b.Subjects[0].Name != "audit" {
		t.Errorf("binding %+v", b)
	}
}

func slicesHas(res []snapshot.Resource, plural string) bool {
	for _, r := range res {
		if r.Resource == plural {
			return true
		}
	}
	return false
}

// TestNamespace: a namespace grant is a Role in it for the namespaced
// resources and a ClusterRole for the cluster-scoped ones; the named
// ConfigMaps only those in that namespace.
func TestNamespace(t *testing.T) {
	res := audit.Resources(checks.All())
	_, _, _, _ = objects(t, rbacgen.YAML(res, rbacgen.Options{Namespace: "team-a"}))
	roles, nsRoles, bindings, nsBindings := objects(t, rbacgen.YAML(res, rbacgen.Options{Namespace: "kube-system", Subject: rbacgen.Subject{Kind: "User", Name: "alice"}}))
	if len(roles) != 1 || len(nsRoles) != 1 || len(bindings) != 1 || len(nsBindings) != 1 {
		t.Fatalf("%d %d %d %d objects", len(roles), len(nsRoles), len(bindings), len(nsBindings))
	}
	cluster, ns := granted(roles[0].Rules), granted(nsRoles[0].Rules)
	for _, r := range res {
		key := r.Group + "/" + r.Resource
		if r.Namespaced && (!ns[key] || cluster[key]) || !r.Namespaced && (!cluster[key] || ns[key]) {
			t.Errorf("%s (namespaced %v): cluster role %v, namespace role %v", r, r.Namespaced, cluster[key], ns[key])
		}
	}
	if nsRoles[0].Namespace != "kube-system" || nsBindings[0].Namespace != "kube-system" || nsBindings[0].RoleRef.Kind != "Role" {
		t.Errorf("role %+v binding %+v", nsRoles[0].ObjectMeta, nsBindings[0])
	}
	for _, rule := range nsRoles[0].Rules {
		for _, n := range rule.ResourceNames {
			found := false
			for _, nn := range snapshot.NamesOf(snapshot.Resource{Named: true, Resource: "configmaps"}) {
				found = found || nn == "kube-system/"+n
			}
			if !found {
				t.Errorf("kube-system role grants ConfigMap %q, not one kubegap reads there", n)
			}
		}
	}
}

// TestMetricsRule: the API server's /metrics is granted as a non-resource
// URL, get alone, in the ClusterRole, and Rule says so for TO COMPLETE.
func TestMetricsRule(t *testing.T) {
	roles, _, _, _ := objects(t, rbacgen.YAML(audit.Resources(checks.All()), rbacgen.Options{}))
	found := false
	for _, r := range roles[0].Rules {
		if len(r.NonResourceURLs) > 0 {
			found = true
			if len(r.NonResourceURLs) != 1 || r.NonResourceURLs[0] != "/metrics" || len(r.Verbs) != 1 || r.Verbs[0] != "get" {
				t.Errorf("non-resource rule %+v, want get on /metrics alone", r)
			}
		}
	}
	if !found {
		t.Fatal("no /metrics rule")
	}
	if got := rbacgen.Rule(snapshot.APIServerMetrics); got != `{nonResourceURLs: ["/metrics"], verbs: [get]}` {
		t.Errorf("Rule = %s", got)
	}
}
