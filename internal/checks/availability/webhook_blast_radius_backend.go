package availability

// The backend rules of webhook-blast-radius: fail-closed-backend (a
// webhook whose Service is missing or has fewer than 2 ready endpoints)
// and fail-closed-service-writes (a webhook on Service writes judged on its
// backend alone), with the Services, EndpointSlices and Deployments they
// read. The check itself is in webhook_blast_radius.go.

import (
	"fmt"
	"slices"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

type backendDeployment struct {
	ns, name string
	replicas int32
}

// readyEndpointsByService counts, per Service, the distinct endpoints that
// are ready. A dual-stack Service has one slice per address family listing
// the same pods, so endpoints are told apart by their target, not counted
// per slice. A nil ready condition means unknown, which consumers are told
// to treat as ready.
func readyEndpointsByService(s *snapshot.Snapshot) map[string]int {
	seen := map[string]map[string]bool{}
	for i := range s.EndpointSlices {
		sl := &s.EndpointSlices[i]
		svc := sl.Labels["kubernetes.io/service-name"]
		if svc == "" {
			continue
		}
		key := sl.Namespace + "/" + svc
		if seen[key] == nil {
			seen[key] = map[string]bool{}
		}
		for _, ep := range sl.Endpoints {
			if ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
				continue
			}
			id := ""
			switch {
			case ep.TargetRef != nil:
				id = ep.TargetRef.Kind + "/" + ep.TargetRef.Namespace + "/" + ep.TargetRef.Name
			case len(ep.Addresses) > 0:
				id = ep.Addresses[0]
			default:
				continue
			}
			seen[key][id] = true
		}
	}
	out := make(map[string]int, len(seen))
	for k, v := range seen {
		out[k] = len(v)
	}
	return out
}

// backend judges the webhook's backend: an upper bound on its ready
// endpoints (-1 unknown) and a phrase naming it. What it could not see is
// noted against rule when the webhook fails closed.
func (env *webhookEnv) backend(path string, w *webhookEntry, fail bool, rule string, refs *check.CappedRefs, v *webhookVerdict) (readyMax int, backendText string) {
	readyMax = -1
	if svc := w.clientConfig.Service; svc != nil {
		key := svc.Namespace + "/" + svc.Name
		refs.Add(check.ResourceRef(snapshot.Services, svc.Namespace, svc.Name))
		obj := env.services[key]
		switch {
		case obj == nil && env.ctx.CompleteIn(snapshot.Services, svc.Namespace):
			readyMax = 0
			backendText = fmt.Sprintf("its Service %s does not exist", key)
			v.evidence = append(v.evidence, fmt.Sprintf("%s clientConfig.service=%s: no such Service (every Service of namespace %s was read)", path, key, svc.Namespace))
		case obj == nil:
			// Open world: not in the input is not absent.
			v.evidence = append(v.evidence, fmt.Sprintf("%s clientConfig.service=%s: Service not in the input, backend readiness unknown", path, key))
			if fail {
				env.ctx.Incomplete(rule, "Service %s of %s is not in the input", key, path)
			}
		default:
			// A Service's slices come and go together in a dump, so those
			// present give its readiness; with none present, only a
			// complete read proves there are none.
			n, sliced := env.ready[key]
			switch {
			case sliced || env.ctx.CompleteIn(snapshot.EndpointSlices, svc.Namespace):
				readyMax = n
				backendText = fmt.Sprintf("its Service %s has %d ready endpoint%s", key, readyMax, check.PluralS(readyMax))
				v.evidence = append(v.evidence, fmt.Sprintf("Service %s: %d ready endpoint%s in EndpointSlices labelled kubernetes.io/service-name=%s",
					key, readyMax, check.PluralS(readyMax), svc.Name))
			case fail:
				env.ctx.Incomplete(rule, "no EndpointSlice of Service %s is in the input", key)
			}
			var total int32
			deps := env.backendDeployments(obj)
			for _, d := range deps {
				refs.Add(check.ResourceRef(snapshot.Deployments, d.ns, d.name))
				total += d.replicas
				v.evidence = append(v.evidence, fmt.Sprintf("Deployment %s/%s spec.replicas=%d, template labels match Service %s spec.selector", d.ns, d.name, d.replicas, key))
			}
			if len(deps) > 0 {
				if readyMax < 0 || int(total) < readyMax {
					readyMax = int(total)
				}
				if backendText != "" {
					backendText += ", "
				}
				backendText += fmt.Sprintf("backed by %s running %d replica%s", deploymentNames(deps), total, check.PluralS(int(total)))
			}
		}
	} else if w.clientConfig.URL != nil {
		v.evidence = append(v.evidence, fmt.Sprintf("%s clientConfig.url=%s: backend outside the cluster, readiness unknown", path, *w.clientConfig.URL))
	}
	return readyMax, backendText
}

