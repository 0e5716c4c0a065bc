package autoscaling

import (
	"fmt"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

const (
	replicasAppliedID   = "hpa-replicas-applied"
	ruleReplicasApplied = "autoscaled-replicas-in-applied-config"
	caseReplicasApplied = "gitops-selfheal-fights-hpa-keda-replicas-2020-2026"
)

// hpaReplicasAppliedCheck finds workloads an HPA scales whose applied
// configuration also declares spec.replicas: every sync or re-apply of
// that configuration sets the count back, and the HPA scales again.
func hpaReplicasAppliedCheck() check.Check {
	return check.Check{
		ID:       replicasAppliedID,
		Title:    "Autoscaled workloads whose applied manifests also set spec.replicas",
		Severity: finding.Medium,
		Description: "Reads HorizontalPodAutoscalers (KEDA's ScaledObjects create one each) and the Deployments and " +
			"StatefulSets they scale. A target whose kubectl.kubernetes.io/last-applied-configuration holds " +
			"spec.replicas, or whose spec.replicas a server-side apply owns (managedFields), is medium: the manifests " +
			"applied to it declare a count, so each automated sync or self-heal of a GitOps tool, or any re-apply, sets " +
			"it back over the autoscaler's choice, and the workload flaps between the two counts, losing pods it " +
			"scaled out for. A workload created or updated without apply, and HPAs of other kinds, are not judged.",
		Reads: check.Needs(snapshot.HorizontalPodAutoscalers, snapshot.Deployments, snapshot.StatefulSets),
		Rules: []check.Rule{
			{ID: ruleReplicasApplied, Summary: "no autoscaled workload has spec.replicas in the configuration applied to it",
				Needs: []snapshot.Resource{snapshot.HorizontalPodAutoscalers, snapshot.Deployments, snapshot.StatefulSets}},
		},
		Cases: check.Prevents(caseReplicasApplied),
		Run:   runHPAReplicasApplied,
	}
}

func runHPAReplicasApplied(ctx *check.Context) ([]finding.Finding, error) {
	s := ctx.Snapshot
	type target struct {
		ref      finding.ObjectRef
		applied  string
		replicas *int32
	}
	targets := map[string]target{}
	for i := range s.Deployments {
		d := &s.Deployments[i]
		if a := d.Annotations[snapshot.AnnotationAppliedReplicas]; a != "" {
			targets["Deployment/"+d.Namespace+"/"+d.Name] = target{check.Ref("apps/v1", "Deployment", d), a, d.Spec.Replicas}
		}
	}
	for i := range s.StatefulSets {
		st := &s.StatefulSets[i]
		if a := st.Annotations[snapshot.AnnotationAppliedReplicas]; a != "" {
			targets["StatefulSet/"+st.Namespace+"/"+st.Name] = target{check.Ref("apps/v1", "StatefulSet", st), a, st.Spec.Replicas}
		}
	}
	var out []finding.Finding
	for i := range s.HorizontalPodAutoscalers {
		h := &s.HorizontalPodAutoscalers[i]
		ref := h.Spec.ScaleTargetRef
		t, ok := targets[ref.Kind+"/"+h.Namespace+"/"+ref.Name]
		if !ok {
			continue
		}
		href := check.Ref("autoscaling/v2", "HorizontalPodAutoscaler", h)
		f := finding.Finding{Check: replicasAppliedID, Rule: ruleReplicasApplied, Severity: finding.Medium,
			Cases: []string{caseReplicasApplied}, Objects: []finding.ObjectRef{href, t.ref}}
		minR := int32(1)
		if h.Spec.MinReplicas != nil {
			minR = *h.Spec.MinReplicas
		}
		hfields := []finding.Field{finding.Value("spec.scaleTargetRef.name", ref.Name), finding.Value("spec.maxReplicas", h.Spec.MaxReplicas)}
		if h.Spec.MinReplicas != nil {
			hfields = append(hfields, finding.Value("spec.minReplicas", *h.Spec.MinReplicas))
		}
		f.AddEvidence(finding.Quote(href, hfields...))
		if t.replicas != nil {
			f.AddEvidence(finding.Quote(t.ref, finding.Value("spec.replicas", *t.replicas)))
		}
		f.Evidence = append(f.Evidence, fmt.Sprintf("%s %s/%s: %s (read from its metadata as kubegap loaded it)",
			t.ref.Kind, t.ref.Namespace, t.ref.Name, t.applied))
		f.Title = fmt.Sprintf("HPA %s/%s scales %s %s, whose applied manifest also sets spec.replicas", h.Namespace, h.Name, ref.Kind, ref.Name)
		f.Message = fmt.Sprintf("HorizontalPodAutoscaler %s/%s scales %s %s between %d and %d replicas, but the configuration "+
			"applied to the %s declares spec.replicas (%s). Each automated sync or self-heal of a GitOps tool, or any "+
			"re-apply, writes that count back; the HPA then scales again, so pods it added are terminated and "+
			"the workload flaps between the two counts.", h.Namespace, h.Name, ref.Kind, ref.Name, minR,
			h.Spec.MaxReplicas, ref.Kind, t.applied)
		f.Remediation = "Leave spec.replicas out of the manifests of autoscaled workloads (charts: omit it when " +
			"autoscaling is enabled), or have the GitOps tool ignore it (Argo CD: ignoreDifferences on /spec/replicas " +
			"with the RespectIgnoreDifferences=true sync option, so that syncs skip it too)."
		out = append(out, f)
	}
	if len(out) == 0 {
		for _, r := range []snapshot.Resource{snapshot.HorizontalPodAutoscalers, snapshot.Deployments, snapshot.StatefulSets} {
			if !ctx.Complete(r) {
				ctx.Incomplete(ruleReplicasApplied, "%ss were not read whole", r.Kind)
				break
			}
		}
	}
	return out, nil
}
