// Package rbacgen writes the RBAC objects an audit needs: get, list and
// watch on exactly the resources the selected checks read, get alone on
// the few ConfigMaps read by name, nothing else. deploy/rbac.yaml is its
// output for every check; `kubegap rbac` prints it for any selection.
package rbacgen

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/kubegap/kubegap/internal/snapshot"
)

// RoleName is the name of the ClusterRole (and, for a namespace, the
// Role) the output defines.
const RoleName = "kubegap-reader"

// Subject is who the bindings bind: a user, a group or a service account
// (Namespace set). The zero Subject writes no binding, only how to make one.
type Subject struct {
	Kind      string // User, Group or ServiceAccount
	Name      string
	Namespace string // ServiceAccount only
}

// Options pick what YAML writes.
type Options struct {
	// Namespace scopes the grant as a namespace audit reads: a Role in it
	// for the namespaced resources (and the named ConfigMaps in it), and a
	// ClusterRole for the cluster-scoped ones, which a namespace audit
	// still reads. Empty is one ClusterRole for everything.
	Namespace string
	Subject   Subject
}

// YAML writes the RBAC objects for resources (audit.Resources of the
// selected checks) as kubectl-appliable YAML.
func YAML(resources []snapshot.Resource, o Options) string {
	var b strings.Builder
	b.WriteString(`# kubegap's least-privilege access: get, list and watch on exactly the
# resources its checks read, and nothing else. No Secrets; ConfigMaps only
# by name (get on the few kubegap reads, never list); get on the API
# server's /metrics when a check reads it (which deprecated API versions
# clients requested); no write verb, no subresource. Written from the
# checks by kubegap rbac (add --checks, --skip-checks, --namespace, --user
# or --service-account to narrow and bind it); deploy/rbac.yaml is its
# output for every check, kept in step by go test ./internal/rbacgen
# (UPDATE_DOCS=1 rewrites it).
`)
	if o.Namespace == "" {
		if o.Subject.Name == "" {
			b.WriteString(`#
#   kubegap rbac | kubectl apply -f -
#   kubectl create clusterrolebinding kubegap-reader-me \
#     --clusterrole=kubegap-reader --user=<you>
`)
		}
		writeRole(&b, "ClusterRole", RoleName, "", resources)
		if o.Subject.Name != "" {
			writeBinding(&b, "ClusterRoleBinding", RoleName, "", "ClusterRole", o.Subject)
		}
		return b.String()
	}
	var cluster, namespaced []snapshot.Resource
	for _, r := range resources {
		switch {
		case !r.Namespaced:
			cluster = append(cluster, r)
		case r.Named && !namesIn(r, o.Namespace):
			// A namespace audit reads only the names in its namespace.
		default:
			namespaced = append(namespaced, r)
		}
	}
	if o.Subject.Name == "" {
		fmt.Fprintf(&b, `#
# A namespace audit reads the namespaced resources in %[1]s alone and the
# cluster-scoped ones (nodes, namespaces...) cluster-wide. Bind both roles:
#   kubectl create rolebinding kubegap-reader-me -n %[1]s \
#     --role=kubegap-reader --user=<you>
#   kubectl create clusterrolebinding kubegap-reader-cluster-me \
#     --clusterrole=kubegap-reader-cluster --user=<you>
`, o.Namespace)
	}
	if len(cluster) > 0 {
		writeRole(&b, "ClusterRole", RoleName+"-cluster", "", cluster)
		if o.Subject.Name != "" {
			writeBinding(&b, "ClusterRoleBinding", RoleName+"-cluster", "", "ClusterRole", o.Subject)
		}
	}
	if len(namespaced) > 0 {
		if len(cluster) > 0 {
			b.WriteString("---\n")
		}
		writeRole(&b, "Role", RoleName, o.Namespace, namespaced)
		if o.Subject.Name != "" {
			writeBinding(&b, "RoleBinding", RoleName, o.Namespace, "Role", o.Subject)
		}
	}
	return b.String()
}

func namesIn(r snapshot.Resource, ns string) bool {
	return len(names(r, ns)) > 0
}

// names is the names of a Named resource kubegap reads, in namespace ns
// or ("") in any namespace, each once, in the order NamesOf gives them.
func names(r snapshot.Resource, ns string) []string {
	var out []string
	for _, nn := range snapshot.NamesOf(r) {
		n, name, _ := strings.Cut(nn, "/")
		if (ns == "" || n == ns) && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

func writeRole(b *strings.Builder, kind, name, ns string, resources []snapshot.Resource) {
	fmt.Fprintf(b, "apiVersion: rbac.authorization.k8s.io/v1\nkind: %s\nmetadata:\n  name: %s\n", kind, name)
	if ns != "" {
		fmt.Fprintf(b, "  namespace: %s\n", ns)
	}
	b.WriteString("  labels:\n    app.kubernetes.io/name: kubegap\nrules:\n")
	groups := map[string][]string{}
	var named, urls []snapshot.Resource
	for _, r := range resources {
		if r.NonResourceURL != "" {
			urls = append(urls, r)
			continue
		}
		if r.Named {
			named = append(named, r)
			continue
		}
		if !slices.Contains(groups[r.Group], r.Resource) {
			groups[r.Group] = append(groups[r.Group], r.Resource)
		}
	}
	for _, g := range slices.Sorted(maps.Keys(groups)) {
		rs := groups[g]
		slices.Sort(rs)
		fmt.Fprintf(b, "- apiGroups: [%q]\n  resources: [%s]\n  verbs: [get, list, watch]\n", g, strings.Join(rs, ", "))
	}
	for _, r := range named {
		fmt.Fprintf(b, "- apiGroups: [%q]\n  resources: [%s]\n  resourceNames: [%s]\n  verbs: [get]\n", r.Group, r.Resource, strings.Join(names(r, ns), ", "))
	}
	// Non-resource URLs (the API server's /metrics) are granted by
	// ClusterRoles only; resources never go to a Role with them.
	for _, r := range urls {
		fmt.Fprintf(b, "- nonResourceURLs: [%q]\n  verbs: [get]\n", r.NonResourceURL)
	}
}

func writeBinding(b *strings.Builder, kind, role, ns, roleKind string, s Subject) {
	fmt.Fprintf(b, "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: %s\nmetadata:\n  name: %s\n", kind, role)
	if ns != "" {
		fmt.Fprintf(b, "  namespace: %s\n", ns)
	}
	b.WriteString("  labels:\n    app.kubernetes.io/name: kubegap\n")
	fmt.Fprintf(b, "roleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: %s\n  name: %s\nsubjects:\n- kind: %s\n  name: %q\n", roleKind, role, s.Kind, s.Name)
	switch s.Kind {
	case "ServiceAccount":
		fmt.Fprintf(b, "  namespace: %s\n", s.Namespace)
	default:
		b.WriteString("  apiGroup: rbac.authorization.k8s.io\n")
	}
}

// Rule is the one-line ClusterRole rule that grants reading r, as the
// report's TO COMPLETE and explain_check give it.
func Rule(r snapshot.Resource) string {
	if r.NonResourceURL != "" {
		return fmt.Sprintf("{nonResourceURLs: [%q], verbs: [get]}", r.NonResourceURL)
	}
	if r.Named {
		return fmt.Sprintf("{apiGroups: [%q], resources: [%s], resourceNames: [%s], verbs: [get]}", r.Group, r.Resource, strings.Join(names(r, ""), ", "))
	}
	return fmt.Sprintf("{apiGroups: [%q], resources: [%s], verbs: [get, list, watch]}", r.Group, r.Resource)
}
