package upgrade

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// The API server's own count of deprecated-API requests: what every
// client asked for, reads and watches included, which removed-apis (it
// reads what writers recorded) cannot see.

const (
	deprecatedAPIUsageID = "deprecated-api-usage"
	ruleRequested        = "requested"
	// seriesKind names a /metrics series in evidence: it is no Kubernetes
	// object, and internal/evidence resolves it in the metrics file.
	seriesKind = "APIServerMetric"
)

// deprecatedUsageCases: a CoreDNS still reading discovery.k8s.io/v1beta1
// broke on the upgrade that removed it; nothing it wrote showed it. AKS
// stops a minor upgrade on the usage this series counts (OpenShift holds it
// until an administrator acknowledges having checked that usage), so the
// check flags it before the upgrade is tried; so it does a DNS-01 webhook
// still watching a flowcontrol beta version the target drops.
var deprecatedUsageCases = []string{
	"coredns-endpointslice-v1beta1-after-upgrade-2023",
	"ingress-nginx-v0-on-k8s-122-ingress-v1beta1-2021",
	"managed-upgrades-blocked-by-deprecated-api-usage-2021-2025",
	"aggregated-apiservers-watch-removed-flowcontrol-versions-2024-2025",
}

// Sources the findings and notes quote.
const (
	aksBlockSource = "https://learn.microsoft.com/en-us/azure/aks/stop-cluster-upgrade-api-breaking-changes"
	aksOneReplica  = "https://learn.microsoft.com/en-us/azure/aks/control-plane-metrics-monitor#can-i-scrape-control-plane-metrics-with-self-hosted-prometheus"
	eksInsights    = "https://docs.aws.amazon.com/eks/latest/userguide/cluster-insights.html"
	gkeInsights    = "https://cloud.google.com/kubernetes-engine/docs/deprecations/viewing-deprecation-insights-and-recommendations"
	deprecationDoc = "https://kubernetes.io/docs/reference/using-api/deprecation-guide/"
)

func deprecatedAPIUsageCheck() check.Check {
	return check.Check{
		ID:       deprecatedAPIUsageID,
		Title:    "Clients requesting deprecated API versions, as the API server counts them",
		Severity: finding.High,
		Description: "Reads the API server's own count of requests to deprecated API versions: the " +
			"apiserver_requested_deprecated_apis series of GET /metrics (live, or a saved `kubectl get --raw /metrics` " +
			"in --from), one per group/version/resource/subresource some client asked for since that API server " +
			"started, with the release that removes it. Reads and watches count too, which removed-apis (what writers " +
			"recorded in managedFields and last-applied configuration) cannot see. With --target-version, versions " +
			"removed at or before the target are high, fix before: the upgrade breaks those clients (AKS blocks such a " +
			"minor upgrade while the usage is recent). Without it, each deprecated version still served is low, with its " +
			"removal release. /metrics answers from one API server, which counts only its own clients since it " +
			"started: on a self-managed control plane with several kube-apiserver pods the rule is partial until every " +
			"server's /metrics is given; AKS and EKS run several API servers and answer from one, so their own upgrade " +
			"checks (AKS UpgradeBlockedOnDeprecatedAPIUsage, EKS upgrade insights) see more.",
		// Pods: the kube-apiserver mirror pods say how many servers count.
		Reads: check.Needs(snapshot.APIServerMetrics, snapshot.Pods),
		Rules: []check.Rule{{ID: ruleRequested, Summary: "the API server that answered counted no request to a deprecated API version since it started",
			Needs: []snapshot.Resource{snapshot.APIServerMetrics, snapshot.Pods}}},
		Cases: check.Graded(deprecatedUsageCases,
			check.Related("coredns-endpointslice-v1beta1-after-upgrade-2023", "ingress-nginx-v0-on-k8s-122-ingress-v1beta1-2021"),
			check.Prevents("managed-upgrades-blocked-by-deprecated-api-usage-2021-2025",
				"aggregated-apiservers-watch-removed-flowcontrol-versions-2024-2025")),
		Run: runDeprecatedAPIUsage,
	}
}

