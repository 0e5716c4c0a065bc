package availability

// What a webhook covers, for every rule of webhook-blast-radius: the
// operations and resources of its rules, and whether its namespace and
// object selectors exclude a namespace. The check itself is in webhook_blast_radius.go.

import (
	"fmt"
	"slices"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// webhookScope reports whether rules cover pod CREATE, or the CREATE of
// every resource, and describes the covering rules. Rules for other
// operations only (DELETE, UPDATE, CONNECT) never block pod creation.
func webhookScope(rules []admissionv1.RuleWithOperations) (podsCreate, allResources bool, text string) {
	var parts []string
	for _, r := range rules {
		groupCore := slices.Contains(r.APIGroups, "") || slices.Contains(r.APIGroups, "*")
		groupAll := slices.Contains(r.APIGroups, "*")
		create := slices.Contains(r.Operations, admissionv1.Create) || slices.Contains(r.Operations, admissionv1.OperationAll)
		namespaced := r.Scope == nil || *r.Scope == admissionv1.AllScopes || *r.Scope == admissionv1.NamespacedScope
		wild := slices.Contains(r.Resources, "*") || slices.Contains(r.Resources, "*/*")
		pods := slices.Contains(r.Resources, "pods") || wild
		if !create {
			continue
		}
		hit := false
		if groupCore && namespaced && pods {
			podsCreate, hit = true, true
		}
		if groupAll && wild {
			allResources, hit = true, true
		}
		if hit {
			parts = append(parts, fmt.Sprintf("apiGroups=%s resources=%s operations=%s", listText(r.APIGroups), listText(r.Resources), opsText(r.Operations)))
		}
	}
	return podsCreate, allResources, strings.Join(parts, "; ")
}

// objectSelectorOptIn reports whether an objectSelector only admits objects
// that carry some label: then unlabelled pods, controllers' among them, are
// never sent to the webhook.
func objectSelectorOptIn(sel *metav1.LabelSelector) bool {
	if sel == nil {
		return false
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil || s.Empty() {
		return false
	}
	reqs, _ := s.Requirements()
	for _, r := range reqs {
		switch r.Operator() {
		case selection.In, selection.Equals, selection.DoubleEquals, selection.Exists:
			return true
		}
	}
	return false
}

// excluded says whether the webhook skips requests in namespace ns.
func (env *webhookEnv) excluded(w *webhookEntry, ns string) tri {
	t := env.selectorExcludes(w.nsSel, ns)
	// matchConditions are CEL that kubegap does not evaluate: any of them
	// may skip the namespace, unless the selector already does.
	if t == triNo && len(w.matchConditions) > 0 {
		return triUnknown
	}
	return t
}

// selectorExcludes says whether a namespaceSelector leaves namespace ns out.
func (env *webhookEnv) selectorExcludes(nsSel *metav1.LabelSelector, ns string) tri {
	if nsSel == nil {
		return triNo
	}
	sel, err := metav1.LabelSelectorAsSelector(nsSel)
	if err != nil {
		return triUnknown
	}
	if sel.Empty() {
		return triNo
	}
	nameLabel := env.facts.NamespaceNameLabel
	lbls := labels.Set{nameLabel: ns}
	obj := env.s.Index().Namespace(ns)
	if obj != nil {
		lbls = labels.Set{}
		for k, v := range obj.Labels {
			lbls[k] = v
		}
		lbls[nameLabel] = ns
	}
	if !sel.Matches(lbls) {
		return triYes
	}
	if obj == nil {
		// Without the namespace's labels, a negative requirement on another
		// label (an opt-out label such as admission.gatekeeper.sh/ignore)
		// may exclude it.
		reqs, _ := sel.Requirements()
		for _, r := range reqs {
			if r.Key() == nameLabel {
				continue
			}
			switch r.Operator() {
			case selection.NotIn, selection.NotEquals, selection.DoesNotExist:
				return triUnknown
			}
		}
	}
	return triNo
}

func selectorText(sel *metav1.LabelSelector) string {
	if sel == nil {
		return "<none>"
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return "<invalid>"
	}
	if s.Empty() {
		return "{} (every namespace)"
	}
	return s.String()
}

func opsText(ops []admissionv1.OperationType) string {
	ss := make([]string, len(ops))
	for i, o := range ops {
		ss[i] = string(o)
	}
	return listText(ss)
}
