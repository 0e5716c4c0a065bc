package availability

import (
	"fmt"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// Thresholds: policy, not fact. The good-practice guide asks for small
// timeouts and more than one replica behind a webhook.
const (
	webhookLongTimeout = 5
	webhookMinReady    = 2
)

// webhookBlastRadiusCheck finds admission webhooks whose outage stops the
// cluster from creating pods, its own recovery included.
func webhookBlastRadiusCheck() check.Check {
	return check.Check{
		ID:       "webhook-blast-radius",
		Title:    "Admission webhooks that can stop all pod creation",
		Severity: finding.High,
		Description: "A webhook with failurePolicy Fail (the default) on pod CREATE, or on every resource, rejects " +
			"what it covers whenever its backend does not answer. Pods are created by controllers, so nobody sees " +
			"the error: ReplicaSets, DaemonSets (network, DNS) and the replacements for drained nodes silently stop, " +
			"and if kube-system or the webhook's own namespace is not excluded the cluster cannot heal itself. " +
			"High when such a webhook covers kube-system and its Service has fewer than 2 ready endpoints (or none " +
			"at all); medium for other single points of failure or a kube-system that is not excluded; low for " +
			"long timeouts alone. Rules that only DELETE or UPDATE are not pod creation; matchConditions that " +
			"exempt system users (controllers among them) leave at most low; other matchConditions make the " +
			"scope unknown rather than all. Older API versions get their own defaults (v1beta1: Ignore, 30 s). " +
			"Without Services, EndpointSlices and Deployments the backend's readiness is unknown, never absent; " +
			"without Namespaces, exclusion is judged from the selector alone. A fail-closed webhook that does not gate " +
			"pods but covers Service creates, updates or deletes is judged on its backend alone: high when the " +
			"backend has no ready endpoint (every Service write it covers is rejected now), medium when it has one. High, too, " +
			"for a fail-closed webhook on pods whose backend Deployments' pods a NetworkPolicy selects for Ingress with no " +
			"ingress rule admitting every source on the webhook's target port: only pods are admitted, and the API server, " +
			"which calls from the control plane, is shut out (a rule with an ipBlock peer, which may hold its address, clears it, and so do backend pods on the host network, to which no NetworkPolicy applies).",
		Reads: append(check.Needs(snapshot.ValidatingWebhookConfigurations, snapshot.MutatingWebhookConfigurations),
			check.Optional(snapshot.Services), check.Optional(snapshot.EndpointSlices), check.Optional(snapshot.Deployments), check.Optional(snapshot.Namespaces), check.Optional(snapshot.NetworkPolicies)),
		Rules: []check.Rule{
			{ID: webhookRuleCritical, Summary: "A fail-closed webhook on pod creation, or on every resource, that does not exclude kube-system",
				Needs: []snapshot.Resource{snapshot.ValidatingWebhookConfigurations, snapshot.MutatingWebhookConfigurations, snapshot.Namespaces}},
			{ID: webhookRuleBackend, Summary: "A fail-closed webhook whose Service is missing or has fewer than 2 ready endpoints",
				Needs: []snapshot.Resource{snapshot.ValidatingWebhookConfigurations, snapshot.MutatingWebhookConfigurations, snapshot.Services, snapshot.EndpointSlices}},
			{ID: webhookRuleOwnNamespace, Summary: "A fail-closed webhook that does not exclude its own namespace",
				Needs: []snapshot.Resource{snapshot.ValidatingWebhookConfigurations, snapshot.MutatingWebhookConfigurations, snapshot.Namespaces}},
			{ID: webhookRuleTimeout, Summary: "A webhook that may gate kube-system's pods with a timeout over 5 seconds",
				Needs: []snapshot.Resource{snapshot.ValidatingWebhookConfigurations, snapshot.MutatingWebhookConfigurations, snapshot.Namespaces}},
			{ID: webhookRulePolicy, Summary: "No NetworkPolicy shuts the API server out of a fail-closed webhook's backend pods",
				Needs: []snapshot.Resource{snapshot.ValidatingWebhookConfigurations, snapshot.MutatingWebhookConfigurations, snapshot.Services, snapshot.Deployments, snapshot.NetworkPolicies}},
			{ID: webhookRuleServices, Summary: "A fail-closed webhook on Service writes whose Service is missing or has fewer than 2 ready endpoints",
				Needs: []snapshot.Resource{snapshot.ValidatingWebhookConfigurations, snapshot.MutatingWebhookConfigurations, snapshot.Services, snapshot.EndpointSlices}},
		},
		// The network-cut case is detected, not prevented: the NetworkPolicy
		// that cut KAI's webhook off was the trigger, which backend-policy-
		// blocked reads once it is in place; before it, the one-replica
		// backend that makes the check fire is the operator's default, not a
		// value the report gives.
		Cases: check.Cite(check.Prevents(webhookCases(webhookCaseFlags{slow: true, allResources: true, critical: true, kubeSystemCovered: true, selfBlock: true, services: true})...),
			check.Detects(casePodWebhooksNetworkCut)),
		Run: runWebhookBlastRadius,
	}
}

// Rules of webhook-blast-radius.
const (
	webhookRuleCritical     = "fail-closed-kube-system"
	webhookRuleBackend      = "fail-closed-backend"
	webhookRuleOwnNamespace = "own-namespace"
	webhookRuleTimeout      = "long-timeout"
	webhookRuleServices     = "fail-closed-service-writes"
)

// webhookCases returns the cases a finding cites, as a fresh slice: the
// OPA webhook that stalled a GKE upgrade and the pod webhook of the Datadog
// talk, plus, for long timeouts, the DFDS deployments that timed out behind
// a slow webhook. The other cases are attached where the finding shows
// their mechanism: a fail-closed webhook over every resource (Kyverno's
// resource webhook after an OOM kill, Gatekeeper blocking the scheduler's
// leases, Kyverno rejecting the ServiceCIDR a 1.33 API server creates), one
// that gates kube-system pod creation (Kyverno and metrics-server
// deadlocked in a Cluster API upgrade), and one that does not exclude its
// own namespace (Kyverno unable to restart after an AKS stop/start).
func webhookCases(c webhookCaseFlags) []string {
	cs := []string{"jetstack-gke-opa-webhook-upgrade", "daemonset-pull-always-nat-ratelimit"}
	if c.slow {
		cs = append(cs, "dfds-alcide-admission-webhook-timeouts-2020")
	}
	if c.allResources {
		cs = append(cs, caseKyvernoOOMAllResources, caseGatekeeperControlPlane, caseKyvernoServiceCIDR)
	}
	if c.critical {
		cs = append(cs, caseKyvernoCAPIDeadlock)
	}
	if c.kubeSystemCovered {
		cs = append(cs, caseLinkerdInjectorKubeSystem)
	}
	if c.selfBlock {
		cs = append(cs, caseKyvernoStopStart)
	}
	if c.services {
		cs = append(cs, caseKyvernoServices)
	}
	if c.podsFailClosed || c.policyBlocked {
		cs = append(cs, casePodWebhooksNetworkCut)
	}
	return cs
}

// Cases cited by webhook-blast-radius findings beyond the founding ones.
const (
	caseKyvernoOOMAllResources = "kyverno-oom-webhook-blocks-all-resources-aks-2022"
	caseGatekeeperControlPlane = "gatekeeper-webhook-blocks-user-cluster-control-plane-2020"
	caseKyvernoServiceCIDR     = "kyverno-blocks-apiserver-133-servicecidr-upgrade-2026"
	caseKyvernoCAPIDeadlock    = "kyverno-metrics-server-capi-upgrade-deadlock-2021"
	caseKyvernoStopStart       = "kyverno-aks-stop-start-bootstrap-deadlock-2026"
	caseKyvernoServices        = "dfds-kyverno-webhook-blocks-service-crud-2022"
	// A fail-closed pod webhook whose backend a NetworkPolicy cut off
	// (KAI-Scheduler), or a CNI restart (Cozystack).
	casePodWebhooksNetworkCut = "pod-create-webhooks-unreachable-network-deadlock-2026"
	// Linkerd's injector failing closed over kube-system (and, set to
	// Ignore, leaving pods unmeshed, which this check does not see).
	caseLinkerdInjectorKubeSystem = "linkerd-injector-fail-open-unmeshed-pods-and-fail-closed-kube-system-2019-2025"
)

// webhookCaseFlags is what a configuration's flagged webhooks show, as far
// as the choice of cases goes.
type webhookCaseFlags struct {
	slow         bool // a long timeout
	allResources bool // fail-closed on the creation of every resource
	critical     bool // fail-closed over kube-system pod creation
	// kubeSystemCovered: critical, and the selector is known to cover
	// kube-system (not merely maybe): the Linkerd case's webhook, whose
	// kube-system pods were rejected.
	kubeSystemCovered bool
	selfBlock         bool // fail-closed over its own namespace's pods
	services          bool // fail-closed on Service writes, with a weak backend
	// podsFailClosed: fail-closed on pod creation, flagged medium or high,
	// with a backend Service in the cluster and no matchConditions: the
	// shape of the network-cut case (an in-cluster backend the pod network
	// must reach, covering every pod its selectors admit). A URL backend
	// outside the cluster, or matchConditions that narrow the pods sent
	// (KAI's own fix), are not that shape.
	podsFailClosed bool
	// policyBlocked: a NetworkPolicy shuts the API server out of the
	// backend, the network-cut case under way.
	policyBlocked bool
}

// webhookEntry is one webhook of either kind, reduced to what the check reads.
type webhookEntry struct {
	index           int
	name            string
	rules           []admissionv1.RuleWithOperations
	failurePolicy   *admissionv1.FailurePolicyType
	timeout         *int32
	nsSel, objSel   *metav1.LabelSelector
	matchConditions []admissionv1.MatchCondition
	clientConfig    admissionv1.WebhookClientConfig
	// apiVersion is the version the configuration was written in when the
	// loader converted it from an older one; empty for v1.
	apiVersion string
}

// tri is a three-valued answer.
type tri int

const (
	triNo tri = iota
	triYes
	triUnknown
)

// webhookEnv is what the check knows about the cluster around the webhooks.
type webhookEnv struct {
	facts    *webhookFacts
	ctx      *check.Context
	s        *snapshot.Snapshot
	services map[string]*corev1.Service
	ready    map[string]int // service ns/name → distinct ready endpoints, for services with slices
	backends map[string][]*backendDeployment
}

func runWebhookBlastRadius(ctx *check.Context) ([]finding.Finding, error) {
	facts, err := loadWebhookFacts()
	if err != nil {
		return nil, err
	}
	s := ctx.Snapshot
	env := &webhookEnv{
		facts: facts, ctx: ctx, s: s,
		services: map[string]*corev1.Service{}, backends: map[string][]*backendDeployment{},
	}
	for i := range s.Services {
		env.services[s.Services[i].Namespace+"/"+s.Services[i].Name] = &s.Services[i]
	}
	env.ready = readyEndpointsByService(s)

	var out []finding.Finding
	for i := range s.ValidatingWebhookConfigurations {
		c := &s.ValidatingWebhookConfigurations[i]
		var hooks []webhookEntry
		for j, w := range c.Webhooks {
			hooks = append(hooks, webhookEntry{index: j, name: w.Name, rules: w.Rules, failurePolicy: w.FailurePolicy,
				timeout: w.TimeoutSeconds, nsSel: w.NamespaceSelector, objSel: w.ObjectSelector,
				matchConditions: w.MatchConditions, clientConfig: w.ClientConfig, apiVersion: snapshot.OriginalAPIVersion(c)})
		}
		if f, ok := env.configFinding(snapshot.ValidatingWebhookConfigurations, c.Name, hooks); ok {
			out = append(out, f)
		}
	}
	for i := range s.MutatingWebhookConfigurations {
		c := &s.MutatingWebhookConfigurations[i]
		var hooks []webhookEntry
		for j, w := range c.Webhooks {
			hooks = append(hooks, webhookEntry{index: j, name: w.Name, rules: w.Rules, failurePolicy: w.FailurePolicy,
				timeout: w.TimeoutSeconds, nsSel: w.NamespaceSelector, objSel: w.ObjectSelector,
				matchConditions: w.MatchConditions, clientConfig: w.ClientConfig, apiVersion: snapshot.OriginalAPIVersion(c)})
		}
		if f, ok := env.configFinding(snapshot.MutatingWebhookConfigurations, c.Name, hooks); ok {
			out = append(out, f)
		}
	}
	return out, nil
}

// webhookVerdict is what one webhook contributes to its configuration's finding.
type webhookVerdict struct {
	sev      finding.Severity
	critical bool // it may gate pods of kube-system
	// kubeSystemCovered: it fails closed on kube-system's pods for certain.
	kubeSystemCovered bool
	slow              bool // its timeout is long
	// allResources: fail-closed on the creation of every resource;
	// selfBlock: fail-closed over its own backend's namespace.
	allResources, selfBlock bool
	// services: fail-closed on Service writes only (not pods), with a
	// backend that is down or a single point of failure.
	services bool
	// policyBlocked: NetworkPolicies shut the API server out of its
	// backend pods (webhookRulePolicy).
	policyBlocked bool
	reasons       []string
	evidence      []string
	items         []finding.EvidenceItem // quoted fields, after evidence
}

// webhookFields quotes a webhook's failurePolicy and timeoutSeconds as the
// configuration writes them: absent where the API default applies.
func webhookFields(w webhookEntry) []finding.Field {
	prefix := "webhooks[name=" + w.name + "]."
	out := []finding.Field{finding.Absent(prefix + "failurePolicy"), finding.Absent(prefix + "timeoutSeconds")}
	if w.failurePolicy != nil {
		out[0] = finding.Value(prefix+"failurePolicy", string(*w.failurePolicy))
	}
	if w.timeout != nil {
		out[1] = finding.Value(prefix+"timeoutSeconds", *w.timeout)
	}
	return out
}

func (env *webhookEnv) configFinding(res snapshot.Resource, cfgName string, hooks []webhookEntry) (finding.Finding, bool) {
	refs := check.NewCappedRefs()
	refs.Add(check.ResourceRef(res, "", cfgName))
	sev := finding.Info
	var reasons, ev []string
	var items []finding.EvidenceItem
	var flagged []string
	var flags webhookCaseFlags
	podsToo := false // some flagged webhook gates pods, not only Services
	for i := range hooks {
		v, ok := env.judge(res, cfgName, &hooks[i], refs)
		if !ok {
			continue
		}
		flags.critical = flags.critical || v.critical
		flags.kubeSystemCovered = flags.kubeSystemCovered || v.kubeSystemCovered
		flags.slow = flags.slow || v.slow
		flags.allResources = flags.allResources || v.allResources
		flags.selfBlock = flags.selfBlock || v.selfBlock
		flags.services = flags.services || v.services
		flags.policyBlocked = flags.policyBlocked || v.policyBlocked
		podsToo = podsToo || !v.services
		// Medium and high pod verdicts all fail closed (Ignore ones stay low).
		flags.podsFailClosed = flags.podsFailClosed || (!v.services && v.sev >= finding.Medium &&
			hooks[i].clientConfig.Service != nil && len(hooks[i].matchConditions) == 0)
		if v.sev > sev {
			sev = v.sev
		}
		flagged = append(flagged, hooks[i].name)
		reasons = append(reasons, fmt.Sprintf("Webhook %s: %s", hooks[i].name, strings.Join(v.reasons, "; ")))
		ev = append(ev, v.evidence...)
		items = append(items, v.items...)
	}
	if len(flagged) == 0 {
		return finding.Finding{}, false
	}
	title := fmt.Sprintf("%s %s can block pod creation cluster-wide", res.Kind, cfgName)
	switch {
	case !podsToo:
		title = fmt.Sprintf("%s %s can block every write to the Services it covers", res.Kind, cfgName)
	case sev == finding.Low:
		title = fmt.Sprintf("%s %s slows or gates pod creation", res.Kind, cfgName)
	}
	msg := strings.Join(reasons, ". ") + "."
	cases := webhookCases(flags)
	switch {
	case !podsToo:
		// The pod-creation cases do not show this mechanism.
		cases = []string{caseKyvernoServices}
		msg += " While the backend is down, no Service in the namespaces it covers can be created, changed or deleted: " +
			"deployments that add or change a Service fail, and nothing retries them."
	case sev >= finding.Medium && flags.critical:
		msg += " While the backend is down, controllers cannot create the pods it covers and nobody sees the rejection: " +
			"ReplicaSets, DaemonSets (network and DNS among them) and the replacements for pods on drained nodes stop."
	case sev >= finding.Medium:
		msg += " While the backend is down, controllers cannot create the pods it covers and nobody sees the rejection: " +
			"ReplicaSets, Jobs and the replacements for pods on drained nodes stop in those namespaces."
	}
	f := finding.Finding{
		Check:    "webhook-blast-radius",
		Severity: sev,
		Title:    title,
		Message:  msg,
		Objects:  refs.List(),
		Evidence: ev,
		Remediation: "Give the webhook a namespaceSelector that excludes kube-system and its own namespace " +
			"(kubernetes.io/metadata.name NotIn [...]); run its backend with at least 2 replicas spread over nodes, with a " +
			"PodDisruptionBudget; keep timeoutSeconds small (a few seconds); and use failurePolicy: Ignore for mutating " +
			"webhooks, or move the policy into a ValidatingAdmissionPolicy, which needs no backend. " +
			"Prefer rules on workload objects over pods where the policy allows it.",
		Cases: cases,
	}
	f.AddEvidence(items...)
	return f, true
}
