package objects

import (
	_ "embed"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

const (
	apiWriteLatencyID = "api-write-latency"
	ruleWriteSLO      = "write-latency-slo"
	caseTroccoEKS     = "trocco-eks-upgrade-control-plane-latency-job-startup-2025"
)

// Policy, not fact: below this many writes of one (verb, resource) since
// the API server started, one slow request is more than 1 % and the
// share says nothing about the 99th percentile.
const minWrites = 1000

// metricSeriesKind is the kind a finding gives a /metrics series, as
// deprecated-api-usage does.
const metricSeriesKind = "APIServerMetric"

// maxLatencyEvidence bounds the series quoted in one finding.
const maxLatencyEvidence = 10

//go:embed data/api-write-latency.yaml
var writeSLOYAML []byte

type writeSLOFacts struct {
	Sources []string `json:"sources"`
	SLO     struct {
		BoundSeconds float64  `json:"boundSeconds"`
		Percentile   float64  `json:"percentile"`
		Fact         string   `json:"fact"`
		Sources      []string `json:"sources"`
	} `json:"slo"`
}

var loadWriteSLO = check.Facts("API write latency SLO", writeSLOYAML, func(f *writeSLOFacts) error {
	// The snapshot keeps the le="1" bucket only: a table with another
	// bound would need it to keep that bucket instead.
	if f.SLO.BoundSeconds != 1 || f.SLO.Percentile <= 0 || f.SLO.Percentile >= 100 || len(f.SLO.Sources) == 0 {
		return errors.New("API write latency SLO: want boundSeconds 1, a percentile between 0 and 100 and sources")
	}
	return nil
})

func apiWriteLatencyCheck() check.Check {
	return check.Check{
		ID:       apiWriteLatencyID,
		Title:    "API server writes slower than the upstream latency SLO",
		Severity: finding.Medium,
		Description: "Reads apiserver_request_duration_seconds from the API server's /metrics for single-object writes (POST, PUT, " +
			"PATCH and DELETE at scope resource, no dry runs) of built-in resources (the core group, groups without a dot and " +
			"*.k8s.io groups; the SLO leaves out custom and aggregated resources, and CRDs in *.k8s.io groups are counted all the " +
			"same) and compares each (verb, resource) pair with Kubernetes' official API call latency SLO: 99 % of such writes " +
			"within 1s (data/api-write-latency.yaml). Medium when more than 1 % of a pair's writes since that API server started " +
			"took longer, among pairs with at least 1,000 writes (our threshold); a slower control plane delays every object " +
			"controllers create, such as a Job's pods. The histogram counts from the API server's start, not per cluster-day, " +
			"and one GET /metrics reaches one API server: this is what that server served, flagged while it lasts, not " +
			"before. Why writes are slow (admission webhooks, etcd, a provider's control plane) is not judged. A /metrics " +
			"without these series, or with too few writes, is unknown, never a pass.",
		Reads: check.Needs(snapshot.APIServerMetrics),
		Rules: []check.Rule{{ID: ruleWriteSLO, Summary: "99 % of single-object writes of each verb and resource took at most 1s",
			Needs: []snapshot.Resource{snapshot.APIServerMetrics}}},
		Cases: check.Detects(caseTroccoEKS),
		Run:   runAPIWriteLatency,
	}
}

// builtinGroup reports whether an API group is one the SLO covers as
// Kubernetes' own: the core group, the unqualified groups (apps, batch,
// policy, autoscaling) and *.k8s.io, less the virtual review resources
// of authentication.k8s.io and authorization.k8s.io.
func builtinGroup(g string) bool {
	switch g {
	case "authentication.k8s.io", "authorization.k8s.io":
		return false
	}
	return !strings.Contains(g, ".") || strings.HasSuffix(g, ".k8s.io")
}

// slowShare is the share of a series' writes that took longer than 1s.
func slowShare(w snapshot.WriteLatency) float64 {
	if w.Count <= 0 {
		return 0
	}
	return (w.Count - w.Within1s) / w.Count
}

func runAPIWriteLatency(ctx *check.Context) ([]finding.Finding, error) {
	facts, err := loadWriteSLO()
	if err != nil {
		return nil, err
	}
	s := ctx.Snapshot
	var judged, slow []snapshot.WriteLatency
	for _, w := range s.WriteLatency {
		if !builtinGroup(w.Group) || w.Count < minWrites {
			continue
		}
		judged = append(judged, w)
		if slowShare(w) > 1-facts.SLO.Percentile/100 {
			slow = append(slow, w)
		}
	}
	if len(judged) == 0 {
		if len(s.WriteLatency) == 0 {
			ctx.Unknowable(ruleWriteSLO, "the API server's /metrics holds no %s series for single-object writes: their latency is not known",
				"apiserver_request_duration_seconds")
		} else {
			ctx.Unknowable(ruleWriteSLO, "no verb and resource of a built-in API has %d single-object writes in %s since the API server "+
				"started: too few to judge the 99th percentile", minWrites, "apiserver_request_duration_seconds")
		}
		return nil, nil
	}
	if len(slow) == 0 {
		return nil, nil
	}
	slices.SortStableFunc(slow, func(a, b snapshot.WriteLatency) int {
		switch sa, sb := slowShare(a), slowShare(b); {
		case sa > sb:
			return -1
		case sa < sb:
			return 1
		}
		return strings.Compare(a.SeriesName(), b.SeriesName())
	})
	worst := slow[0]
	var pairs []string
	var refs []finding.ObjectRef
	for _, w := range slow {
		pairs = append(pairs, fmt.Sprintf("%s %s", w.Verb, resourceName(w)))
		if len(refs) < check.MaxListedObjects {
			// No Kubernetes object: the series, as deprecated-api-usage
			// names the /metrics series it reads.
			refs = append(refs, finding.ObjectRef{Kind: metricSeriesKind, Name: w.SeriesName()})
		}
	}
	f := finding.Finding{
		Check: apiWriteLatencyID, Severity: finding.Medium,
		Title: fmt.Sprintf("%s: %.1f%% of single-object writes took over 1s, above the SLO's 1%%", pairs[0], 100*slowShare(worst)),
		Message: fmt.Sprintf("Since the API server that answered GET /metrics started, more than 1%% of the single-object writes of %d verb "+
			"and resource pairs (%s) took longer than 1s, so their 99th percentile is above the 1s that Kubernetes' API call latency "+
			"SLO sets; the worst, %s, had %.0f of %.0f writes over 1s. Controllers and workloads that create objects at a high rate "+
			"(Jobs and their pods) wait on every such write.",
			len(slow), strings.Join(pairs, ", "), pairs[0], worst.Count-worst.Within1s, worst.Count),
		Remediation: "Find where writes spend their time: apiserver_admission_webhook_admission_duration_seconds for admission webhooks, " +
			"apiserver_flowcontrol_request_wait_duration_seconds for API Priority and Fairness queueing, etcd_request_duration_seconds " +
			"for storage. On a managed control plane, open a case with the provider with these numbers; if the slowdown followed a " +
			"control-plane upgrade, move load you can move (a second cluster) while it is investigated, since managed clusters " +
			"cannot be downgraded.",
		Objects: refs,
		Cases:   []string{caseTroccoEKS},
	}
	for i, w := range slow {
		if i == maxLatencyEvidence {
			f.Evidence = append(f.Evidence, fmt.Sprintf("and %d more pairs", len(slow)-i))
			break
		}
		f.Evidence = append(f.Evidence, fmt.Sprintf(`%s count %.0f, le="1" %.0f (%s)`, w.SeriesName(), w.Count, w.Within1s, w.From))
		ref := finding.ObjectRef{Kind: metricSeriesKind, Name: w.SeriesName()}
		fields := []finding.Field{finding.Value("labels.verb", w.Verb), finding.Value("labels.resource", w.Resource)}
		if w.Group != "" {
			fields = append(fields, finding.Value("labels.group", w.Group))
		}
		if w.Subresource != "" {
			fields = append(fields, finding.Value("labels.subresource", w.Subresource))
		}
		fields = append(fields, finding.Value("count", numberText(w.Count)), finding.Value("le1", numberText(w.Within1s)))
		f.AddEvidence(finding.Quote(ref, fields...))
	}
	f.Evidence = append(f.Evidence, fmt.Sprintf("%s (%s)", strings.Join(strings.Fields(facts.SLO.Fact), " "), strings.Join(facts.SLO.Sources, ", ")))
	return []finding.Finding{f}, nil
}

// numberText prints a sample value as the exposition does ("12000").
func numberText(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// resourceName is resource or resource/subresource, with its group.
func resourceName(w snapshot.WriteLatency) string {
	r := w.Resource
	if w.Subresource != "" {
		r += "/" + w.Subresource
	}
	if w.Group != "" {
		r += "." + w.Group
	}
	return r
}
