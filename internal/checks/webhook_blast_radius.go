package checks

import (
	_ "embed"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/yaml"

	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

//go:embed data/admission-webhooks.yaml
var admissionWebhooksYAML []byte

// webhookFacts is data/admission-webhooks.yaml.
type webhookFacts struct {
	Defaults struct {
		FailurePolicy  admissionv1.FailurePolicyType `json:"failurePolicy"`
		TimeoutSeconds int32                         `json:"timeoutSeconds"`
	} `json:"defaults"`
	NamespaceNameLabel string   `json:"namespaceNameLabel"`
	CriticalNamespaces []string `json:"criticalNamespaces"`
	Sources            []string `json:"sources"`
}

var loadWebhookFacts = sync.OnceValues(func() (*webhookFacts, error) {
	return parseWebhookFacts(admissionWebhooksYAML)
})

func parseWebhookFacts(data []byte) (*webhookFacts, error) {
	var f webhookFacts
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return nil, fmt.Errorf("reading admission webhook facts: %w", err)
	}
	switch {
	case f.Defaults.FailurePolicy != admissionv1.Fail && f.Defaults.FailurePolicy != admissionv1.Ignore:
		return nil, fmt.Errorf("admission webhook facts: default failurePolicy %q is neither Fail nor Ignore", f.Defaults.FailurePolicy)
	case f.Defaults.TimeoutSeconds < 1 || f.Defaults.TimeoutSeconds > 30:
		return nil, fmt.Errorf("admission webhook facts: default timeoutSeconds %d is outside 1-30", f.Defaults.TimeoutSeconds)
	case f.NamespaceNameLabel == "" || len(f.CriticalNamespaces) == 0 || len(f.Sources) == 0:
		return nil, errors.New("admission webhook facts: namespaceNameLabel, criticalNamespaces and sources are required")
	}
	return &f, nil
}

// Thresholds: policy, not fact. The good-practice guide asks for small
// timeouts and more than one replica behind a webhook.
const (
	webhookLongTimeout = 5
	webhookMinReady    = 2
)

// webhookBlastRadiusCheck finds admission webhooks whose outage stops the
// cluster from creating pods, its own recovery included.
func webhookBlastRadiusCheck() Check {
	return Check{
		ID:       "webhook-blast-radius",
		Title:    "Admission webhooks that can stop all pod creation",
		Severity: finding.High,
		Description: "A webhook with failurePolicy Fail (the default) on pod CREATE, or on every resource, rejects " +
			"what it covers whenever its backend does not answer. Pods are created by controllers, so nobody sees " +
			"the error: ReplicaSets, DaemonSets (network, DNS) and the replacements for drained nodes silently stop, " +
			"and if kube-system or the webhook's own namespace is not excluded the cluster cannot heal itself. " +
			"High when such a webhook covers kube-system and its Service has fewer than 2 ready endpoints (or none " +
			"at all); medium for other single points of failure or a kube-system that is not excluded; low for " +
			"long timeouts alone. Services, EndpointSlices, Deployments and Namespaces are optional: without " +
			"them the backend's readiness is unknown and namespace exclusion is judged from the selector alone.",
		Reads: append(Needs(snapshot.ValidatingWebhookConfigurations, snapshot.MutatingWebhookConfigurations),
			Optional(snapshot.Services), Optional(snapshot.EndpointSlices), Optional(snapshot.Deployments), Optional(snapshot.Namespaces)),
		Cases: webhookCases(true),
		Run:   runWebhookBlastRadius,
	}
}

// webhookCases returns the cases a finding cites, as a fresh slice: the
// OPA webhook that stalled a GKE upgrade and the pod webhook of the Datadog
// talk, plus, for long timeouts, the DFDS deployments that timed out behind
// a slow webhook.
func webhookCases(slow bool) []string {
	cs := []string{"jetstack-gke-opa-webhook-upgrade", "daemonset-pull-always-nat-ratelimit"}
	if slow {
		cs = append(cs, "dfds-alcide-admission-webhook-timeouts-2020")
	}
	return cs
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
	facts          *webhookFacts
	s              *snapshot.Snapshot
	namespacesRead bool
	servicesRead   bool
	slicesRead     bool
	deploysRead    bool
	services       map[string]*corev1.Service
	ready          map[string]int // service ns/name → distinct ready endpoints
	backends       map[string][]*backendDeployment
}

type backendDeployment struct {
	ns, name string
	replicas int32
}

