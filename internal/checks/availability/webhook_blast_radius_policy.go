package availability

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// webhookRulePolicy: the network-cut case under way. A NetworkPolicy that
// selects a webhook's backend pods and admits ingress only from other pods
// (podSelector or namespaceSelector peers) shuts out the API server, which
// calls the webhook from the control plane, not from a pod; a fail-closed
// webhook then rejects everything it covers although its pods are ready.
const webhookRulePolicy = "backend-policy-blocked"

// policyBlockedBackend reports whether NetworkPolicies shut the API server
// out of the webhook's backend pods, with the policies' names. It says
// blocked only when that is certain from what the input holds: some policy
// selects the backend Deployments' pods for Ingress, and no ingress rule of
// any of them admits every source (no from) on the Service's target port.
// A rule with an ipBlock peer may admit the API server's address and makes
// the answer no; so does a port that cannot be matched to the target port.
// So does a backend on the host network: NetworkPolicies do not apply to
// hostNetwork pods. Nor can a policy shut out the pod's own node, which the
// finding's text says (an API server there still gets through).
func (env *webhookEnv) policyBlockedBackend(w *webhookEntry) (blocked bool, names []string) {
	ref := w.clientConfig.Service
	if ref == nil {
		return false, nil
	}
	svc := env.services[ref.Namespace+"/"+ref.Name]
	if svc == nil {
		return false, nil
	}
	var podLabels []labels.Set
	for i := range env.s.Deployments {
		d := &env.s.Deployments[i]
		if d.Namespace == svc.Namespace && len(svc.Spec.Selector) > 0 &&
			labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(d.Spec.Template.Labels)) {
			if d.Spec.Template.Spec.HostNetwork {
				return false, nil // no NetworkPolicy applies to these pods
			}
			podLabels = append(podLabels, labels.Set(d.Spec.Template.Labels))
		}
	}
	if len(podLabels) == 0 {
		return false, nil
	}
	target, ok := serviceTargetPort(svc, ref.Port)
	if !ok {
		return false, nil
	}
	for i := range env.s.NetworkPolicies {
		np := &env.s.NetworkPolicies[i]
		if np.Namespace != svc.Namespace || !restrictsIngress(np) || !selectsAll(np.Spec.PodSelector, podLabels) {
			continue
		}
		names = append(names, np.Namespace+"/"+np.Name)
		for _, r := range np.Spec.Ingress {
			if !portMayMatch(r.Ports, target) {
				continue
			}
			if len(r.From) == 0 {
				return false, nil // every source on that port
			}
			for _, p := range r.From {
				if p.IPBlock != nil {
					return false, nil // may hold the API server's address
				}
			}
		}
	}
	return len(names) > 0, names
}

// restrictsIngress: the policy isolates its pods for ingress (policyTypes
// names Ingress, or is empty, which the API treats as Ingress).
func restrictsIngress(np *networkingv1.NetworkPolicy) bool {
	if len(np.Spec.PolicyTypes) == 0 {
		return true
	}
	for _, t := range np.Spec.PolicyTypes {
		if t == networkingv1.PolicyTypeIngress {
			return true
		}
	}
	return false
}

// selectsAll: the podSelector matches the template labels of every backend.
func selectsAll(sel metav1.LabelSelector, sets []labels.Set) bool {
	s, err := metav1.LabelSelectorAsSelector(&sel)
	if err != nil {
		return false
	}
	for _, l := range sets {
		if !s.Matches(l) {
			return false
		}
	}
	return true
}

// serviceTargetPort is the container port the webhook's calls arrive on:
// the targetPort of the Service port the clientConfig names (443 when it
// names none), which defaults to the port itself.
func serviceTargetPort(svc *corev1.Service, port *int32) (intstr.IntOrString, bool) {
	want := int32(443)
	if port != nil {
		want = *port
	}
	for _, p := range svc.Spec.Ports {
		if p.Port != want {
			continue
		}
		if p.TargetPort.Type == intstr.String && p.TargetPort.StrVal != "" {
			return p.TargetPort, true
		}
		if p.TargetPort.IntVal != 0 {
			return p.TargetPort, true
		}
		return intstr.FromInt32(p.Port), true
	}
	return intstr.IntOrString{}, false
}

// portMayMatch: the rule's ports include the target port, or may (no ports
// means all; a named port against a number, or the reverse, cannot be told
// without the pod spec, so it counts as a match).
func portMayMatch(ports []networkingv1.NetworkPolicyPort, target intstr.IntOrString) bool {
	if len(ports) == 0 {
		return true
	}
	for _, p := range ports {
		switch {
		case p.Port == nil:
			return true
		case p.Port.Type != target.Type:
			return true
		case p.Port.Type == intstr.String && p.Port.StrVal == target.StrVal:
			return true
		case p.Port.Type == intstr.Int && p.EndPort != nil && p.Port.IntVal <= target.IntVal && target.IntVal <= *p.EndPort:
			return true
		case p.Port.Type == intstr.Int && p.Port.IntVal == target.IntVal:
			return true
		}
	}
	return false
}

// policyText names the blocking policies for a finding.
func policyText(names []string) string {
	return fmt.Sprintf("NetworkPolic%s %s", map[bool]string{true: "y", false: "ies"}[len(names) == 1], strings.Join(names, ", "))
}
