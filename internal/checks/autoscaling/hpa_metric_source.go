package autoscaling

import (
	_ "embed"
	"errors"
	"fmt"
	"strings"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

//go:embed data/hpa-metric-source.yaml
var hpaYAML []byte

type hpaFacts struct {
	MetricAPIs []struct {
		Types   []string `json:"types"`
		Group   string   `json:"group"`
		Sources []string `json:"sources"`
	} `json:"metricAPIs"`
	RequestRule []struct {
		What    string   `json:"what"`
		Sources []string `json:"sources"`
	} `json:"requestRule"`
	// ExternalMetricsServers are adapters for external.metrics.k8s.io;
	// the first is KEDA's (see hpa_external_metrics_owner.go).
	ExternalMetricsServers []struct {
		Name    string   `json:"name"`
		Image   string   `json:"image"`
		Fact    string   `json:"fact"`
		Sources []string `json:"sources"`
	} `json:"externalMetricsServers"`
	ScaleDownOnMissingMetric []struct {
		BrokenFrom string   `json:"brokenFrom"`
		FixedIn    string   `json:"fixedIn"`
		Sources    []string `json:"sources"`
	} `json:"scaleDownOnMissingMetric"`

	groupOf               map[autoscalingv2.MetricSourceType]string
	brokenFrom, fixedIn   check.KubeVersion
	requestSrc, brokenSrc string
	kedaImage, kedaSrc    string
}

var loadHPAFacts = check.Facts("HPA facts", hpaYAML, func(f *hpaFacts) error {
	if len(f.RequestRule) != 1 || len(f.ScaleDownOnMissingMetric) != 1 {
		return errors.New("HPA facts: want one requestRule and one scaleDownOnMissingMetric row")
	}
	if len(f.ExternalMetricsServers) != 1 || f.ExternalMetricsServers[0].Image == "" {
		return errors.New("HPA facts: want KEDA's metrics server image in externalMetricsServers")
	}
	f.kedaImage = check.ImageRepository(f.ExternalMetricsServers[0].Image)
	f.kedaSrc = strings.Join(f.ExternalMetricsServers[0].Sources, " ")
	f.groupOf = map[autoscalingv2.MetricSourceType]string{}
	for _, m := range f.MetricAPIs {
		for _, t := range m.Types {
			f.groupOf[autoscalingv2.MetricSourceType(t)] = m.Group
		}
	}
	b := f.ScaleDownOnMissingMetric[0]
	var ok1, ok2 bool
	f.brokenFrom, ok1 = check.ParseKubeVersion(b.BrokenFrom)
	f.fixedIn, ok2 = check.ParseKubeVersion(b.FixedIn)
	if !ok1 || !ok2 {
		return errors.New("HPA facts: bad versions")
	}
	f.requestSrc = strings.Join(f.RequestRule[0].Sources, " ")
	f.brokenSrc = strings.Join(b.Sources, " ")
	return nil
})

// Rules of hpa-metric-source.
const (
	ruleInactive = "scaling-inactive"
	ruleRequest  = "missing-request"
	ruleAPI      = "metrics-api-unavailable"
	ruleOld      = "scale-down-on-missing-metric"
	ruleOwner    = "external-metrics-owner"
)

const caseID = "hpa-scales-down-when-custom-metric-broken-2021"

func hpaMetricSourceCheck() check.Check {
	return check.Check{
		ID:       "hpa-metric-source",
		Title:    "HPAs that cannot get their metrics",
		Severity: finding.High,
		Description: "HorizontalPodAutoscalers (autoscaling/v2) that cannot compute, or will act on missing, metrics. High: " +
			"status condition ScalingActive False (other than ScalingDisabled, a target scaled to zero); HPAs whose metric API group " +
			"(metrics.k8s.io, custom.metrics.k8s.io, external.metrics.k8s.io) has no APIService, or only APIServices " +
			"reporting Available False. Medium: Utilization targets on cpu or memory whose target Deployment, " +
			"StatefulSet or ReplicaSet has containers with neither that request nor a limit (the documented result: " +
			"no action for that metric; a LimitRange default, which the check does not read, may fill it in). Medium: on control planes 1.16 to 1.20, HPAs with custom, external or several " +
			"metrics, which those versions scaled down when a metric could not be fetched. High, before any HPA exists: KEDA's " +
			"metrics server (image ghcr.io/kedacore/keda-metrics-apiserver) runs while the APIService of external.metrics.k8s.io " +
			"names a Service whose Deployments run another adapter, so KEDA's HPAs will get no values (only one APIService " +
			"serves the group). The check does not " +
			"query the metrics APIs themselves, and cannot tell whether an adapter serves the named metric.",
		Reads: []check.Input{{Resource: snapshot.HorizontalPodAutoscalers}, {Resource: snapshot.Deployments},
			{Resource: snapshot.StatefulSets}, check.Optional(snapshot.ReplicaSets), {Resource: snapshot.APIServices}, check.Optional(snapshot.Pods),
			check.Optional(snapshot.Services)},
		Rules: []check.Rule{
			{ID: ruleInactive, Summary: "HPAs reporting ScalingActive False",
				Needs: []snapshot.Resource{snapshot.HorizontalPodAutoscalers}},
			{ID: ruleRequest, Summary: "Utilization targets on workloads whose containers lack the request",
				Needs: []snapshot.Resource{snapshot.HorizontalPodAutoscalers, snapshot.Deployments, snapshot.StatefulSets}},
			{ID: ruleAPI, Summary: "HPAs whose metrics API has no available APIService",
				Needs: []snapshot.Resource{snapshot.HorizontalPodAutoscalers, snapshot.APIServices}},
			{ID: ruleOld, Summary: "Custom or multi-metric HPAs on 1.16 to 1.20, which scale down on a missing metric",
				Needs: []snapshot.Resource{snapshot.HorizontalPodAutoscalers}},
			{ID: ruleOwner, Summary: "KEDA's metrics server runs but external.metrics.k8s.io is served by another adapter",
				Needs: []snapshot.Resource{snapshot.Deployments, snapshot.APIServices, snapshot.Services}},
		},
		Cases: check.Prevents(caseID, caseKEDAOwner),
		Run:   runHPAMetricSource,
	}
}

// apiState is what the APIServices of one group say.
type apiState struct {
	names     []string
	available bool // some APIService of the group is Available True
	down      bool // every APIService of the group reports Available False
}

func apiStates(objs []unstructured.Unstructured) map[string]*apiState {
	out := map[string]*apiState{}
	for i := range objs {
		o := &objs[i]
		group, _, _ := unstructured.NestedString(o.Object, "spec", "group")
		st := out[group]
		if st == nil {
			st = &apiState{down: true}
			out[group] = st
		}
		st.names = append(st.names, o.GetName())
		status := ""
		conds, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
		for _, c := range conds {
			if m, ok := c.(map[string]any); ok && m["type"] == "Available" {
				status, _ = m["status"].(string)
			}
		}
		st.available = st.available || status == "True"
		st.down = st.down && status == "False"
	}
	return out
}

func runHPAMetricSource(ctx *check.Context) ([]finding.Finding, error) {
	facts, err := loadHPAFacts()
	if err != nil {
		return nil, err
	}
	s := ctx.Snapshot
	if len(s.HorizontalPodAutoscalers) == 0 && !ctx.Present(snapshot.HorizontalPodAutoscalers) {
		return nil, check.NotEvaluated("the input has no HorizontalPodAutoscalers")
	}
	// KEDA creates its HPAs only once ScaledObjects exist: the adapter
	// that owns the API is judged before there are any.
	owner := externalMetricsOwner(ctx, facts)
	// The templates of the HPAs' targets only: the keys come from the
	// HPAs, and one walk of the workloads fills them (the last of a name
	// wins, as in a map of every workload, which at 1M pods was 140,000
	// inserts into a map out of cache for a few thousand lookups).
	templates := make(map[[3]string]*corev1.PodSpec, len(s.HorizontalPodAutoscalers))
	for i := range s.HorizontalPodAutoscalers {
		h := &s.HorizontalPodAutoscalers[i]
		templates[[3]string{h.Spec.ScaleTargetRef.Kind, h.Namespace, h.Spec.ScaleTargetRef.Name}] = nil
	}
	fill := func(key [3]string, spec *corev1.PodSpec) {
		if _, wanted := templates[key]; wanted {
			templates[key] = spec
		}
	}
	for i := range s.Deployments {
		d := &s.Deployments[i]
		fill([3]string{"Deployment", d.Namespace, d.Name}, &d.Spec.Template.Spec)
	}
	for i := range s.StatefulSets {
		d := &s.StatefulSets[i]
		fill([3]string{"StatefulSet", d.Namespace, d.Name}, &d.Spec.Template.Spec)
	}
	for i := range s.ReplicaSets {
		d := &s.ReplicaSets[i]
		fill([3]string{"ReplicaSet", d.Namespace, d.Name}, &d.Spec.Template.Spec)
	}
	apis := apiStates(s.CustomObjects(snapshot.APIServices))
	apisComplete := ctx.Complete(snapshot.APIServices)
	server, serverEv, serverKnown := check.ServerVersion(s)
	if !serverKnown {
		ctx.Skip(ruleOld, "the input has no control plane version")
	}

	var out []finding.Finding
	for i := range s.HorizontalPodAutoscalers {
		h := &s.HorizontalPodAutoscalers[i]
		ref := check.Ref("autoscaling/v2", "HorizontalPodAutoscaler", h)
		var high, medium []string
		for _, c := range h.Status.Conditions {
			if c.Type == autoscalingv2.ScalingActive && c.Status == corev1.ConditionFalse && c.Reason != "ScalingDisabled" {
				high = append(high, fmt.Sprintf("condition ScalingActive False, reason %s: %s", c.Reason, c.Message))
			}
		}
		t := h.Spec.ScaleTargetRef
		spec := templates[[3]string{t.Kind, h.Namespace, t.Name}]
		if spec == nil && (t.Kind == "Deployment" || t.Kind == "StatefulSet") && !ctx.CompleteIn(resourceOf(t.Kind), h.Namespace) {
			ctx.Incomplete(ruleRequest, "HPA %s/%s: target %s %s is not in the input", h.Namespace, h.Name, t.Kind, t.Name)
		}
		groups := map[string]bool{}
		custom := false
		metrics := h.Spec.Metrics
		if len(metrics) == 0 {
			// The API default: 80% average CPU utilization.
			metrics = []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType,
				Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU,
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType}}}}
		}
		for _, m := range metrics {
			if g := facts.groupOf[m.Type]; g != "" {
				groups[g] = true
			}
			custom = custom || m.Type == autoscalingv2.PodsMetricSourceType || m.Type == autoscalingv2.ObjectMetricSourceType ||
				m.Type == autoscalingv2.ExternalMetricSourceType
			if spec != nil {
				if miss := missingRequest(spec, m); miss != "" {
					medium = append(medium, fmt.Sprintf("%s targets %s; %s, unless a LimitRange default fills it (%s)",
						describeMetric(m), t.Kind+" "+t.Name, miss, facts.requestSrc))
				}
			}
		}
		for g := range groups {
			st := apis[g]
			switch {
			case st == nil && apisComplete:
				high = append(high, fmt.Sprintf("no APIService serves %s, which its metrics need", g))
			case st == nil:
				ctx.Incomplete(ruleAPI, "no APIService for %s in the input, which does not hold every APIService", g)
			case st.down:
				high = append(high, fmt.Sprintf("APIService %s reports Available False", strings.Join(st.names, ", ")))
			}
		}
		if serverKnown && !server.Less(facts.brokenFrom) && server.Less(facts.fixedIn) && (custom || len(metrics) > 1) {
			medium = append(medium, fmt.Sprintf("%s: HPA controllers %s to before %s scaled down when one of several metrics could not be fetched (%s)",
				serverEv, facts.brokenFrom.MinorString(), facts.fixedIn.MinorString(), facts.brokenSrc))
		}
		if len(high) == 0 && len(medium) == 0 {
			continue
		}
		sev := finding.High
		if len(high) == 0 {
			sev = finding.Medium
		}
		f := finding.Finding{
			Check: "hpa-metric-source", Severity: sev,
			Title: fmt.Sprintf("HPA %s/%s cannot rely on its metrics", h.Namespace, h.Name),
			Message: "The autoscaler cannot compute some of its metrics, so it does not scale on them (or, on old control " +
				"planes, scales down while they are missing): load grows without new replicas.",
			Objects:     []finding.ObjectRef{ref},
			Evidence:    append(high, medium...),
			Remediation: "Restore the metrics pipeline (metrics-server or the metrics adapter and its APIService), set the requests the Utilization targets divide by, and run the adapter with more than one replica.",
			Cases:       []string{caseID},
		}
		fields := []finding.Field{finding.Value("spec.scaleTargetRef.kind", t.Kind), finding.Value("spec.scaleTargetRef.name", t.Name)}
		for _, c := range h.Status.Conditions {
			if c.Type == autoscalingv2.ScalingActive && c.Status == corev1.ConditionFalse && c.Reason != "ScalingDisabled" {
				fields = append(fields, finding.Value("status.conditions[type=ScalingActive].status", string(c.Status)),
					finding.Value("status.conditions[type=ScalingActive].reason", c.Reason))
			}
		}
		f.AddEvidence(finding.Quote(ref, fields...))
		out = append(out, f)
	}
	return append(out, owner...), nil
}

