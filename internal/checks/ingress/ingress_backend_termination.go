package ingress

import (
	_ "embed"
	"errors"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

//go:embed data/ingress-backend-termination.yaml
var terminationYAML []byte

type lbFact struct {
	Name    string   `json:"name"`
	What    string   `json:"what"`
	Source  string   `json:"source"`
	Sources []string `json:"sources"`
}

// cloudLBFacts is data/ingress-backend-termination.yaml.
type cloudLBFacts struct {
	Classes     []lbFact `json:"classes"`
	Controllers []lbFact `json:"controllers"`
	Classless   []lbFact `json:"classless"`
	Sources     []string `json:"sources"`
}

var loadCloudLBFacts = check.Facts("cloud load balancer facts", terminationYAML, func(f *cloudLBFacts) error {
	if len(f.Classes) == 0 || len(f.Controllers) == 0 {
		return errors.New("cloud load balancer facts: classes and controllers are required")
	}
	return nil
})

const (
	ruleNoPreStop          = "no-prestop-behind-load-balancer"
	caseRavelin            = "ravelin-gke-ingress-502-pod-termination-2019"
	defaultGracePeriodText = "30 (unset; the API default)"
)

func ingressBackendTerminationCheck() check.Check {
	return check.Check{
		ID:       "ingress-backend-termination",
		Title:    "Workloads behind cloud load balancers that stop before the load balancer lets go",
		Severity: finding.Medium,
		Description: "Deleting a pod removes its endpoint and stops its containers at the same time; a load balancer " +
			"that a cloud controller programs outside the cluster learns of the removal last and keeps sending new " +
			"requests to a pod that has already closed its listener, which clients see as 502s on every rollout, " +
			"scale-down and drain. Finds Deployments and StatefulSets whose pods a Service selects that is the " +
			"backend of an Ingress of a cloud load balancer class (GKE's gce and gce-internal, the AWS Load Balancer " +
			"Controller's alb or an IngressClass of its controller, and on GKE nodes an Ingress with no class, which " +
			"GKE's built-in controller serves): medium when none of their containers has a " +
			"preStop hook; Services of type LoadBalancer alone: low. An application that keeps serving after " +
			"SIGTERM until its grace period ends needs no hook; kubegap cannot see that, so suppress the finding " +
			"for it. Ingresses of other classes (in-cluster proxies, which follow endpoints within seconds), and " +
			"Ingresses without a class outside GKE, are not judged.",
		Reads: append(check.Needs(snapshot.Ingresses, snapshot.IngressClasses, snapshot.Services,
			snapshot.Deployments, snapshot.StatefulSets), check.Optional(snapshot.Nodes)),
		Rules: []check.Rule{
			{ID: ruleNoPreStop, Summary: "Workloads behind a cloud load balancer whose containers have no preStop hook",
				Needs: []snapshot.Resource{snapshot.Ingresses, snapshot.IngressClasses, snapshot.Services,
					snapshot.Deployments, snapshot.StatefulSets}},
		},
		Cases: []string{caseRavelin},
		Run:   runIngressBackendTermination,
	}
}

// exposure is how a Service is reached from outside: the Ingresses of a
// cloud class that route to it, or its own type LoadBalancer.
type exposure struct {
	svc       *corev1.Service
	ingresses []string // evidence lines, one per Ingress
	refs      []finding.ObjectRef
	lbService bool
}

func runIngressBackendTermination(ctx *check.Context) ([]finding.Finding, error) {
	facts, err := loadCloudLBFacts()
	if err != nil {
		return nil, err
	}
	s := ctx.Snapshot
	if len(s.Services) == 0 && !ctx.Present(snapshot.Services) {
		return nil, check.NotEvaluated("the input has no Services")
	}
	services := map[string]*corev1.Service{}
	for i := range s.Services {
		services[s.Services[i].Namespace+"/"+s.Services[i].Name] = &s.Services[i]
	}
	exposed := map[string]*exposure{}
	expose := func(key string) *exposure {
		e := exposed[key]
		if e == nil {
			e = &exposure{svc: services[key]}
			exposed[key] = e
		}
		return e
	}
	cloudClasses := cloudClassNames(s, facts)
	classlessBy := classlessController(s, facts)
	for i := range s.Ingresses {
		ing := &s.Ingresses[i]
		class := ingressClassOf(ing)
		switch {
		case class == "" && classlessBy != "":
			class = "none, served by " + classlessBy + "'s built-in controller"
		case !cloudClasses[class]:
			continue
		}
		for _, name := range backendServices(ing) {
			key := ing.Namespace + "/" + name
			e := expose(key)
			e.ingresses = append(e.ingresses, fmt.Sprintf("Ingress %s/%s (class %s, a cloud load balancer) routes to Service %s", ing.Namespace, ing.Name, class, key))
			e.refs = append(e.refs, check.Ref("networking.k8s.io/v1", "Ingress", ing))
		}
	}
	for i := range s.Services {
		if svc := &s.Services[i]; svc.Spec.Type == corev1.ServiceTypeLoadBalancer {
			expose(svc.Namespace + "/" + svc.Name).lbService = true
		}
	}
	return judgeExposures(ctx, exposed), nil
}

// cloudClassNames returns the Ingress class names that select a cloud load
// balancer: the known names, and IngressClasses of a known controller.
func cloudClassNames(s *snapshot.Snapshot, facts *cloudLBFacts) map[string]bool {
	out := map[string]bool{}
	for _, c := range facts.Classes {
		out[c.Name] = true
	}
	controllers := map[string]bool{}
	for _, c := range facts.Controllers {
		controllers[c.Name] = true
	}
	for i := range s.IngressClasses {
		if controllers[s.IngressClasses[i].Spec.Controller] {
			out[s.IngressClasses[i].Name] = true
		}
	}
	return out
}

// classlessController names the managed service whose built-in controller
// serves Ingresses without a class, when the nodes show one that does.
func classlessController(s *snapshot.Snapshot, facts *cloudLBFacts) string {
	if len(s.Nodes) == 0 {
		return ""
	}
	provider := check.ManagedProvider(&s.Nodes[0])
	for _, c := range facts.Classless {
		if c.Name == provider {
			return provider
		}
	}
	return ""
}

// ingressClassOf returns the class an Ingress asks for; the annotation
// takes precedence, as the controllers read it first.
func ingressClassOf(ing *networkingv1.Ingress) string {
	if a := ing.Annotations[classAnnotation]; a != "" {
		return a
	}
	if ing.Spec.IngressClassName != nil {
		return *ing.Spec.IngressClassName
	}
	return ""
}

// backendServices lists the Services an Ingress routes to, once each.
func backendServices(ing *networkingv1.Ingress) []string {
	seen := map[string]bool{}
	var out []string
	add := func(b *networkingv1.IngressBackend) {
		if b != nil && b.Service != nil && b.Service.Name != "" && !seen[b.Service.Name] {
			seen[b.Service.Name] = true
			out = append(out, b.Service.Name)
		}
	}
	add(ing.Spec.DefaultBackend)
	for _, r := range ing.Spec.Rules {
		if r.HTTP == nil {
			continue
		}
		for i := range r.HTTP.Paths {
			add(&r.HTTP.Paths[i].Backend)
		}
	}
	return out
}

// workload is a Deployment or StatefulSet reduced to what the check reads.
type workload struct {
	ref      finding.ObjectRef
	kind     string
	labels   labels.Set
	spec     *corev1.PodSpec
	replicas *int32
}

func workloadsByNamespace(s *snapshot.Snapshot) map[string][]workload {
	out := map[string][]workload{}
	for i := range s.Deployments {
		d := &s.Deployments[i]
		out[d.Namespace] = append(out[d.Namespace], workload{ref: check.Ref("apps/v1", "Deployment", d), kind: "Deployment",
			labels: d.Spec.Template.Labels, spec: &d.Spec.Template.Spec, replicas: d.Spec.Replicas})
	}
	for i := range s.StatefulSets {
		d := &s.StatefulSets[i]
		out[d.Namespace] = append(out[d.Namespace], workload{ref: check.Ref("apps/v1", "StatefulSet", d), kind: "StatefulSet",
			labels: d.Spec.Template.Labels, spec: &d.Spec.Template.Spec, replicas: d.Spec.Replicas})
	}
	return out
}

// judgeExposures reports, once per workload, the exposed Services' pods
// that have no preStop hook.
func judgeExposures(ctx *check.Context, exposed map[string]*exposure) []finding.Finding {
	byNS := workloadsByNamespace(ctx.Snapshot)
	keys := make([]string, 0, len(exposed))
	for k := range exposed {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	type hit struct {
		w          workload
		exposures  []*exposure
		cloud      bool
		selectedBy []string
	}
	hits := map[string]*hit{}
	var order []string
	for _, key := range keys {
		e := exposed[key]
		if e.svc == nil {
			if ns, _, _ := strings.Cut(key, "/"); !ctx.CompleteIn(snapshot.Services, ns) {
				ctx.Incomplete(ruleNoPreStop, "Service %s, an Ingress backend, is not in the input", key)
			}
			continue
		}
		if len(e.svc.Spec.Selector) == 0 {
			continue // endpoints managed by hand: no workload to judge
		}
		sel := labels.SelectorFromSet(e.svc.Spec.Selector)
		for _, w := range byNS[e.svc.Namespace] {
			if (w.replicas != nil && *w.replicas == 0) || !sel.Matches(w.labels) || hasPreStop(w.spec) {
				continue
			}
			id := w.kind + "/" + w.ref.Namespace + "/" + w.ref.Name
			h := hits[id]
			if h == nil {
				h = &hit{w: w}
				hits[id] = h
				order = append(order, id)
			}
			h.exposures = append(h.exposures, e)
			h.cloud = h.cloud || len(e.ingresses) > 0
			h.selectedBy = append(h.selectedBy, fmt.Sprintf("Service %s/%s spec.selector=%s matches %s %s/%s's pod template labels",
				e.svc.Namespace, e.svc.Name, sel.String(), w.kind, w.ref.Namespace, w.ref.Name))
		}
	}
	var out []finding.Finding
	for _, id := range order {
		h := hits[id]
		out = append(out, terminationFinding(h.w, h.exposures, h.cloud, h.selectedBy))
	}
	return out
}

func hasPreStop(spec *corev1.PodSpec) bool {
	for _, c := range spec.Containers {
		if c.Lifecycle != nil && c.Lifecycle.PreStop != nil {
			return true
		}
	}
	return false
}

func terminationFinding(w workload, exposures []*exposure, cloud bool, selectedBy []string) finding.Finding {
	refs := []finding.ObjectRef{w.ref}
	var ev []string
	var items []finding.EvidenceItem
	front := "a Service of type LoadBalancer"
	for _, e := range exposures {
		refs = append(refs, check.Ref("v1", "Service", e.svc))
		refs = append(refs, e.refs...)
		ev = append(ev, e.ingresses...)
		if e.lbService {
			items = append(items, finding.Quote(check.Ref("v1", "Service", e.svc), finding.Value("spec.type", string(e.svc.Spec.Type))))
		}
	}
	ev = append(ev, selectedBy...)
	names := make([]string, len(w.spec.Containers))
	for i, c := range w.spec.Containers {
		names[i] = c.Name
	}
	ev = append(ev, fmt.Sprintf("%s %s/%s containers [%s]: no lifecycle.preStop", w.kind, w.ref.Namespace, w.ref.Name, strings.Join(names, ", ")))
	grace := defaultGracePeriodText
	spec := check.PodSpecPath(w.ref.Kind)
	graceField := finding.Absent(spec + ".terminationGracePeriodSeconds")
	if g := w.spec.TerminationGracePeriodSeconds; g != nil {
		grace = fmt.Sprint(*g)
		graceField = finding.Value(spec+".terminationGracePeriodSeconds", *g)
	}
	ev = append(ev, fmt.Sprintf("%s %s/%s terminationGracePeriodSeconds=%s", w.kind, w.ref.Namespace, w.ref.Name, grace))
	fields := []finding.Field{graceField}
	for _, c := range w.spec.Containers {
		fields = append(fields, finding.Absent(check.ContainerField(w.ref.Kind, "", c.Name, "lifecycle.preStop")))
	}
	items = append(items, finding.Quote(w.ref, fields...))
	sev := finding.Low
	if cloud {
		sev = finding.Medium
		front = "a cloud load balancer programmed from an Ingress"
	}
	f := finding.Finding{
		Check:    "ingress-backend-termination",
		Severity: sev,
		Title:    fmt.Sprintf("%s %s/%s is behind %s but has no preStop hook", w.kind, w.ref.Namespace, w.ref.Name, front),
		Message: fmt.Sprintf("The pods of %s %s/%s receive traffic through %s, and none of their containers has a preStop hook. "+
			"When a pod is deleted (a rollout, a scale-down, a node drain), Kubernetes removes its endpoint and sends SIGTERM "+
			"at the same moment; the load balancer outside the cluster drops the pod only later. An application that stops "+
			"accepting connections on SIGTERM refuses requests the load balancer still sends it, and clients get 502s.",
			w.kind, w.ref.Namespace, w.ref.Name, front),
		Objects:  refs,
		Evidence: ev,
		Remediation: "Add a preStop hook that waits until the load balancer has dropped the pod (lifecycle.preStop.sleep, or an " +
			"exec sleep, of about the load balancer's deregistration time), and a terminationGracePeriodSeconds that covers " +
			"that wait plus the shutdown. If the application already keeps serving after SIGTERM until the grace period " +
			"ends, suppress this finding for the workload.",
		Cases: []string{caseRavelin},
	}
	f.AddEvidence(items...)
	return f
}