func runWebhookBlastRadius(ctx *Context) ([]finding.Finding, error) {
	facts, err := loadWebhookFacts()
	if err != nil {
		return nil, err
	}
	s := ctx.Snapshot
	read := func(r snapshot.Resource) bool { return s.Status(r).Status == snapshot.StatusRead }
	env := &webhookEnv{
		facts: facts, s: s,
		namespacesRead: read(snapshot.Namespaces), servicesRead: read(snapshot.Services),
		slicesRead: read(snapshot.EndpointSlices), deploysRead: read(snapshot.Deployments),
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
				matchConditions: w.MatchConditions, clientConfig: w.ClientConfig})
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
				matchConditions: w.MatchConditions, clientConfig: w.ClientConfig})
		}
		if f, ok := env.configFinding(snapshot.MutatingWebhookConfigurations, c.Name, hooks); ok {
			out = append(out, f)
		}
	}
	return out, nil
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

// webhookVerdict is what one webhook contributes to its configuration's finding.
type webhookVerdict struct {
	sev      finding.Severity
	critical bool // it may gate pods of kube-system
	slow     bool // its timeout is long
	reasons  []string
	evidence []string
}

func (env *webhookEnv) configFinding(res snapshot.Resource, cfgName string, hooks []webhookEntry) (finding.Finding, bool) {
	refs := newCappedRefs()
	refs.add(objRef(res, "", cfgName))
	sev := finding.Info
	var reasons, ev []string
	var flagged []string
	critical, slow := false, false
	for i := range hooks {
		v, ok := env.judge(res, cfgName, &hooks[i], refs)
		if !ok {
			continue
		}
		critical = critical || v.critical
		slow = slow || v.slow
		if v.sev > sev {
			sev = v.sev
		}
		flagged = append(flagged, hooks[i].name)
		reasons = append(reasons, fmt.Sprintf("Webhook %s: %s", hooks[i].name, strings.Join(v.reasons, "; ")))
		ev = append(ev, v.evidence...)
	}
	if len(flagged) == 0 {
		return finding.Finding{}, false
	}
	title := fmt.Sprintf("%s %s can block pod creation cluster-wide", res.Kind, cfgName)
	if sev == finding.Low {
		title = fmt.Sprintf("%s %s slows or gates pod creation", res.Kind, cfgName)
	}
	msg := strings.Join(reasons, ". ") + "."
	switch {
	case sev >= finding.Medium && critical:
		msg += " While the backend is down, controllers cannot create the pods it covers and nobody sees the rejection: " +
			"ReplicaSets, DaemonSets (network and DNS among them) and the replacements for pods on drained nodes stop."
	case sev >= finding.Medium:
		msg += " While the backend is down, controllers cannot create the pods it covers and nobody sees the rejection: " +
			"ReplicaSets, Jobs and the replacements for pods on drained nodes stop in those namespaces."
	}
	return finding.Finding{
		Check:    "webhook-blast-radius",
		Severity: sev,
		Title:    title,
		Message:  msg,
		Objects:  refs.list(),
		Evidence: ev,
		Remediation: "Give the webhook a namespaceSelector that excludes kube-system and its own namespace " +
			"(kubernetes.io/metadata.name NotIn [...]); run its backend with at least 2 replicas spread over nodes, with a " +
			"PodDisruptionBudget; keep timeoutSeconds small (a few seconds); and use failurePolicy: Ignore for mutating " +
			"webhooks, or move the policy into a ValidatingAdmissionPolicy, which needs no backend. " +
			"Prefer rules on workload objects over pods where the policy allows it.",
		Cases: webhookCases(slow),
	}, true
}

