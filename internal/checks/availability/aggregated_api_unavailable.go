package availability

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

const (
	aggregatedID      = "aggregated-api-unavailable"
	ruleAPIDown       = "apiservice-unavailable"
	ruleNSDiscovery   = "namespace-discovery-failure"
	caseDatadogOOM    = "datadog-oom-killer-namespace-deletion-2020"
	aggregatedMessage = 300 // characters of a condition message kept as evidence
)

// aggregatedAPIUnavailableCheck finds aggregated APIs that are down and the
// namespace deletions they hold up. The namespace controller deletes a
// namespace's content only once discovery of every registered group
// succeeds (a Kubernetes maintainer's statement in
// https://github.com/kubernetes/kubernetes/issues/75788; GKE's
// troubleshooting guide, https://cloud.google.com/kubernetes-engine/docs/troubleshooting/terminating-namespaces,
// lists unavailable APIServices first among the causes of a stuck namespace).
func aggregatedAPIUnavailableCheck() check.Check {
	return check.Check{
		ID:       aggregatedID,
		Title:    "Aggregated APIs that are unavailable, and namespace deletions they hold up",
		Severity: finding.High,
		Description: "An APIService registers an API group served by an extension server (metrics-server, custom " +
			"metrics adapters, service catalogs). While its Available condition is False, discovery of that group " +
			"fails for every client, and the namespace controller, which must list every registered resource " +
			"type before it deletes a namespace's content, leaves every deleted namespace in Terminating: its " +
			"content is deleted later, whenever the API comes back, long after anyone connects it to its cause. " +
			"High for each APIService whose Available condition is False (evidence gives its reason and backing " +
			"Service) and for each Terminating namespace whose NamespaceDeletionDiscoveryFailure condition is True " +
			"(evidence gives the failing groups from its message). Sources: kubernetes/kubernetes#75788 (a " +
			"maintainer: every registered resource must be reachable for namespace cleanup), GKE's guide to " +
			"namespaces stuck Terminating.",
		Reads: check.Needs(snapshot.APIServices, snapshot.Namespaces),
		Rules: []check.Rule{
			{ID: ruleAPIDown, Summary: "APIServices whose Available condition is False", Needs: []snapshot.Resource{snapshot.APIServices}},
			{ID: ruleNSDiscovery, Summary: "Terminating namespaces whose deletion waits on failed discovery", Needs: []snapshot.Resource{snapshot.Namespaces}},
		},
		Cases: []string{caseDatadogOOM},
		Run:   runAggregatedAPIUnavailable,
	}
}

func runAggregatedAPIUnavailable(ctx *check.Context) ([]finding.Finding, error) {
	s := ctx.Snapshot
	var out []finding.Finding
	for _, o := range s.CustomObjects(snapshot.APIServices) {
		if f, ok := apiServiceFinding(&o); ok {
			out = append(out, f)
		}
	}
	for i := range s.Namespaces {
		if f, ok := namespaceDiscoveryFinding(&s.Namespaces[i]); ok {
			out = append(out, f)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Objects[0].Name < out[j].Objects[0].Name })
	return out, nil
}

// availableCondition returns an APIService's Available condition fields.
func availableCondition(o *unstructured.Unstructured) (status, reason, message string) {
	conds, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok || m["type"] != "Available" {
			continue
		}
		status, _ = m["status"].(string)
		reason, _ = m["reason"].(string)
		message, _ = m["message"].(string)
	}
	return status, reason, message
}

