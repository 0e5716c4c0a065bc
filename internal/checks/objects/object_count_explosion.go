package objects

import (
	_ "embed"
	"errors"
	"fmt"
	"strings"

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
