package objects

// The replicaset-history rule of object-count-explosion: old ReplicaSets beyond
// a Deployment's revisionHistoryLimit, or a limit so high it keeps them all.

import (
	"fmt"
	"sort"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

func replicaSetHistory(ctx *check.Context, limitFact countFact) []finding.Finding {
	s := ctx.Snapshot
	old := map[snapshot.OwnerID][]*appsv1.ReplicaSet{}
	for i := range s.ReplicaSets {
		rs := &s.ReplicaSets[i]
		if rs.Spec.Replicas == nil || *rs.Spec.Replicas != 0 {
			continue
		}
		for _, o := range rs.OwnerReferences {
			if o.Kind == "Deployment" && o.Controller != nil && *o.Controller {
				id := snapshot.RefID(rs.Namespace, o)
				old[id] = append(old[id], rs)
			}
		}
	}
	var out []finding.Finding
	for i := range s.Deployments {
		d := &s.Deployments[i]
		limit := int64(limitFact.Value)
		if d.Spec.RevisionHistoryLimit != nil {
			limit = int64(*d.Spec.RevisionHistoryLimit)
		}
		rss := old[snapshot.IDOf("Deployment", &d.ObjectMeta)]
		n := int64(len(rss))
		ref := check.Ref("apps/v1", "Deployment", d)
		// With the namespace's ReplicaSets not all read, the count is a
		// lower bound, and zero is not known to be zero.
		allRead := ctx.CompleteIn(snapshot.ReplicaSets, d.Namespace)
		switch {
		case n > limit+historySlack:
			sort.Slice(rss, func(i, j int) bool { return rss[i].CreationTimestamp.Before(&rss[j].CreationTimestamp) })
			objs := []finding.ObjectRef{ref}
			for j, rs := range rss {
				if j == check.MaxListedObjects {
					break
				}
				objs = append(objs, check.Ref("apps/v1", "ReplicaSet", rs))
			}
			sev := finding.Low
			if limit >= hugeHistoryLimit && n > int64(limitFact.Value) {
				sev = finding.Medium
			}
			msg := fmt.Sprintf("Deployment %s/%s keeps %s old ReplicaSets against a revisionHistoryLimit of %d.",
				d.Namespace, d.Name, historyCount(n, allRead), limit)
			if limit < hugeHistoryLimit {
				sev = finding.Medium
				msg += " The Deployment controller is not cleaning up: a rollout that is stuck keeps every old ReplicaSet, " +
					"and each deploy adds one."
			}
			out = append(out, historyFinding(sev, d, objs, historyEvidence(d, ref, rss, limitFact, allRead), msg))
		case limit >= hugeHistoryLimit:
			so := fmt.Sprintf("%d so far", n)
			if !allRead {
				so = fmt.Sprintf("%d in the input, which does not hold all of the namespace's ReplicaSets", n)
			}
			msg := fmt.Sprintf("Deployment %s/%s has revisionHistoryLimit %d, which keeps every old ReplicaSet (%s): "+
				"%s", d.Namespace, d.Name, limit, so, limitFact.Fact)
			ev := historyEvidence(d, ref, rss, limitFact, allRead)
			if n > int64(limitFact.Value) {
				out = append(out, historyFinding(finding.Medium, d, []finding.ObjectRef{ref}, ev, msg))
			} else {
				out = append(out, historyFinding(finding.Low, d, []finding.ObjectRef{ref}, ev, msg))
			}
		}
	}
	return out
}

// historyCount is n, or "at least n" when the ReplicaSets are not all read.
func historyCount(n int64, allRead bool) string {
	if allRead {
		return fmt.Sprint(n)
	}
	return fmt.Sprintf("at least %d", n)
}

// historyEvidence quotes the Deployment's revisionHistoryLimit (or its
// absence, and the default it then has) and the old ReplicaSets' replicas
// and controller, and counts them.
func historyEvidence(d *appsv1.Deployment, ref finding.ObjectRef, rss []*appsv1.ReplicaSet, limitFact countFact, allRead bool) finding.Finding {
	var f finding.Finding
	if d.Spec.RevisionHistoryLimit != nil {
		f.AddEvidence(finding.Quote(ref, finding.Value("spec.revisionHistoryLimit", *d.Spec.RevisionHistoryLimit)))
	} else {
		f.AddEvidence(finding.Quote(ref, finding.Absent("spec.revisionHistoryLimit")))
		f.Evidence = append(f.Evidence, fmt.Sprintf("spec.revisionHistoryLimit unset: the default is %d", limitFact.Value))
	}
	var g finding.Grouper
	for _, rs := range rss {
		g.Add(check.Ref("apps/v1", "ReplicaSet", rs), append([]finding.Field{finding.Value("spec.replicas", *rs.Spec.Replicas)},
			check.ControllerFields(rs.OwnerReferences)...)...)
	}
	f.AddEvidence(g.Items()...)
	count := fmt.Sprintf("%d ReplicaSets with spec.replicas 0 controlled by the Deployment", len(rss))
	if !allRead {
		count = fmt.Sprintf("%d ReplicaSets with spec.replicas 0 controlled by the Deployment in the input; "+
			"the input does not hold all ReplicaSets of namespace %s, so there may be more", len(rss), d.Namespace)
	}
	f.Evidence = append(f.Evidence, count)
	return f
}

func historyFinding(sev finding.Severity, d *appsv1.Deployment, objs []finding.ObjectRef, ev finding.Finding, msg string) finding.Finding {
	return finding.Finding{
		Check:    "object-count-explosion",
		Severity: sev,
		Title:    fmt.Sprintf("Deployment %s/%s accumulates old ReplicaSets", d.Namespace, d.Name),
		Message: msg + " Revision history grows by one object per deploy until etcd and every client listing the kind " +
			"pay for it; the same happened with Helm 2's release ConfigMaps.",
		Objects:       objs,
		Evidence:      ev.Evidence,
		EvidenceItems: ev.EvidenceItems,
		Remediation: "Set spec.revisionHistoryLimit to what rollbacks need (a few revisions), delete old ReplicaSets with " +
			"0 replicas, and if cleanup still does not happen, find why the rollout is stuck (kubectl rollout status).",
		Cases: []string{"replicaset-history-accumulation-2017", "sap-helm-release-configmaps-etcd-bloat-2017"},
	}
}
