package rbacgen

import (
	"fmt"
	"strings"

	"github.com/kubegap/kubegap/internal/reportapi"
)

// PublisherRoleName is the name of the ClusterRole (and, for a namespace,
// the Role) that kubegap publish needs.
const PublisherRoleName = "kubegap-publisher"

// PublisherVerbs are the verbs kubegap publish sends, and all that its
// transport (internal/publish) lets through.
var PublisherVerbs = []string{"get", "list", "create", "update", "patch", "delete"}

// PublisherOptions pick what PublisherYAML writes.
type PublisherOptions struct {
	// Formats are the report APIs to grant; empty is both.
	Formats []reportapi.Format
	// Namespace limits the namespaced reports to one namespace (a Role
	// there); the cluster report stays a ClusterRole, since every run
	// writes one. Empty grants the namespaced reports cluster-wide, which
	// publish needs to find and delete the reports of namespaces that no
	// longer have findings.
	Namespace string
	Subject   Subject
}

// PublisherYAML writes the RBAC objects of kubegap publish: the report
// resources of the chosen formats with PublisherVerbs, nothing else.
func PublisherYAML(o PublisherOptions) string {
	formats := o.Formats
	if len(formats) == 0 {
		formats = reportapi.Formats()
	}
	var b strings.Builder
	b.WriteString(`# kubegap publish's access: get, list, create, update, patch and delete on
# the report objects it writes (wgpolicyk8s.io PolicyReports and
# ClusterPolicyReports, openreports.io Reports and ClusterReports), nothing
# else; no watch, no deletecollection, no other resource. Bind it to a
# ServiceAccount of its own, never the audit's read-only one. Written by
# kubegap rbac --publisher (add --format, --namespace, --service-account);
# deploy/rbac-publisher.yaml is its output for both formats, kept in step
# by go test ./internal/rbacgen (UPDATE_DOCS=1 rewrites it).
`)
	verbs := strings.Join(PublisherVerbs, ", ")
	rules := func(namespaced, cluster bool) string {
		var r strings.Builder
		for _, f := range formats {
			ns, cl := reportapi.Resources(f)
			var res []string
			if namespaced {
				res = append(res, ns.Resource)
			}
			if cluster {
				res = append(res, cl.Resource)
			}
			fmt.Fprintf(&r, "- apiGroups: [%q]\n  resources: [%s]\n  verbs: [%s]\n", ns.Group, strings.Join(res, ", "), verbs)
		}
		return r.String()
	}
	role := func(kind, name, ns, rules string) {
		fmt.Fprintf(&b, "apiVersion: rbac.authorization.k8s.io/v1\nkind: %s\nmetadata:\n  name: %s\n", kind, name)
		if ns != "" {
			fmt.Fprintf(&b, "  namespace: %s\n", ns)
		}
		b.WriteString("  labels:\n    app.kubernetes.io/name: kubegap\nrules:\n" + rules)
	}
	if o.Namespace == "" {
		if o.Subject.Name == "" {
			b.WriteString(`#
#   kubegap rbac --publisher | kubectl apply -f -
#   kubectl create clusterrolebinding kubegap-publisher \
#     --clusterrole=kubegap-publisher --serviceaccount=<namespace>:<name>
`)
		}
		role("ClusterRole", PublisherRoleName, "", rules(true, true))
		if o.Subject.Name != "" {
			writeBinding(&b, "ClusterRoleBinding", PublisherRoleName, "", "ClusterRole", o.Subject)
		}
		return b.String()
	}
	if o.Subject.Name == "" {
		fmt.Fprintf(&b, `#
# A namespace's publisher writes the reports in %[1]s and the cluster
# report. Bind both roles:
#   kubectl create rolebinding kubegap-publisher -n %[1]s \
#     --role=kubegap-publisher --serviceaccount=<namespace>:<name>
#   kubectl create clusterrolebinding kubegap-publisher-cluster \
#     --clusterrole=kubegap-publisher-cluster --serviceaccount=<namespace>:<name>
`, o.Namespace)
	}
	role("ClusterRole", PublisherRoleName+"-cluster", "", rules(false, true))
	if o.Subject.Name != "" {
		writeBinding(&b, "ClusterRoleBinding", PublisherRoleName+"-cluster", "", "ClusterRole", o.Subject)
	}
	b.WriteString("---\n")
	role("Role", PublisherRoleName, o.Namespace, rules(true, false))
	if o.Subject.Name != "" {
		writeBinding(&b, "RoleBinding", PublisherRoleName, o.Namespace, "Role", o.Subject)
	}
	return b.String()
}