func apiServiceFinding(o *unstructured.Unstructured) (finding.Finding, bool) {
	status, reason, message := availableCondition(o)
	if status != string(corev1.ConditionFalse) {
		return finding.Finding{}, false
	}
	group, _, _ := unstructured.NestedString(o.Object, "spec", "group")
	version, _, _ := unstructured.NestedString(o.Object, "spec", "version")
	svcNS, _, _ := unstructured.NestedString(o.Object, "spec", "service", "namespace")
	svcName, _, _ := unstructured.NestedString(o.Object, "spec", "service", "name")
	ev := []string{fmt.Sprintf("APIService %s: Available False, reason %s", o.GetName(), reason)}
	if message != "" {
		ev = append(ev, "message: "+clip(message, aggregatedMessage))
	}
	objs := []finding.ObjectRef{{APIVersion: "apiregistration.k8s.io/v1", Kind: "APIService", Name: o.GetName()}}
	backend := "its extension server"
	if svcName != "" {
		backend = fmt.Sprintf("Service %s/%s", svcNS, svcName)
		objs = append(objs, finding.ObjectRef{APIVersion: "v1", Kind: "Service", Namespace: svcNS, Name: svcName})
		ev = append(ev, "served by "+backend)
	}
	f := finding.Finding{
		Check:    aggregatedID,
		Severity: finding.High,
		Title:    fmt.Sprintf("APIService %s (%s/%s) is unavailable", o.GetName(), group, version),
		Message: fmt.Sprintf("The aggregated API %s/%s, served by %s, reports Available False (%s): discovery of the group fails, "+
			"so every namespace deleted now stays Terminating with its content in place until the API returns, "+
			"and is then emptied at once.", group, version, backend, reason),
		Objects:  objs,
		Evidence: ev,
		Remediation: fmt.Sprintf("Restore %s (kubectl describe apiservice %s; look at its pods' restarts and OOM kills and give "+
			"them memory and replicas), or delete the APIService if nothing uses the group any more.", backend, o.GetName()),
		Cases: []string{caseDatadogOOM},
	}
	fields := []finding.Field{finding.Value("status.conditions[type=Available].status", status),
		finding.Value("status.conditions[type=Available].reason", reason)}
	if svcName != "" {
		fields = append(fields, finding.Value("spec.service.namespace", svcNS), finding.Value("spec.service.name", svcName))
	}
	f.AddEvidence(finding.Quote(objs[0], fields...))
	return f, true
}

func namespaceDiscoveryFinding(ns *corev1.Namespace) (finding.Finding, bool) {
	if ns.Status.Phase != corev1.NamespaceTerminating && ns.DeletionTimestamp == nil {
		return finding.Finding{}, false
	}
	for _, c := range ns.Status.Conditions {
		if c.Type != corev1.NamespaceDeletionDiscoveryFailure || c.Status != corev1.ConditionTrue {
			continue
		}
		ev := []string{fmt.Sprintf("condition %s True since %s, reason %s", c.Type, c.LastTransitionTime.UTC().Format("2006-01-02T15:04:05Z"), c.Reason)}
		if c.Message != "" {
			ev = append(ev, "message: "+clip(c.Message, aggregatedMessage))
		}
		f := finding.Finding{
			Check:    aggregatedID,
			Severity: finding.High,
			Title:    fmt.Sprintf("Namespace %s is Terminating, its deletion held up by failed API discovery", ns.Name),
			Message: fmt.Sprintf("Namespace %s was deleted, but the namespace controller cannot list every API group, so its "+
				"content is still in place; it will be deleted whenever discovery recovers, whether or not the "+
				"deletion is still wanted.", ns.Name),
			Objects:  []finding.ObjectRef{{APIVersion: "v1", Kind: "Namespace", Name: ns.Name}},
			Evidence: ev,
			Remediation: "Find the failing group in the condition's message (kubectl get apiservice shows which are not " +
				"Available), restore or remove that APIService, and decide before then whether the namespace's deletion is " +
				"still wanted: it cannot be cancelled, so back up what must survive.",
			Cases: []string{caseDatadogOOM},
		}
		cond := "status.conditions[type=" + string(c.Type) + "]."
		f.AddEvidence(finding.Quote(f.Objects[0], finding.Value(cond+"status", string(c.Status)), finding.Value(cond+"reason", c.Reason)))
		return f, true
	}
	return finding.Finding{}, false
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