// backendDeployments finds the Deployments whose pod template the Service's
// selector matches, once per Service.
func (env *webhookEnv) backendDeployments(svc *corev1.Service) []*backendDeployment {
	key := svc.Namespace + "/" + svc.Name
	if deps, ok := env.backends[key]; ok {
		return deps
	}
	var deps []*backendDeployment
	if len(svc.Spec.Selector) > 0 {
		sel := labels.SelectorFromSet(svc.Spec.Selector)
		for i := range env.s.Deployments {
			d := &env.s.Deployments[i]
			if d.Namespace == svc.Namespace && sel.Matches(labels.Set(d.Spec.Template.Labels)) {
				deps = append(deps, &backendDeployment{ns: d.Namespace, name: d.Name, replicas: check.SpecReplicas(d.Spec.Replicas)})
			}
		}
	}
	env.backends[key] = deps
	return deps
}

func deploymentNames(deps []*backendDeployment) string {
	names := make([]string, len(deps))
	for i, d := range deps {
		names[i] = "Deployment " + d.ns + "/" + d.name
	}
	return strings.Join(names, " and ")
}

// judgeServiceWrites judges a webhook that does not gate pod creation but
// fails closed on writes to Services: while its backend is down, no Service
// it covers can be created, changed or deleted. Only a backend that is down
// now (high) or a single point of failure (medium) is a finding; a healthy,
// replicated backend is the webhook's owner's choice.
func (env *webhookEnv) judgeServiceWrites(res snapshot.Resource, cfgName string, w *webhookEntry, refs *check.CappedRefs) (webhookVerdict, bool) {
	ruleText := serviceWriteScope(w.rules)
	if ruleText == "" {
		return webhookVerdict{}, false
	}
	defaults, defaultNote := env.facts.defaultsFor(w.apiVersion)
	policy, note := defaults.FailurePolicy, defaultNote
	if w.failurePolicy != nil {
		policy, note = *w.failurePolicy, ""
	}
	if policy != admissionv1.Fail {
		return webhookVerdict{}, false
	}
	path := fmt.Sprintf("%s %s webhooks[%d] (%s)", res.Kind, cfgName, w.index, w.name)
	v := webhookVerdict{services: true}
	v.items = append(v.items, finding.Quote(finding.ObjectRef{APIVersion: res.APIVersion(), Kind: res.Kind, Name: cfgName}, webhookFields(*w)...))
	v.evidence = append(v.evidence, fmt.Sprintf("%s rules cover %s", path, ruleText),
		fmt.Sprintf("%s failurePolicy=%s%s", path, policy, note),
		fmt.Sprintf("%s namespaceSelector=%s", path, selectorText(w.nsSel)))
	readyMax, backendText := env.backend(path, w, true, webhookRuleServices, refs, &v)
	what := "failurePolicy Fail on writes to Services"
	switch {
	case readyMax == 0:
		v.sev = finding.High
		v.reasons = append(v.reasons, fmt.Sprintf("%s, and %s, so it rejects every Service write it receives now", what, backendText))
	case readyMax >= 0 && readyMax < webhookMinReady:
		v.sev = finding.Medium
		v.reasons = append(v.reasons, fmt.Sprintf("%s, and %s: one crash-looping pod stops every Service change it covers", what, backendText))
	default:
		return webhookVerdict{}, false
	}
	return v, true
}

// serviceWriteScope describes the rules that send Service creates, updates
// or deletes to the webhook, or returns "".
func serviceWriteScope(rules []admissionv1.RuleWithOperations) string {
	var parts []string
	for _, r := range rules {
		groupCore := slices.Contains(r.APIGroups, "") || slices.Contains(r.APIGroups, "*")
		namespaced := r.Scope == nil || *r.Scope == admissionv1.AllScopes || *r.Scope == admissionv1.NamespacedScope
		svc := slices.Contains(r.Resources, "services") || slices.Contains(r.Resources, "*") || slices.Contains(r.Resources, "*/*")
		write := slices.ContainsFunc(r.Operations, func(o admissionv1.OperationType) bool {
			return o == admissionv1.Create || o == admissionv1.Update || o == admissionv1.Delete || o == admissionv1.OperationAll
		})
		if groupCore && namespaced && svc && write {
			parts = append(parts, fmt.Sprintf("apiGroups=%s resources=%s operations=%s", listText(r.APIGroups), listText(r.Resources), opsText(r.Operations)))
		}
	}
	return strings.Join(parts, "; ")
}