// usageKey is one group/version a client requested.
type usageKey struct{ group, version, removed string }

func (k usageKey) groupVersion() string {
	if k.group == "" {
		return k.version
	}
	return k.group + "/" + k.version
}

func runDeprecatedAPIUsage(ctx *check.Context) ([]finding.Finding, error) {
	s := ctx.Snapshot
	provider := check.ClusterManagedProvider(s.Nodes)
	noteWhatIsUnseen(ctx, s, provider)
	byGV := map[usageKey][]snapshot.DeprecatedAPIRequest{}
	for _, d := range s.DeprecatedAPIRequests {
		k := usageKey{d.Group, d.Version, d.RemovedRelease}
		byGV[k] = append(byGV[k], d)
	}
	cp, cpEvidence, known := check.ServerVersion(s)
	var out []finding.Finding
	keys := slices.SortedFunc(maps.Keys(byGV), func(a, b usageKey) int {
		return strings.Compare(a.groupVersion()+"\x00"+a.removed, b.groupVersion()+"\x00"+b.removed)
	})
	for _, k := range keys {
		out = append(out, usageFinding(ctx, k, byGV[k], provider, cp, cpEvidence, known))
	}
	return out, nil
}

func usageFinding(ctx *check.Context, k usageKey, series []snapshot.DeprecatedAPIRequest, provider string,
	cp check.KubeVersion, cpEvidence string, known bool) finding.Finding {
	gv := k.groupVersion()
	var resources []string
	fd := finding.Finding{Check: deprecatedAPIUsageID, Rule: ruleRequested, Cases: deprecatedUsageCases}
	for _, d := range series {
		r := d.Resource
		if d.Subresource != "" {
			r += "/" + d.Subresource
		}
		resources = append(resources, r)
		ref := finding.ObjectRef{Kind: seriesKind, Name: d.SeriesName()}
		if len(fd.Objects) < check.MaxListedObjects {
			fd.Objects = append(fd.Objects, ref)
		}
		fd.AddEvidence(finding.Quote(ref,
			finding.Value("labels.group", d.Group), finding.Value("labels.version", d.Version),
			finding.Value("labels.resource", d.Resource), finding.Value("labels.subresource", d.Subresource),
			finding.Value("labels.removed_release", d.RemovedRelease), finding.Value("value", d.Value)))
	}
	// Where the series was read (GET /metrics or a file) is the report's
	// coverage; the finding reads the same either way.
	fd.Evidence = append(fd.Evidence, "apiserver_requested_deprecated_apis: 1 for each deprecated group/version/resource "+
		"a client requested since the API server started")
	if known {
		fd.Evidence = append(fd.Evidence, cpEvidence)
	}
	list := check.ListText(resources, 8)
	removed, hasRemoval := check.ParseKubeVersion(k.removed)
	breaks := hasRemoval && ctx.Target != nil && !ctx.Target.Less(removed)
	fd.Remediation = fmt.Sprintf("Find the clients that still request %s (the API server's audit log marks each such request "+
		"with the annotation k8s.io/deprecated, and a warning header tells the client itself) and move them to the "+
		"version the Deprecated API Migration Guide (%s) names; then restart or upgrade them. The series stays at 1 until "+
		"the API server restarts.", gv, deprecationDoc)
	switch {
	case breaks:
		fd.Severity = finding.High
		fd.Preflight = finding.PreflightBefore
		fd.Title = fmt.Sprintf("Clients request %s (%s), which Kubernetes %s no longer serves: this upgrade breaks them",
			gv, list, removed.MinorString())
		fd.Message = fmt.Sprintf("The API server counted requests to %s for %s since it started. Kubernetes %s removes "+
			"that version, and the upgrade to %s crosses it: every client still asking for it gets 404 Not Found after "+
			"the upgrade.", gv, list, removed.MinorString(), ctx.Target.MinorString())
		if provider == "AKS" {
			fd.Message += " AKS blocks a control-plane minor upgrade (to 1.26 or later) while such usage was seen in the 12 " +
				"hours before it (UpgradeBlockedOnDeprecatedAPIUsage, " + aksBlockSource + ")."
		} else {
			fd.Message += " AKS blocks such an upgrade while the usage is recent (UpgradeBlockedOnDeprecatedAPIUsage, " +
				aksBlockSource + ")."
		}
	case hasRemoval:
		fd.Severity = finding.Low
		fd.Title = fmt.Sprintf("Clients request deprecated %s (%s), removed in Kubernetes %s", gv, list, removed.MinorString())
		fd.Message = fmt.Sprintf("The API server counted requests to %s for %s since it started. The version is "+
			"deprecated and still served; Kubernetes %s stops serving it, and the clients that ask for it then fail.",
			gv, list, removed.MinorString())
	default:
		fd.Severity = finding.Low
		fd.Title = fmt.Sprintf("Clients request deprecated %s (%s), no removal release announced", gv, list)
		fd.Message = fmt.Sprintf("The API server counted requests to %s for %s since it started. The server marks "+
			"them deprecated without a release that removes them (removed_release is empty): they are served for now.", gv, list)
	}
	if known && hasRemoval && !cp.Less(removed) {
		// Not possible from one API server (it counts only what it
		// serves); from files of two clusters, say what was read.
		fd.Message += fmt.Sprintf(" The input's control plane (%s) is already past that release: the series comes from "+
			"another API server than the version the input names.", cp.MinorString())
	}
	return fd
}

