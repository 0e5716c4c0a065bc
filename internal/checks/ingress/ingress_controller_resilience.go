package ingress

import (
	_ "embed"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

//go:embed data/ingress-controller-resilience.yaml
var resilienceYAML []byte

type sharedController struct {
	Name    string   `json:"name"`
	Images  []string `json:"images"`
	Sources []string `json:"sources"`
}

// resilienceFacts is data/ingress-controller-resilience.yaml.
type resilienceFacts struct {
	Controllers []sharedController `json:"controllers"`
	Thresholds  struct {
		SharedIngresses int `json:"sharedIngresses"`
	} `json:"thresholds"`
	Sources []string `json:"sources"`
}

var loadResilienceFacts = check.Facts("ingress controller facts", resilienceYAML, func(f *resilienceFacts) error {
	if len(f.Controllers) == 0 || f.Thresholds.SharedIngresses < 1 {
		return errors.New("ingress controller facts: controllers and thresholds.sharedIngresses are required")
	}
	return nil
})

// controllerOf returns the controller an image runs, if it is a known one.
func (f *resilienceFacts) controllerOf(image string) (string, bool) {
	repo, _, _ := check.ImageParts(image)
	for _, c := range f.Controllers {
		for _, im := range c.Images {
			if repo == im || strings.HasSuffix(repo, "/"+im) {
				return c.Name, true
			}
		}
	}
	return "", false
}

// Rules of ingress-controller-resilience.
const (
	ruleOOMKilled     = "oom-killed"
	ruleNoMemRequest  = "no-memory-request"
	ruleSingleReplica = "single-replica"
	caseZalando       = "zalando-skipper-ingress-oom-2019"
)

func ingressControllerResilienceCheck() check.Check {
	return check.Check{
		ID:       "ingress-controller-resilience",
		Title:    "Shared ingress controllers that one memory spike or one pod loss takes down",
		Severity: finding.High,
		Description: "An ingress controller (ingress-nginx, Skipper, Traefik, F5 NGINX, found by image) proxies every " +
			"Ingress of its class, so its outage is every application's outage. Its memory grows with the requests " +
			"it holds open: when one backend slows down, all replicas reach their memory limit together and are " +
			"OOM-killed. High: a controller pod whose container was last terminated (or is terminated) with reason " +
			"OOMKilled. Medium: a controller container with no memory request (the kubelet evicts it among the " +
			"first under node memory pressure); a Deployment running 1 replica, with no HorizontalPodAutoscaler " +
			"keeping 2 or more, while the cluster has 2 or more Ingresses. Controllers run by a cloud provider " +
			"outside the cluster are not seen.",
		Reads: append(check.Needs(snapshot.Deployments, snapshot.DaemonSets, snapshot.Pods, snapshot.Ingresses),
			check.Optional(snapshot.HorizontalPodAutoscalers)),
		Rules: []check.Rule{
			{ID: ruleOOMKilled, Summary: "Ingress controller pods OOM-killed",
				Needs: []snapshot.Resource{snapshot.Deployments, snapshot.DaemonSets, snapshot.Pods}},
			{ID: ruleNoMemRequest, Summary: "Ingress controller containers without a memory request",
				Needs: []snapshot.Resource{snapshot.Deployments, snapshot.DaemonSets}},
			{ID: ruleSingleReplica, Summary: "Ingress controller Deployments with one replica in a cluster of 2 or more Ingresses",
				Needs: []snapshot.Resource{snapshot.Deployments, snapshot.Ingresses, snapshot.HorizontalPodAutoscalers}},
		},
		Cases: check.Prevents(caseZalando),
		Run:   runIngressControllerResilience,
	}
}

// controllerWorkload is one Deployment or DaemonSet running a known
// ingress controller.
type controllerWorkload struct {
	ref        finding.ObjectRef
	kind       string
	controller string
	selector   *metav1.LabelSelector
	spec       *corev1.PodSpec
	replicas   *int32 // nil for a DaemonSet
}

func findSharedControllers(s *snapshot.Snapshot, f *resilienceFacts) []controllerWorkload {
	var out []controllerWorkload
	add := func(w controllerWorkload) {
		for _, c := range w.spec.Containers {
			if name, ok := f.controllerOf(c.Image); ok {
				w.controller = name
				out = append(out, w)
				return
			}
		}
	}
	for i := range s.Deployments {
		d := &s.Deployments[i]
		if d.Spec.Replicas != nil && *d.Spec.Replicas == 0 {
			continue
		}
		add(controllerWorkload{ref: check.Ref("apps/v1", "Deployment", d), kind: "Deployment",
			selector: d.Spec.Selector, spec: &d.Spec.Template.Spec, replicas: d.Spec.Replicas})
	}
	for i := range s.DaemonSets {
		d := &s.DaemonSets[i]
		add(controllerWorkload{ref: check.Ref("apps/v1", "DaemonSet", d), kind: "DaemonSet",
			selector: d.Spec.Selector, spec: &d.Spec.Template.Spec})
	}
	return out
}

func runIngressControllerResilience(ctx *check.Context) ([]finding.Finding, error) {
	facts, err := loadResilienceFacts()
	if err != nil {
		return nil, err
	}
	s := ctx.Snapshot
	if len(s.Deployments) == 0 && len(s.DaemonSets) == 0 && !ctx.Present(snapshot.Deployments) && !ctx.Present(snapshot.DaemonSets) {
		return nil, check.NotEvaluated("the input has no Deployments or DaemonSets")
	}
	var out []finding.Finding
	for _, w := range findSharedControllers(s, facts) {
		j := resilienceJudgement{sev: finding.Info}
		j.oomKilled(s, w)
		j.memoryRequests(w)
		j.singleReplica(ctx, w, facts.Thresholds.SharedIngresses)
		if j.sev > finding.Info {
			out = append(out, j.finding(w))
		}
	}
	return out, nil
}

// resilienceJudgement collects what one controller workload shows.
type resilienceJudgement struct {
	sev      finding.Severity
	reasons  []string
	items    []finding.EvidenceItem // quotes of the objects' fields
	evidence []string               // what the items do not say: counts
	objects  []finding.ObjectRef
}

func (j *resilienceJudgement) raise(sev finding.Severity, reason string) {
	if sev > j.sev {
		j.sev = sev
	}
	j.reasons = append(j.reasons, reason)
}

// oomKilled looks at the controller's pods for containers the kernel
// killed at their memory limit.
func (j *resilienceJudgement) oomKilled(s *snapshot.Snapshot, w controllerWorkload) {
	sel, err := metav1.LabelSelectorAsSelector(w.selector)
	if err != nil || sel.Empty() {
		return
	}
	var killed []string
	var pods finding.Grouper // the killed containers, pods with the same values together
	for _, p := range s.Index().PodsMatching(w.ref.Namespace, sel) {
		for _, cs := range p.Status.ContainerStatuses {
			if reason := oomReason(cs); reason != "" {
				killed = append(killed, p.Name)
				ref := finding.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: p.Namespace, Name: p.Name}
				if len(j.objects) < check.MaxListedObjects {
					j.objects = append(j.objects, ref)
				}
				status := "status.containerStatuses[name=" + cs.Name + "]."
				fields := []finding.Field{finding.Value(status+reason, "OOMKilled")}
				// A restart count of 0 is what a status without the field
				// reads as too: quoted only when the pod counts restarts.
				if cs.RestartCount > 0 {
					fields = append(fields, finding.Value(status+"restartCount", cs.RestartCount))
				}
				pods.Add(ref, fields...)
				break
			}
		}
	}
	j.items = append(j.items, pods.Items()...)
	if len(killed) > 0 {
		j.raise(finding.High, fmt.Sprintf("%d of its pods (%s) were OOM-killed: the proxy reached its memory limit, "+
			"and a slow backend that holds more requests open can push every replica there at once",
			len(killed), check.ListText(killed, 5)))
	}
}

