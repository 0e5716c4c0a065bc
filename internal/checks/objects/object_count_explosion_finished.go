package objects

// The terminated-pods and finished-jobs rules of object-count-explosion: what
// finished work leaves behind (terminated pods against the PodGC threshold,
// finished Jobs nothing deletes), in groups largest first.

import (
	"fmt"
	"slices"
	"sort"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// largestGroups is the n items naming the most objects, largest first
// (ties in the order added), and how many items are left out.
func largestGroups(items []finding.EvidenceItem, n int) ([]finding.EvidenceItem, int) {
	items = slices.Clone(items)
	slices.SortStableFunc(items, func(a, b finding.EvidenceItem) int { return b.Count() - a.Count() })
	if len(items) <= n {
		return items, 0
	}
	return items[:n], len(items) - n
}

func terminatedPods(s *snapshot.Snapshot, gc countFact) (finding.Finding, bool) {
	// Pods grouped by phase and reason, and by controller: the counts
	// are derived, the fields they count are quoted.
	var byReason, byOwner finding.Grouper
	var refs []finding.ObjectRef
	n := 0
	for i := range s.Pods {
		p := &s.Pods[i]
		if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			continue
		}
		n++
		ref := finding.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: p.Namespace, Name: p.Name}
		byReason.Add(ref, finding.Value("status.phase", string(p.Status.Phase)), finding.Value("status.reason", p.Status.Reason))
		byOwner.Add(ref, check.ControllerFields(p.OwnerReferences)...)
		if len(refs) < check.MaxListedObjects {
			refs = append(refs, ref)
		}
	}
	if n < terminatedPodsWarn {
		return finding.Finding{}, false
	}
	sev, msg := finding.Medium, fmt.Sprintf("%d terminated pods are kept, %d%% of the pod garbage collector's default "+
		"threshold (%d): below it nothing deletes them, and every LIST or watch of pods carries them.", n, n*100/gc.Value, gc.Value)
	if n >= gc.Value {
		sev = finding.High
		msg = fmt.Sprintf("%d terminated pods are kept, at or above the pod garbage collector's default threshold "+
			"(%d): the threshold was raised or collection does not keep up. A cluster in 2015 lost etcd and the API "+
			"server to memory at 100,000 terminated pods, and 13,000 were already too many for a small master.", n, gc.Value)
	}
	f := finding.Finding{
		Check:    "object-count-explosion",
		Severity: sev,
		Title:    fmt.Sprintf("%d terminated pods are kept in the cluster", n),
		Message:  msg + fmt.Sprintf(" (The first %d pods are listed.)", len(refs)),
		Objects:  refs,
		Evidence: []string{fmt.Sprintf("%d pods in phase Succeeded or Failed; PodGC deletes terminated pods only above %d by default", n, gc.Value)},
		Remediation: "Delete terminated pods (kubectl delete pods -A --field-selector=status.phase==Failed, and Succeeded) " +
			"and stop their source: set ttlSecondsAfterFinished on Jobs, fix crash-looping Jobs, and on self-managed " +
			"control planes lower kube-controller-manager's --terminated-pod-gc-threshold to what the masters can hold.",
		Cases: []string{"unbounded-terminated-pods-apiserver-oom-2015"},
	}
	for _, g := range []*finding.Grouper{&byReason, &byOwner} {
		top, left := largestGroups(g.Items(), 5)
		f.AddEvidence(top...)
		if left > 0 {
			f.Evidence = append(f.Evidence, fmt.Sprintf("and %s", check.Plural(left, "smaller group", "smaller groups")))
		}
	}
	return f, true
}

// finishedJobs counts Jobs that finished and that nothing will delete: no
// ttlSecondsAfterFinished and no CronJob owner.
func finishedJobs(s *snapshot.Snapshot, ttl countFact) (finding.Finding, bool) {
	byNS := map[string]int{}
	var refs []finding.ObjectRef
	var finished finding.Grouper
	n := 0
	for i := range s.Jobs {
		j := &s.Jobs[i]
		if j.Spec.TTLSecondsAfterFinished != nil || !check.JobFinished(j) {
			continue
		}
		cron := false
		for _, o := range j.OwnerReferences {
			cron = cron || o.Kind == "CronJob"
		}
		if cron {
			continue
		}
		n++
		byNS[j.Namespace]++
		ref := check.Ref("batch/v1", "Job", j)
		finished.Add(ref, finding.Absent("spec.ttlSecondsAfterFinished"), finishedField(j))
		if len(refs) < check.MaxListedObjects {
			refs = append(refs, ref)
		}
	}
	if n < finishedJobsWarn {
		return finding.Finding{}, false
	}
	type nsCount struct {
		ns string
		n  int
	}
	var top []nsCount
	for ns, c := range byNS {
		top = append(top, nsCount{ns, c})
	}
	sort.Slice(top, func(i, j int) bool { return top[i].n > top[j].n || top[i].n == top[j].n && top[i].ns < top[j].ns })
	f := finding.Finding{
		Check:    "object-count-explosion",
		Severity: finding.Medium,
		Title:    fmt.Sprintf("%d finished Jobs are kept with nothing to delete them", n),
		Message: fmt.Sprintf("%d Jobs have finished and have no ttlSecondsAfterFinished, so neither they nor their pods "+
			"are deleted; their terminated pods count toward the PodGC threshold. (The first %d are listed.)", n, len(refs)),
		Objects:     refs,
		Evidence:    []string{fmt.Sprintf("%d finished Jobs with no spec.ttlSecondsAfterFinished and no CronJob owner", n), ttl.Fact},
		Remediation: "Set spec.ttlSecondsAfterFinished on the Jobs (or in whatever creates them), and delete the finished ones.",
		Cases:       []string{"unbounded-terminated-pods-apiserver-oom-2015"},
	}
	items, left := largestGroups(finished.Items(), 5)
	f.AddEvidence(items...)
	if left > 0 {
		f.Evidence = append(f.Evidence, fmt.Sprintf("and %s", check.Plural(left, "smaller group", "smaller groups")))
	}
	for i, t := range top {
		if i == 5 {
			break
		}
		f.Evidence = append(f.Evidence, fmt.Sprintf("namespace %s: %d such Jobs", t.ns, t.n))
	}
	return f, true
}

// finishedField is what makes the Job finished for check.JobFinished: a
// Complete or Failed condition that is True, else its completion time.
func finishedField(j *batchv1.Job) finding.Field {
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return finding.Value("status.conditions[type="+string(c.Type)+"].status", string(c.Status))
		}
	}
	return finding.Value("status.completionTime", j.Status.CompletionTime.UTC().Format(time.RFC3339))
}
