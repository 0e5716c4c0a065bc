package objects

import (
	_ "embed"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

//go:embed data/object-count-explosion.yaml
var countFactsYAML []byte

type countFact struct {
	Name    string   `json:"name"`
	Value   int      `json:"value"`
	Fact    string   `json:"fact"`
	Sources []string `json:"sources"`
}

// countFacts is data/object-count-explosion.yaml.
type countFacts struct {
	Defaults []countFact `json:"defaults"`

	// byName maps a default's name to it.
	byName map[string]countFact
}

var loadCountFacts = check.Facts("object count facts", countFactsYAML, func(f *countFacts) error {
	f.byName = map[string]countFact{}
	for _, d := range f.Defaults {
		f.byName[d.Name] = d
	}
	for _, need := range []string{"terminated-pod-gc-threshold", "deployment-revision-history-limit", "job-ttl-after-finished", "event-ttl"} {
		if _, ok := f.byName[need]; !ok {
			return errors.New("object count facts: missing " + need)
		}
	}
	return nil
})

// Policy, not fact: where the check starts to speak. The cases lost their
// control planes at 13,000 failed pods on a small master, at thousands to
// millions of Dex AuthRequests, and at a full etcd from Events; these
// thresholds sit well below those and well above what a healthy cluster of
// a few thousand nodes holds.
const (
	// terminatedPodsWarn: 40% of PodGC's default threshold.
	terminatedPodsWarn = 5000
	dexWarn            = 1000
	// ruleDexStorage: Dex keeps its AuthRequests in the cluster at all.
	ruleDexStorage = "dex-in-cluster-storage"
	dexHigh        = 10000
	eventsWarn     = 100000
	eventsHigh     = 1000000
	// Cilium allocates cluster-wide identities from 256 to 65535 (65,280
	// of them): warn at half the 16-bit space, high at 80 percent of the
	// range, below the counts the cited clusters failed at (over 60,000 and
	// about 65,000). Cilium 1.15 halves the range on clusters created with
	// max-connected-clusters=511; cilium-config is not read, so such a
	// cluster is judged against the full range.
	ciliumIdentitiesWarn = 32768
	ciliumIdentitiesHigh = 52224
	// Kyverno's intermediary reports: its design notes
	// (docs/dev/reports/README.md) expect about one aggregated admission
	// report per matched resource, the short-lived ones deleted once
	// aggregated; its own cleanup CronJobs delete reports above 10,000 by
	// default (kyverno/kyverno pull request 10325 for EphemeralReports),
	// so medium starts where Kyverno itself calls the count a pile-up.
	// High is ten times that, still well below the 811,742 and 1.6
	// million at which the cited clusters failed.
	policyReportsWarn = 10000
	policyReportsHigh = 100000
	// finishedJobsWarn: finished Jobs without a TTL and without a CronJob
	// keeping their history bounded.
	finishedJobsWarn = 1000
	// historySlack: old ReplicaSets beyond revisionHistoryLimit that a
	// rollout in progress may briefly keep.
	historySlack = 2
	// hugeHistoryLimit: a revisionHistoryLimit this high keeps everything
	// (2147483647 is the extensions/v1beta1 default).
	hugeHistoryLimit = 1000
)

func objectCountExplosionCheck() check.Check {
	return check.Check{
		ID:       "object-count-explosion",
		Title:    "Objects piling up until etcd and the API server fall over",
		Severity: finding.High,
		Description: "Counts the objects that accumulate when nothing deletes them: terminated pods against the pod " +
			"garbage collector's default threshold (12,500; warn from 5,000), old ReplicaSets beyond a Deployment's " +
			"revisionHistoryLimit (cleanup stuck) or a limit so high it keeps everything (extensions/v1beta1 left " +
			"2147483647), finished Jobs without ttlSecondsAfterFinished or a CronJob owner, all Events, Dex " +
			"AuthRequests (Dex with Kubernetes storage keeps one per login attempt; low below 1,000 as soon as the API serves " +
			"them, since their count then follows login traffic and kubegap does not read the ResourceQuota that could cap " +
			"it, medium from 1,000, high from 10,000), and Cilium's CiliumIdentities against their cluster-wide range of " +
			"256 to 65535 (medium from 32,768, high from 52,224; a ClusterMesh cluster created with " +
			"max-connected-clusters=511 has half that range, which kubegap cannot see since it does not read " +
			"cilium-config). Events, AuthRequests and CiliumIdentities are only " +
			"counted, never read: one LIST with limit=1 and the server's remainingItemCount. So are Kyverno's intermediary " +
			"reports (AdmissionReports of kyverno.io/v1alpha2, EphemeralReports of reports.kyverno.io/v1), which Kyverno " +
			"writes at admission and in background scans for its reports controller to consume: medium from 10,000, high " +
			"from 100,000. Thresholds beyond the " +
			"PodGC default are policy, set below the counts at which the cited clusters failed. It cannot count Helm " +
			"release history: Helm 3 keeps it in Secrets, which kubegap never reads or lists, and Helm 2 in " +
			"ConfigMaps, which it reads only by name; nor does it see etcd's size.",
		Reads: []check.Input{
			check.Optional(snapshot.Pods),
			check.Optional(snapshot.Deployments),
			check.Optional(snapshot.ReplicaSets),
			check.Optional(snapshot.Jobs),
			check.Optional(snapshot.EventCounts),
			check.Optional(snapshot.DexAuthRequests),
			check.Optional(snapshot.CiliumIdentities),
			check.Optional(snapshot.KyvernoAdmissionReports),
			check.Optional(snapshot.KyvernoEphemeralReports),
		},
		Rules: []check.Rule{
			{ID: "terminated-pods", Summary: "terminated pods approach or pass the PodGC threshold",
				Needs: []snapshot.Resource{snapshot.Pods}},
			{ID: "replicaset-history", Summary: "old ReplicaSets beyond revisionHistoryLimit, or a limit that keeps everything",
				Needs: []snapshot.Resource{snapshot.Deployments, snapshot.ReplicaSets}},
			{ID: "finished-jobs", Summary: "finished Jobs without ttlSecondsAfterFinished pile up",
				Needs: []snapshot.Resource{snapshot.Jobs}},
			{ID: "events", Summary: "the Event count is in the hundreds of thousands",
				Needs: []snapshot.Resource{snapshot.EventCounts}},
			{ID: "dex-authrequests", Summary: "Dex AuthRequests pile up in the cluster",
				Needs: []snapshot.Resource{snapshot.DexAuthRequests}},
			{ID: ruleDexStorage, Summary: "Dex does not keep its AuthRequests in the cluster's API",
				Needs: []snapshot.Resource{snapshot.DexAuthRequests}},
			{ID: "cilium-identities", Summary: "Cilium's security identities fill their cluster-wide range",
				Needs: []snapshot.Resource{snapshot.CiliumIdentities}},
			{ID: rulePolicyReports, Summary: "Kyverno's admission or ephemeral reports pile up in the cluster",
				Needs: kyvernoReports},
		},
		Cases: check.Cite(check.Prevents(
			"cilium-security-identity-exhaustion-2024-2025",
			"fullstaq-dex-cr-storage-control-plane-outage-2019",
			"jenkins-x-dex-authrequests-not-gced-2020",
			"sso-dex-authrequests-flux-apiserver-2020",
			"replicaset-history-accumulation-2017",
			"sap-helm-release-configmaps-etcd-bloat-2017",
			"unbounded-terminated-pods-apiserver-oom-2015",
			"zwindler-kyverno-events-fill-etcd-2023",
			caseKyvernoReports,
		)),
		Run: runObjectCountExplosion,
	}
}

func runObjectCountExplosion(ctx *check.Context) ([]finding.Finding, error) {
	counts, err := loadCountFacts()
	if err != nil {
		return nil, err
	}
	facts := counts.byName
	s := ctx.Snapshot
	var out []finding.Finding
	if f, ok := terminatedPods(s, facts["terminated-pod-gc-threshold"]); ok {
		out = append(out, f)
	}
	out = append(out, replicaSetHistory(ctx, facts["deployment-revision-history-limit"])...)
	if f, ok := finishedJobs(s, facts["job-ttl-after-finished"]); ok {
		out = append(out, f)
	}
	if f, ok := counted(ctx, snapshot.EventCounts,
		// Every served group version has an APIService: the finding is about the kind, not one object.
		finding.ObjectRef{APIVersion: "apiregistration.k8s.io/v1", Kind: "APIService", Name: "v1.events.k8s.io"}, eventsWarn, eventsHigh, "Events",
		"Every Event is an etcd object until its TTL passes ("+strings.TrimSpace(facts["event-ttl"].Fact)+"); a "+
			"controller or policy engine that writes one per object evaluation can fill etcd's quota, after which "+
			"every write fails.",
		"Find the source of the Events (kubectl get events -A --sort-by=.lastTimestamp, grouped by reportingComponent "+
			"and reason) and make it write fewer; keep the API server's --event-ttl short; on self-managed etcd, watch "+
			"its database size against --quota-backend-bytes.",
		[]string{"zwindler-kyverno-events-fill-etcd-2023"}); ok {
		out = append(out, f)
	}
	if f, ok := counted(ctx, snapshot.DexAuthRequests,
		finding.ObjectRef{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: "authrequests.dex.coreos.com"}, dexWarn, dexHigh, "Dex AuthRequests",
		"Dex with Kubernetes storage creates one AuthRequest custom resource per login attempt; health checks, "+
			"scanners or a password-guessing attack create them faster than Dex expires them, and every client that "+
			"lists custom resources (GitOps controllers, backups) pays for each.",
		"Move Dex to its own storage (a database, or an etcd of its own); until then cap the count with a ResourceQuota "+
			"on count/authrequests.dex.coreos.com in Dex's namespace, keep health checks off the login path and delete "+
			"expired AuthRequests.",
		[]string{"sso-dex-authrequests-flux-apiserver-2020", "fullstaq-dex-cr-storage-control-plane-outage-2019",
			"jenkins-x-dex-authrequests-not-gced-2020"}); ok {
		out = append(out, f)
	} else if f, ok := dexInClusterStorage(ctx); ok {
		out = append(out, f)
	}
	if f, ok := counted(ctx, snapshot.CiliumIdentities,
		finding.ObjectRef{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: "ciliumidentities.cilium.io"},
		ciliumIdentitiesWarn, ciliumIdentitiesHigh, "CiliumIdentities",
		"Cilium gives each distinct set of identity-relevant labels a cluster-wide identity from 256 to 65535; "+
			"labels whose value differs per pod or per Job (uids, hashes, run ids) make one per pod, and the operator "+
			"frees unused ones only at a rate limit. When the range is full, agents log \"no more available IDs in "+
			"configured space\" and new pods get no networking.",
		"Exclude per-pod and per-run labels from identity computation (the labels setting of cilium-config; see "+
			"Cilium's \"Limiting Identity-Relevant Labels\") before the range fills, since changing the label set "+
			"re-keys running pods; find the labels with kubectl get ciliumid -o yaml, and check that the operator's "+
			"identity garbage collection keeps up with pod churn.",
		[]string{"cilium-security-identity-exhaustion-2024-2025"}); ok {
		out = append(out, f)
	}
	out = append(out, policyReports(ctx)...)
	return out, nil
}

// dexInClusterStorage reports Dex keeping its AuthRequests as custom
// resources while their count is still below the pile-up thresholds: the
// count then grows with login attempts, from the internet too, and nothing
// in Dex caps it. kubegap does not read ResourceQuotas, so a quota on
// count/authrequests.dex.coreos.com is not seen; the finding says so.
func dexInClusterStorage(ctx *check.Context) (finding.Finding, bool) {
	cov := ctx.Snapshot.Status(snapshot.DexAuthRequests)
	if cov.Status != snapshot.StatusRead {
		return finding.Finding{}, false // not served: Dex (if any) stores elsewhere; unread: the rule's Needs say so
	}
	ref := finding.ObjectRef{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: "authrequests.dex.coreos.com"}
	return finding.Finding{
		Check:    "object-count-explosion",
		Severity: finding.Low,
		Title:    fmt.Sprintf("Dex keeps its AuthRequests in the cluster (%d now)", cov.Count),
		Message: fmt.Sprintf("The API serves authrequests.dex.coreos.com and holds %d of them: Dex uses Kubernetes storage and "+
			"creates one AuthRequest per login attempt, so their number follows whoever reaches the login page, a "+
			"password-guessing attack included, not the cluster's own workload. Nothing in Dex caps it, and every client "+
			"that lists all custom resources (GitOps controllers reconciling the whole cluster, backups) pays for each one. "+
			"A ResourceQuota on count/authrequests.dex.coreos.com would cap it; kubegap does not read ResourceQuotas, so "+
			"one may already be in place.", cov.Count),
		Objects:  []finding.ObjectRef{ref},
		Evidence: []string{fmt.Sprintf("%s: served, %d objects (below %d, where the pile-up rule starts)", snapshot.DexAuthRequests, cov.Count, dexWarn)},
		Remediation: "Give Dex its own storage (a database, or an etcd of its own) when its login page is reachable from " +
			"untrusted networks; otherwise cap the count with a ResourceQuota on count/authrequests.dex.coreos.com in " +
			"Dex's namespace and keep health checks and scanners off the login path.",
		Cases: []string{"sso-dex-authrequests-flux-apiserver-2020"},
	}, true
}

// counted reports a CountOnly resource above its thresholds.
func counted(ctx *check.Context, r snapshot.Resource, ref finding.ObjectRef, warn, high int, what, why, fix string, cases []string) (finding.Finding, bool) {
	cov := ctx.Snapshot.Status(r)
	n := cov.Count
	if n < warn {
		return finding.Finding{}, false
	}
	sev := finding.Medium
	if n >= high {
		sev = finding.High
	}
	how := "counted from the input"
	if cov.Complete {
		how = "counted with one LIST of limit=1 and the server's remainingItemCount"
	}
	return finding.Finding{
		Check:       "object-count-explosion",
		Severity:    sev,
		Title:       fmt.Sprintf("%d %s in the cluster", n, what),
		Message:     fmt.Sprintf("The cluster holds %d %s (%s; medium from %d, high from %d). %s", n, what, how, warn, high, why),
		Objects:     []finding.ObjectRef{ref},
		Evidence:    []string{fmt.Sprintf("%s: %d objects (%s)", r, n, how)},
		Remediation: fix,
		Cases:       cases,
	}, true
}

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