// noteWhatIsUnseen says what a silent rule cannot prove: the clients of
// other API server replicas, and, where /metrics could not be read on a
// managed control plane, the provider's own view.
func noteWhatIsUnseen(ctx *check.Context, s *snapshot.Snapshot, provider string) {
	cov := s.Status(snapshot.APIServerMetrics)
	if !cov.Complete {
		switch provider {
		case "AKS":
			ctx.Incomplete(ruleRequested, "AKS: see the cluster's Diagnose and Solve Problems or the upgrade's "+
				"UpgradeBlockedOnDeprecatedAPIUsage check for deprecated API usage (%s)", aksBlockSource)
		case "EKS":
			ctx.Incomplete(ruleRequested, "EKS: upgrade insights list deprecated API usage with the clients that made it "+
				"(aws eks list-insights, %s)", eksInsights)
		case "GKE":
			ctx.Incomplete(ruleRequested, "GKE: deprecation insights and recommendations report deprecated API usage "+
				"and pause automatic upgrades on it (%s)", gkeInsights)
		}
		return
	}
	// A complete read is one API server's count. On a managed control
	// plane the replicas cannot be counted from the API (AKS and EKS run
	// several, see the docs); a self-managed one shows its kube-apiserver
	// mirror pods.
	if apiservers := kubeAPIServerPods(s); len(apiservers) > 1 && len(metricsSources(s)) < len(apiservers) {
		ctx.Incomplete(ruleRequested, "%d kube-apiserver pods in kube-system (%s) and /metrics read from %d: each API "+
			"server counts only its own clients; give every server's /metrics to --from (kubectl get --raw /metrics "+
			"reaches one through the load balancer)", len(apiservers), check.ListText(apiservers, 5), len(metricsSources(s)))
	}
}

// metricsSources are the places the series were read from.
func metricsSources(s *snapshot.Snapshot) []string {
	var out []string
	for _, d := range s.DeprecatedAPIRequests {
		if !slices.Contains(out, d.From) {
			out = append(out, d.From)
		}
	}
	return out
}

// kubeAPIServerPods names the kube-apiserver mirror pods of a self-managed
// control plane.
func kubeAPIServerPods(s *snapshot.Snapshot) []string {
	var out []string
	check.EachAPIServerContainer(s, func(p *snapshot.Pod, _ *snapshot.Container) {
		if len(out) == 0 || out[len(out)-1] != p.Name { // one name per pod
			out = append(out, p.Name)
		}
	})
	return out
}
