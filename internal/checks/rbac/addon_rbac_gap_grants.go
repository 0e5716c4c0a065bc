package rbac

// addon-rbac-gap: what the input's RBAC grants each ServiceAccount, from Roles,
// ClusterRoles and their bindings, and whether it allows a verb on a resource.

import (
	"fmt"
	"sort"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubegap/kubegap/internal/snapshot"
)

// grants resolves what a service account may do.
type grants struct {
	clusterRoles map[string]*rbacv1.ClusterRole
	roles        map[string]*rbacv1.Role // namespace/name
	// crbBySubject maps "sa:ns/name" or "group:name" to the ClusterRoles bound to it.
	crbBySubject map[string][]string
	// crbs maps the same keys to the bindings themselves, for evidence.
	crbs        map[string][]crbSubject
	rbBySubject map[string][]rbBinding
	// unresolved says why a service account's grants are unknown: a
	// binding to a ClusterRole that is not in the input.
	unresolved map[string]string
	aggregated map[string][]rbacv1.PolicyRule
}

type rbBinding struct {
	ns, kind, name string
	binding        string // the RoleBinding's name
}

// crbSubject is one subject of a ClusterRoleBinding: the binding, the
// subject's index and what it names, and the ClusterRole bound.
type crbSubject struct {
	binding                  string
	subject                  int
	subjectKind, subjectName string
	role                     string
}

func subjectKeys(ns, sa string) []string {
	return []string{"sa:" + ns + "/" + sa, "group:system:serviceaccounts", "group:system:serviceaccounts:" + ns,
		"group:system:authenticated"}
}

func newGrants(s *snapshot.Snapshot) *grants {
	g := &grants{clusterRoles: map[string]*rbacv1.ClusterRole{}, roles: map[string]*rbacv1.Role{},
		crbBySubject: map[string][]string{}, crbs: map[string][]crbSubject{}, rbBySubject: map[string][]rbBinding{},
		unresolved: map[string]string{}, aggregated: map[string][]rbacv1.PolicyRule{}}
	for i := range s.ClusterRoles {
		g.clusterRoles[s.ClusterRoles[i].Name] = &s.ClusterRoles[i]
	}
	for i := range s.Roles {
		r := &s.Roles[i]
		g.roles[r.Namespace+"/"+r.Name] = r
	}
	key := func(sub rbacv1.Subject, bindingNS string) string {
		switch sub.Kind {
		case rbacv1.ServiceAccountKind:
			ns := sub.Namespace
			if ns == "" {
				ns = bindingNS
			}
			return "sa:" + ns + "/" + sub.Name
		case rbacv1.GroupKind:
			return "group:" + sub.Name
		}
		return ""
	}
	for i := range s.ClusterRoleBindings {
		b := &s.ClusterRoleBindings[i]
		if b.RoleRef.Kind != "ClusterRole" {
			continue
		}
		for j, sub := range b.Subjects {
			if k := key(sub, ""); k != "" {
				g.crbBySubject[k] = append(g.crbBySubject[k], b.RoleRef.Name)
				g.crbs[k] = append(g.crbs[k], crbSubject{b.Name, j, sub.Kind, sub.Name, b.RoleRef.Name})
				if g.clusterRoles[b.RoleRef.Name] == nil && sub.Kind == rbacv1.ServiceAccountKind {
					g.unresolved[strings.TrimPrefix(k, "sa:")] = fmt.Sprintf("ClusterRoleBinding %s refers to ClusterRole %s, which is not in the input",
						b.Name, b.RoleRef.Name)
				}
			}
		}
	}
	for i := range s.RoleBindings {
		b := &s.RoleBindings[i]
		for _, sub := range b.Subjects {
			if k := key(sub, b.Namespace); k != "" {
				g.rbBySubject[k] = append(g.rbBySubject[k], rbBinding{b.Namespace, b.RoleRef.Kind, b.RoleRef.Name, b.Name})
			}
		}
	}
	return g
}

// rulesOf returns a ClusterRole's rules with those of the ClusterRoles its
// aggregationRule selects (the controller fills them in a live cluster;
// files may hold the selector only).
func (g *grants) rulesOf(name string) []rbacv1.PolicyRule {
	if r, ok := g.aggregated[name]; ok {
		return r
	}
	g.aggregated[name] = nil // guards against cycles
	cr := g.clusterRoles[name]
	if cr == nil {
		return nil
	}
	rules := append([]rbacv1.PolicyRule{}, cr.Rules...)
	if cr.AggregationRule != nil {
		for _, sel := range cr.AggregationRule.ClusterRoleSelectors {
			ls, err := metav1.LabelSelectorAsSelector(&sel)
			if err != nil || ls.Empty() {
				continue
			}
			for _, other := range g.clusterRoles {
				if other.Name != name && ls.Matches(labels.Set(other.Labels)) {
					rules = append(rules, g.rulesOf(other.Name)...)
				}
			}
		}
	}
	g.aggregated[name] = rules
	return rules
}

func allows(rules []rbacv1.PolicyRule, group, resource, verb string) bool {
	for _, r := range rules {
		if len(r.ResourceNames) > 0 && (verb == "list" || verb == "watch") {
			continue // named resources cannot be listed or watched as a collection
		}
		if has(r.APIGroups, group) && has(r.Resources, resource) && has(r.Verbs, verb) {
			return true
		}
	}
	return false
}

func has(list []string, v string) bool {
	for _, x := range list {
		if x == v || x == "*" {
			return true
		}
	}
	return false
}

func (g *grants) clusterAllows(ns, sa, group, resource, verb string) (string, bool) {
	for _, k := range subjectKeys(ns, sa) {
		for _, role := range g.crbBySubject[k] {
			if allows(g.rulesOf(role), group, resource, verb) {
				return "ClusterRole " + role + " (bound to " + strings.TrimPrefix(strings.TrimPrefix(k, "sa:"), "group:") + ")", true
			}
		}
	}
	return "", false
}

// namespacedAllows returns a RoleBinding that grants the permission in
// its namespace.
func (g *grants) namespacedAllows(ns, sa, group, resource, verb string) (rbBinding, bool) {
	for _, k := range subjectKeys(ns, sa) {
		for _, b := range g.rbBySubject[k] {
			var rules []rbacv1.PolicyRule
			if b.kind == "ClusterRole" {
				rules = g.rulesOf(b.name)
			} else if r := g.roles[b.ns+"/"+b.name]; r != nil {
				rules = r.Rules
			}
			if allows(rules, group, resource, verb) {
				return b, true
			}
		}
	}
	return rbBinding{}, false
}

// bindingsOf lists the ClusterRoleBinding subjects that name the service
// account or a group holding it.
func (g *grants) bindingsOf(ns, sa string) []crbSubject {
	var out []crbSubject
	for _, k := range subjectKeys(ns, sa) {
		out = append(out, g.crbs[k]...)
	}
	return out
}

func (g *grants) rolesOf(ns, sa string) []string {
	set := map[string]bool{}
	for _, k := range subjectKeys(ns, sa) {
		for _, r := range g.crbBySubject[k] {
			set[r] = true
		}
	}
	out := make([]string, 0, len(set))
	for r := range set {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}
