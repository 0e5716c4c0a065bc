package autoscaling

import (
	"fmt"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

const (
	caseKEDAOwner = "keda-external-metrics-apiservice-owned-by-another-adapter-2023"
	externalGroup = "external.metrics.k8s.io"
)

// metricsServer is a Deployment running an external-metrics adapter.
type metricsServer struct {
	d         *appsv1.Deployment
	container corev1.Container
}

func (m metricsServer) String() string { return "Deployment " + m.d.Namespace + "/" + m.d.Name }

func (m metricsServer) quote() finding.EvidenceItem {
	return finding.Quote(check.Ref("apps/v1", "Deployment", m.d),
		finding.Value("spec.template.spec.containers[name="+m.container.Name+"].image", m.container.Image))
}

// externalMetricsOwner reports KEDA's metrics server running while the
// APIService of external.metrics.k8s.io sends the API to another
// adapter's pods: aggregation gives a group version to exactly one
// APIService, so every HPA KEDA creates for a ScaledObject would ask the
// other adapter for KEDA's metrics and get nothing (kedacore/keda#4415).
func externalMetricsOwner(ctx *check.Context, facts *hpaFacts) []finding.Finding {
	s := ctx.Snapshot
	var keda []metricsServer
	for i := range s.Deployments {
		if c, ok := runsImage(&s.Deployments[i], facts.kedaImage); ok {
			keda = append(keda, metricsServer{&s.Deployments[i], c})
		}
	}
	if len(keda) == 0 {
		return nil // no KEDA: whichever adapter serves the API is the only one
	}
	var out []finding.Finding
	for _, o := range s.CustomObjects(snapshot.APIServices) {
		if group, _, _ := unstructured.NestedString(o.Object, "spec", "group"); group != externalGroup {
			continue
		}
		ns, _, _ := unstructured.NestedString(o.Object, "spec", "service", "namespace")
		name, _, _ := unstructured.NestedString(o.Object, "spec", "service", "name")
		if name == "" {
			continue // served by the API server itself, not by an adapter
		}
		backends, known := serviceBackends(ctx, ns, name)
		if !known {
			continue
		}
		var others []metricsServer
		isKEDA := false
		for _, b := range backends {
			if _, ok := runsImage(b, facts.kedaImage); ok {
				isKEDA = true
				break
			}
			if len(b.Spec.Template.Spec.Containers) > 0 {
				others = append(others, metricsServer{b, b.Spec.Template.Spec.Containers[0]})
			}
		}
		if isKEDA {
			continue
		}
		if len(others) == 0 {
			ctx.Incomplete(ruleOwner, "APIService %s sends %s to Service %s/%s, whose pods no Deployment in the input runs: "+
				"whether KEDA's metrics server backs it is not known", o.GetName(), externalGroup, ns, name)
			continue
		}
		out = append(out, ownerFinding(o, ns, name, keda, others, facts))
	}
	return out
}

// serviceBackends is the Deployments whose pods Service ns/name selects;
// known is false (and the rule marked incomplete) when the input cannot
// tell.
func serviceBackends(ctx *check.Context, ns, name string) (backends []*appsv1.Deployment, known bool) {
	s := ctx.Snapshot
	var svc *corev1.Service
	for i := range s.Services {
		if s.Services[i].Namespace == ns && s.Services[i].Name == name {
			svc = &s.Services[i]
		}
	}
	if svc == nil {
		// A missing Service is aggregated-api-unavailable's to report.
		if !ctx.CompleteIn(snapshot.Services, ns) {
			ctx.Incomplete(ruleOwner, "Service %s/%s, which an APIService of %s names, is not in the input", ns, name, externalGroup)
		}
		return nil, false
	}
	if len(svc.Spec.Selector) == 0 {
		ctx.Incomplete(ruleOwner, "Service %s/%s has no selector: the pods behind its endpoints are not known", ns, name)
		return nil, false
	}
	sel := labels.SelectorFromSet(svc.Spec.Selector)
	for i := range s.Deployments {
		d := &s.Deployments[i]
		if d.Namespace == ns && sel.Matches(labels.Set(d.Spec.Template.Labels)) {
			backends = append(backends, d)
		}
	}
	sort.Slice(backends, func(i, j int) bool { return backends[i].Name < backends[j].Name })
	return backends, true
}

// runsImage finds the container of d running an image of repository repo.
func runsImage(d *appsv1.Deployment, repo string) (corev1.Container, bool) {
	for _, c := range d.Spec.Template.Spec.Containers {
		if check.ImageRepository(c.Image) == repo {
			return c, true
		}
	}
	return corev1.Container{}, false
}

func ownerFinding(o unstructured.Unstructured, ns, name string, keda, others []metricsServer, facts *hpaFacts) finding.Finding {
	apiRef := finding.ObjectRef{APIVersion: "apiregistration.k8s.io/v1", Kind: "APIService", Name: o.GetName()}
	kedaNames := make([]string, len(keda))
	for i, k := range keda {
		kedaNames[i] = k.String()
	}
	otherNames := make([]string, len(others))
	for i, b := range others {
		otherNames[i] = fmt.Sprintf("%s (image %s)", b, b.container.Image)
	}
	f := finding.Finding{
		Check:    "hpa-metric-source",
		Severity: finding.High,
		Title:    fmt.Sprintf("KEDA runs, but APIService %s sends external metrics to Service %s/%s", o.GetName(), ns, name),
		Message: fmt.Sprintf("KEDA's metrics server runs (%s), but APIService %s gives %s to Service %s/%s, backed by %s. "+
			"Only one APIService can serve the group, so the HPAs KEDA creates for ScaledObjects will ask that adapter for "+
			"KEDA's metrics and get no value: their condition ScalingActive turns False (FailedGetExternalMetric) and "+
			"nothing scales on the triggers. Facts: %s (%s).",
			strings.Join(kedaNames, ", "), o.GetName(), externalGroup, ns, name, strings.Join(otherNames, ", "),
			strings.TrimSpace(facts.ExternalMetricsServers[0].Fact), facts.kedaSrc),
		Objects: []finding.ObjectRef{apiRef, check.Ref("apps/v1", "Deployment", keda[0].d)},
		Evidence: []string{
			fmt.Sprintf("APIService %s: spec.group %s, spec.service %s/%s", o.GetName(), externalGroup, ns, name),
			"KEDA's metrics server: " + strings.Join(kedaNames, ", "),
			fmt.Sprintf("Service %s/%s selects %s", ns, name, strings.Join(otherNames, ", ")),
		},
		Remediation: "Choose one external-metrics adapter per cluster. To keep KEDA, point the APIService back at KEDA's " +
			"metrics server (reinstall it with KEDA's chart) and move the other adapter's metrics into KEDA triggers where KEDA has a scaler for them; " +
			"otherwise remove KEDA's ScaledObjects and scale with the other adapter.",
		Cases: []string{caseKEDAOwner},
	}
	f.AddEvidence(finding.Quote(apiRef, finding.Value("spec.group", externalGroup),
		finding.Value("spec.service.namespace", ns), finding.Value("spec.service.name", name)))
	f.AddEvidence(keda[0].quote())
	for _, b := range others {
		f.AddEvidence(b.quote())
	}
	return f
}