func oomReason(cs snapshot.ContainerStatus) string {
	switch {
	case cs.State.Terminated != nil && cs.State.Terminated.Reason == "OOMKilled":
		return "state.terminated.reason"
	case cs.LastTerminationState.Terminated != nil && cs.LastTerminationState.Terminated.Reason == "OOMKilled":
		return "lastState.terminated.reason"
	}
	return ""
}

// memoryRequests flags controller containers that request no memory.
func (j *resilienceJudgement) memoryRequests(w controllerWorkload) {
	var none []string
	var fields []finding.Field
	for _, c := range w.spec.Containers {
		if _, ok := c.Resources.Requests[corev1.ResourceMemory]; ok {
			continue
		}
		if _, ok := c.Resources.Limits[corev1.ResourceMemory]; ok {
			continue // a limit alone makes the request equal to it
		}
		none = append(none, c.Name)
		fields = append(fields, finding.Absent(check.ContainerField(w.kind, "", c.Name, "resources.requests.memory")),
			finding.Absent(check.ContainerField(w.kind, "", c.Name, "resources.limits.memory")))
	}
	if len(none) > 0 {
		j.items = append(j.items, finding.Quote(w.ref, fields...))
		j.raise(finding.Medium, fmt.Sprintf("container %s requests no memory, so the kubelet evicts it among the first when its node runs short of memory",
			strings.Join(none, ", ")))
	}
}