// judge decides whether one webhook is a risk, and how much.
func (env *webhookEnv) judge(res snapshot.Resource, cfgName string, w *webhookEntry, refs *cappedRefs) (webhookVerdict, bool) {
	podsCreate, allResources, ruleText := webhookScope(w.rules)
	if !podsCreate && !allResources {
		return webhookVerdict{}, false
	}
	if objectSelectorOptIn(w.objSel) {
		// Only objects carrying a label are sent: an opt-in webhook.
		return webhookVerdict{}, false
	}
	path := fmt.Sprintf("%s %s webhooks[%d] (%s)", res.Kind, cfgName, w.index, w.name)
	var v webhookVerdict

	policy, policyImplied := env.facts.Defaults.FailurePolicy, true
	if w.failurePolicy != nil {
		policy, policyImplied = *w.failurePolicy, false
	}
	timeout, timeoutImplied := env.facts.Defaults.TimeoutSeconds, true
	if w.timeout != nil {
		timeout, timeoutImplied = *w.timeout, false
	}
	fail := policy == admissionv1.Fail
	v.evidence = append(v.evidence, fmt.Sprintf("%s rules cover %s", path, ruleText))
	v.evidence = append(v.evidence, fmt.Sprintf("%s failurePolicy=%s%s", path, policy, impliedNote(policyImplied)))

	// Namespace exclusion: kube-system, then the webhook's own namespace.
	// ks is whether every critical namespace is excluded: no as soon as
	// one is not.
	ksNS := strings.Join(env.facts.CriticalNamespaces, ", ")
	ks := triYes
	for _, ns := range env.facts.CriticalNamespaces {
		switch env.excluded(w, ns) {
		case triNo:
			ks = triNo
		case triUnknown:
			if ks == triYes {
				ks = triUnknown
			}
		}
	}
	v.critical = fail && ks != triYes
	ownNS := ""
	own := triYes
	if w.clientConfig.Service != nil {
		ownNS = w.clientConfig.Service.Namespace
		own = env.excluded(w, ownNS)
	}
	v.evidence = append(v.evidence, fmt.Sprintf("%s namespaceSelector=%s: %s %s", path, selectorText(w.nsSel), ksNS, triText(ks, "excluded", "not excluded", "exclusion unknown")))
	if ownNS != "" && !slices.Contains(env.facts.CriticalNamespaces, ownNS) {
		v.evidence = append(v.evidence, fmt.Sprintf("%s own namespace %s %s", path, ownNS, triText(own, "excluded", "not excluded", "exclusion unknown")))
	}

	// The backend.
	readyMax := -1 // an upper bound on ready backends; -1 unknown
	backendText := ""
	if svc := w.clientConfig.Service; svc != nil {
		key := svc.Namespace + "/" + svc.Name
		refs.add(objRef(snapshot.Services, svc.Namespace, svc.Name))
		switch obj := env.services[key]; {
		case env.servicesRead && obj == nil:
			readyMax = 0
			backendText = fmt.Sprintf("its Service %s does not exist", key)
			v.evidence = append(v.evidence, fmt.Sprintf("%s clientConfig.service=%s: no such Service", path, key))
		default:
			if env.slicesRead {
				readyMax = env.ready[key]
				backendText = fmt.Sprintf("its Service %s has %d ready endpoint%s", key, readyMax, pluralS(readyMax))
				v.evidence = append(v.evidence, fmt.Sprintf("Service %s: %d ready endpoint%s in EndpointSlices labelled kubernetes.io/service-name=%s",
					key, readyMax, pluralS(readyMax), svc.Name))
			}
			if obj != nil && env.deploysRead {
				var total int32
				deps := env.backendDeployments(obj)
				for _, d := range deps {
					refs.add(objRef(snapshot.Deployments, d.ns, d.name))
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
					backendText += fmt.Sprintf("backed by %s running %d replica%s", deploymentNames(deps), total, pluralS(int(total)))
				}
			}
		}
	} else if w.clientConfig.URL != nil {
		v.evidence = append(v.evidence, fmt.Sprintf("%s clientConfig.url=%s: backend outside the cluster, readiness unknown", path, *w.clientConfig.URL))
	}
	spof := readyMax >= 0 && readyMax < webhookMinReady

	covers := "pod creation"
	if allResources {
		covers = "every resource"
	}
	what := fmt.Sprintf("failurePolicy %s on %s", policy, covers)
	scopeText := "in every namespace including " + ksNS
	switch ks {
	case triYes:
		scopeText = "outside " + ksNS
	case triUnknown:
		scopeText = "in namespaces that may include " + ksNS + " (its selector depends on namespace labels that were not read)"
	}
	switch {
	case fail && ks == triNo && spof:
		v.sev = finding.High
		v.reasons = append(v.reasons, fmt.Sprintf("%s %s, and %s, so one pod failure stops pod creation across the cluster, %s's own pods included", what, scopeText, backendText, ksNS))
	case fail && readyMax == 0:
		v.sev = finding.High
		v.reasons = append(v.reasons, fmt.Sprintf("%s %s, and %s, so it rejects every call now", what, scopeText, backendText))
	case fail && ks == triNo:
		v.sev = finding.Medium
		v.reasons = append(v.reasons, fmt.Sprintf("%s %s: a backend outage (a bad release, an expired certificate, a node pool upgrade) stops %s's pods too", what, scopeText, ksNS))
	case fail && spof:
		v.sev = finding.Medium
		v.reasons = append(v.reasons, fmt.Sprintf("%s %s, and %s: a single point of failure", what, scopeText, backendText))
	case fail && own == triNo:
		v.sev = finding.Low
		v.reasons = append(v.reasons, fmt.Sprintf("%s does not exclude its own namespace %s: if all its pods are lost, none can be created again until the webhook is removed", what, ownNS))
	}
	// A long timeout alone matters where the webhook gates critical pods;
	// the API default of 10 s is too common elsewhere to be worth a finding.
	if timeout > webhookLongTimeout && (v.sev > finding.Info || ks != triYes) {
		if v.sev == finding.Info {
			v.sev = finding.Low
		}
		v.reasons = append(v.reasons, fmt.Sprintf("timeoutSeconds is %d%s, so each covered request can wait that long when the backend hangs", timeout, impliedNote(timeoutImplied)))
		v.evidence = append(v.evidence, fmt.Sprintf("%s timeoutSeconds=%d%s", path, timeout, impliedNote(timeoutImplied)))
		v.slow = true
	}
	if v.sev == finding.Info {
		return webhookVerdict{}, false
	}
	if fail && v.sev > finding.Low && own == triNo && !slices.Contains(env.facts.CriticalNamespaces, ownNS) {
		v.reasons = append(v.reasons, fmt.Sprintf("its own namespace %s is not excluded either, so its pods cannot come back while it is down", ownNS))
	}
	return v, true
}