func resourceOf(kind string) snapshot.Resource {
	if kind == "StatefulSet" {
		return snapshot.StatefulSets
	}
	return snapshot.Deployments
}

func describeMetric(m autoscalingv2.MetricSpec) string {
	switch {
	case m.Resource != nil:
		return fmt.Sprintf("Resource %s %s", m.Resource.Name, m.Resource.Target.Type)
	case m.ContainerResource != nil:
		return fmt.Sprintf("ContainerResource %s of container %s %s", m.ContainerResource.Name, m.ContainerResource.Container, m.ContainerResource.Target.Type)
	}
	return string(m.Type)
}

// missingRequest says which containers lack the request a Utilization
// target divides by, or "".
func missingRequest(spec *corev1.PodSpec, m autoscalingv2.MetricSpec) string {
	var name corev1.ResourceName
	container := ""
	switch {
	case m.Resource != nil && m.Resource.Target.Type == autoscalingv2.UtilizationMetricType:
		name = m.Resource.Name
	case m.ContainerResource != nil && m.ContainerResource.Target.Type == autoscalingv2.UtilizationMetricType:
		name, container = m.ContainerResource.Name, m.ContainerResource.Container
	default:
		return ""
	}
	var lacking []string
	for _, c := range spec.Containers {
		if container != "" && c.Name != container {
			continue
		}
		_, req := c.Resources.Requests[name]
		// A request left unset defaults to the limit when a pod is created
		// (https://kubernetes.io/docs/concepts/configuration/manage-resources-containers/).
		_, lim := c.Resources.Limits[name]
		if !req && !lim {
			lacking = append(lacking, c.Name)
		}
	}
	if len(lacking) == 0 {
		return ""
	}
	return fmt.Sprintf("containers without a %s request: %s", name, check.ListText(lacking, 10))
}