// singleReplica flags a one-replica Deployment in a cluster whose
// Ingresses make it shared.
func (j *resilienceJudgement) singleReplica(ctx *check.Context, w controllerWorkload, shared int) {
	// A Deployment without spec.replicas runs one.
	if w.kind != "Deployment" || (w.replicas != nil && *w.replicas != 1) {
		return
	}
	n := len(ctx.Snapshot.Ingresses)
	if n < shared {
		return
	}
	s := ctx.Snapshot
	for i := range s.HorizontalPodAutoscalers {
		h := &s.HorizontalPodAutoscalers[i]
		if h.Namespace == w.ref.Namespace && h.Spec.ScaleTargetRef.Kind == "Deployment" && h.Spec.ScaleTargetRef.Name == w.ref.Name {
			if h.Spec.MinReplicas != nil && *h.Spec.MinReplicas >= 2 {
				return
			}
			minimum := finding.Absent("spec.minReplicas") // unset: 1
			if h.Spec.MinReplicas != nil {
				minimum = finding.Value("spec.minReplicas", *h.Spec.MinReplicas)
			}
			j.items = append(j.items, finding.Quote(check.Ref("autoscaling/v2", "HorizontalPodAutoscaler", h), minimum))
		}
	}
	// Without spec.replicas a Deployment runs one: the evidence says the
	// field is absent rather than quoting a 1 the object does not hold.
	replicas := finding.Absent("spec.replicas")
	if w.replicas != nil {
		replicas = finding.Value("spec.replicas", *w.replicas)
	}
	j.items = append(j.items, finding.Quote(w.ref, replicas))
	j.evidence = append(j.evidence, fmt.Sprintf("the input holds %d Ingresses", n))
	j.raise(finding.Medium, fmt.Sprintf("it runs one replica while the cluster has %d Ingresses: one pod's OOM kill, eviction or node loss stops all of their traffic", n))
}

func (j *resilienceJudgement) finding(w controllerWorkload) finding.Finding {
	f := finding.Finding{
		Check:    "ingress-controller-resilience",
		Severity: j.sev,
		Title:    fmt.Sprintf("Shared ingress controller %s %s/%s (%s) can fail for every Ingress at once", w.kind, w.ref.Namespace, w.ref.Name, w.controller),
		Message: fmt.Sprintf("%s %s/%s runs %s, which proxies the traffic of every Ingress of its class: %s.",
			w.kind, w.ref.Namespace, w.ref.Name, w.controller, strings.Join(j.reasons, "; ")),
		Objects: append([]finding.ObjectRef{w.ref}, j.objects...),
		Remediation: "Run at least 2 replicas (or an autoscaler whose minimum is 2) spread over nodes; give the controller a " +
			"memory request sized for peak in-flight requests, and a limit with headroom above it; bound in-flight " +
			"requests in the proxy (Skipper's scheduler, connection and rate limits elsewhere) so that one slow backend " +
			"cannot exhaust it; alert on OOMKilled restarts of ingress pods.",
		Cases: []string{caseZalando},
	}
	f.AddEvidence(j.items...)
	f.Evidence = append(f.Evidence, j.evidence...)
	return f
}