// webhookScope reports whether rules cover pod CREATE or every resource,
// and describes the covering rules.
func webhookScope(rules []admissionv1.RuleWithOperations) (podsCreate, allResources bool, text string) {
	var parts []string
	for _, r := range rules {
		groupCore := slices.Contains(r.APIGroups, "") || slices.Contains(r.APIGroups, "*")
		groupAll := slices.Contains(r.APIGroups, "*")
		create := slices.Contains(r.Operations, admissionv1.Create) || slices.Contains(r.Operations, admissionv1.OperationAll)
		namespaced := r.Scope == nil || *r.Scope == admissionv1.AllScopes || *r.Scope == admissionv1.NamespacedScope
		wild := slices.Contains(r.Resources, "*") || slices.Contains(r.Resources, "*/*")
		pods := slices.Contains(r.Resources, "pods") || wild
		hit := false
		if groupCore && create && namespaced && pods {
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
	// matchConditions are CEL; when one names the namespace, it may skip it.
	for _, mc := range w.matchConditions {
		if strings.Contains(mc.Expression, `"`+ns+`"`) || strings.Contains(mc.Expression, `'`+ns+`'`) {
			return triUnknown
		}
	}
	if w.nsSel == nil {
		return triNo
	}
	sel, err := metav1.LabelSelectorAsSelector(w.nsSel)
	if err != nil {
		return triUnknown
	}
	if sel.Empty() {
		return triNo
	}
	nameLabel := env.facts.NamespaceNameLabel
	lbls := labels.Set{nameLabel: ns}
	if env.namespacesRead {
		if obj := env.s.Index().Namespace(ns); obj != nil {
			lbls = labels.Set{}
			for k, v := range obj.Labels {
				lbls[k] = v
			}
			lbls[nameLabel] = ns
		}
	}
	if !sel.Matches(lbls) {
		return triYes
	}
	if !env.namespacesRead {
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
				deps = append(deps, &backendDeployment{ns: d.Namespace, name: d.Name, replicas: replicasOf(d.Spec.Replicas)})
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

func impliedNote(implied bool) string {
	if implied {
		return " (unset; the API default)"
	}
	return ""
}

func triText(t tri, yes, no, unknown string) string {
	switch t {
	case triYes:
		return yes
	case triNo:
		return no
	default:
		return unknown
	}
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

func listText(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		if s == "" {
			s = `""`
		}
		q[i] = s
	}
	return "[" + strings.Join(q, ",") + "]"
}

func opsText(ops []admissionv1.OperationType) string {
	ss := make([]string, len(ops))
	for i, o := range ops {
		ss[i] = string(o)
	}
	return listText(ss)
}
