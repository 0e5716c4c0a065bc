package objects

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

const (
	etcdCapacityID   = "etcd-capacity-signals"
	ruleDBSize       = "db-size-against-quota"
	caseEmbeddedEtcd = "embedded-etcd-2gib-quota-nospace-k3s-2021-2026"

	quotaFlag     = "--quota-backend-bytes"
	etcdRoleLabel = "node-role.kubernetes.io/etcd"
	k3sNodeArgs   = "k3s.io/node-args"
	quotaEtcdArg  = "quota-backend-bytes"
	gib           = 1 << 30
	etcdNamespace = "kube-system"
)

// Policy, not fact: the shares of the quota at which the check speaks
// (the case's reading: flag at half the quota, high at 70 %), well before
// etcd's NOSPACE alarm stops every write.
const (
	quotaWarn = 0.5
	quotaHigh = 0.7
)

//go:embed data/etcd-capacity-signals.yaml
var quotaFactsYAML []byte

type quotaFact struct {
	Name    string   `json:"name"`
	Bytes   int64    `json:"bytes"`
	Fact    string   `json:"fact"`
	Sources []string `json:"sources"`
}

type quotaFacts struct {
	Quotas []quotaFact `json:"quotas"`

	byName map[string]quotaFact
}

var loadQuotaFacts = check.Facts("etcd quota facts", quotaFactsYAML, func(f *quotaFacts) error {
	f.byName = map[string]quotaFact{}
	for _, q := range f.Quotas {
		if q.Bytes <= 0 || len(q.Sources) == 0 {
			return errors.New("etcd quota facts: " + q.Name + " needs bytes and sources")
		}
		f.byName[q.Name] = q
	}
	for _, need := range []string{"etcd-default", "k3s-embedded-etcd"} {
		if _, ok := f.byName[need]; !ok {
			return errors.New("etcd quota facts: missing " + need)
		}
	}
	return nil
})

func etcdCapacitySignalsCheck() check.Check {
	return check.Check{
		ID:       etcdCapacityID,
		Title:    "etcd's database close to its space quota",
		Severity: finding.High,
		Description: "Reads the storage database's size from the API server's /metrics (apiserver_storage_size_bytes from 1.28, " +
			"apiserver_storage_db_total_size_in_bytes in 1.26 and 1.27, etcd_db_total_size_in_bytes before: the file etcd " +
			"allocated, which its quota is measured against) and the quota where the input shows it: --quota-backend-bytes " +
			"of an etcd static pod in kube-system (etcd's 2 GiB default without the flag), or, on k3s servers running the " +
			"embedded etcd (label node-role.kubernetes.io/etcd), --etcd-arg quota-backend-bytes in the k3s.io/node-args " +
			"annotation (2 GiB without it). Medium at half the quota, high at 70 %: once the database reaches the quota etcd " +
			"raises a NOSPACE alarm and refuses every write, and a k3s server then fails to start. Where the quota is not in " +
			"the input (external etcd) the size is reported in the rule's reason and the rule is " +
			"partial: an unknown quota is never room left. On AKS, EKS and GKE, whose etcd and its quota are the provider's, the rule " +
			"has no etcd to judge and passes, as etcd-known-bad-version does. A /metrics without any size series is unknown, never a pass.",
		Reads: check.Needs(snapshot.APIServerMetrics, snapshot.Nodes, snapshot.Pods),
		Rules: []check.Rule{{ID: ruleDBSize, Summary: "the storage database is below half of etcd's space quota",
			Needs: []snapshot.Resource{snapshot.APIServerMetrics, snapshot.Nodes, snapshot.Pods}}},
		Cases: check.Prevents(caseEmbeddedEtcd),
		Run:   runEtcdCapacitySignals,
	}
}

// quotaSource is where the quota came from: the objects that show it and
// the evidence that quotes them.
type quotaSource struct {
	bytes int64
	what  string // "etcd pod kube-system/etcd-cp-1 --quota-backend-bytes=..."
	refs  []finding.ObjectRef
	items []finding.EvidenceItem
	fact  *quotaFact // the default relied on, when no flag sets it
}

func runEtcdCapacitySignals(ctx *check.Context) ([]finding.Finding, error) {
	facts, err := loadQuotaFacts()
	if err != nil {
		return nil, err
	}
	s := ctx.Snapshot
	if p := check.ClusterManagedProvider(s.Nodes); p != "" && !selfManagedEtcd(s) {
		// The provider runs etcd and sets its quota, which the API does
		// not show: there is no etcd here whose quota the rule could
		// read, as etcd-known-bad-version has no etcd to judge there.
		ctx.Done(ruleDBSize, "etcd is %s's: its quota is not in the API and not the cluster owner's to set%s", p, sizeNote(s))
		return nil, nil
	}
	if len(s.StorageSizes) == 0 {
		if ctx.Present(snapshot.APIServerMetrics) || s.Status(snapshot.APIServerMetrics).Complete {
			ctx.Unknowable(ruleDBSize, "the API server's /metrics holds no storage size series (%s): the database size is not known",
				"apiserver_storage_size_bytes, apiserver_storage_db_total_size_in_bytes, etcd_db_total_size_in_bytes")
		}
		return nil, nil
	}
	// The largest series: with several etcd clusters (or members seen
	// through several API servers), the fullest is the one that stops.
	size := s.StorageSizes[0]
	for _, z := range s.StorageSizes[1:] {
		if z.Bytes > size.Bytes {
			size = z
		}
	}
	q, ok := etcdQuota(ctx, facts)
	if !ok {
		ctx.Unknowable(ruleDBSize, "the storage database is %s (%s %s), but the input shows no etcd quota (no etcd static pod in %s, no k3s server "+
			"running the embedded etcd): how close it is to the quota is not known", bytesText(size.Bytes), size.SeriesName(), size.Value, etcdNamespace)
		return nil, nil
	}
	share := size.Bytes / float64(q.bytes)
	if share < quotaWarn {
		return nil, nil
	}
	sev := finding.Medium
	if share >= quotaHigh {
		sev = finding.High
	}
	pct := int(share * 100)
	f := finding.Finding{
		Check: etcdCapacityID, Severity: sev,
		Title: fmt.Sprintf("etcd's database is at %d%% of its %s space quota", pct, bytesText(float64(q.bytes))),
		Message: fmt.Sprintf("The API server reports a storage database of %s and %s. When the database reaches the quota etcd raises a NOSPACE "+
			"alarm and refuses every write until space is freed and the alarm is disarmed; defragmenting frees only space compaction released, "+
			"not live objects, and a k3s server that cannot write at start-up does not start, leaving no API to clean up through.",
			bytesText(size.Bytes), q.what),
		Objects: q.refs,
		Evidence: []string{
			fmt.Sprintf("%s %s (%s)", size.SeriesName(), size.Value, size.From),
		},
		Remediation: "Find what is growing (kubectl get --raw /metrics | grep apiserver_resource_objects lists objects per resource) and bound it " +
			"before the quota is reached; raise the quota (etcd --quota-backend-bytes, k3s --etcd-arg=quota-backend-bytes=N, at most 8 GiB) " +
			"only with the disk to hold it, and alert on the database size well below the quota.",
		Cases: []string{caseEmbeddedEtcd},
	}
	if q.fact != nil {
		f.Evidence = append(f.Evidence, fmt.Sprintf("%s (%s)", strings.Join(strings.Fields(q.fact.Fact), " "), strings.Join(q.fact.Sources, ", ")))
	}
	f.AddEvidence(q.items...)
	return []finding.Finding{f}, nil
}

// selfManagedEtcd reports whether the input shows an etcd the cluster
// runs itself: a static pod in kube-system, or a k3s embedded-etcd server.
func selfManagedEtcd(s *snapshot.Snapshot) bool {
	for _, p := range s.Index().PodsInNamespace(etcdNamespace) {
		if snapshot.IsControlPlaneStaticPod(p.Namespace, p.Annotations) {
			for _, c := range p.Spec.Containers {
				if check.ImageName(c.Image) == "etcd" {
					return true
				}
			}
		}
	}
	for i := range s.Nodes {
		if s.Nodes[i].Labels[etcdRoleLabel] == "true" && strings.Contains(s.Nodes[i].Status.NodeInfo.KubeletVersion, "+k3s") {
			return true
		}
	}
	return false
}

// sizeNote is "; the database is N bytes (series)" when /metrics says.
func sizeNote(s *snapshot.Snapshot) string {
	if len(s.StorageSizes) == 0 {
		return ""
	}
	z := s.StorageSizes[0]
	return fmt.Sprintf("; the database is %s (%s %s)", bytesText(z.Bytes), z.SeriesName(), z.Value)
}

// etcdQuota finds the quota the input shows: an etcd static pod's flag or
// etcd's default for it, else the k3s embedded etcd's etcd-arg or its
// default. ok is false when neither is in the input.
func etcdQuota(ctx *check.Context, facts *quotaFacts) (quotaSource, bool) {
	s := ctx.Snapshot
	var best quotaSource
	found := false
	for _, p := range s.Index().PodsInNamespace(etcdNamespace) {
		if !snapshot.IsControlPlaneStaticPod(p.Namespace, p.Annotations) {
			continue
		}
		for _, c := range p.Spec.Containers {
			if check.ImageName(c.Image) != "etcd" {
				continue
			}
			ref := finding.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: p.Namespace, Name: p.Name}
			q := quotaSource{refs: []finding.ObjectRef{ref}}
			list, value, n, set := flagValue(c.Command, c.Args, quotaFlag)
			switch {
			case set && n > 0:
				q.bytes = n
				q.what = fmt.Sprintf("etcd pod %s/%s runs with %s=%s", p.Namespace, p.Name, quotaFlag, value)
				vals := c.Command
				if list == "args" {
					vals = c.Args
				}
				q.items = []finding.EvidenceItem{finding.Quote(ref, finding.Value(check.ContainerField("Pod", check.Containers, c.Name, list), finding.JSONText(vals)))}
			case set:
				continue // 0 or unreadable: etcd's default, or not a quota kubegap can read
			default:
				d := facts.byName["etcd-default"]
				q.bytes, q.fact = d.Bytes, &d
				q.what = fmt.Sprintf("etcd pod %s/%s sets no %s, so etcd's default quota of %s applies", p.Namespace, p.Name, quotaFlag, bytesText(float64(d.Bytes)))
			}
			if !found || q.bytes < best.bytes {
				best, found = q, true
			}
		}
	}
	if found {
		return best, true
	}
	// k3s servers running the embedded etcd.
	var etcdNodes []*corev1.Node
	for i := range s.Nodes {
		n := &s.Nodes[i]
		if strings.Contains(n.Status.NodeInfo.KubeletVersion, "+k3s") && n.Labels[etcdRoleLabel] == "true" {
			etcdNodes = append(etcdNodes, n)
		}
	}
	if len(etcdNodes) == 0 {
		return quotaSource{}, false
	}
	for _, n := range etcdNodes {
		ref := check.NodeRef(n.Name)
		args, hasArgs := n.Annotations[k3sNodeArgs]
		v, set := k3sEtcdQuota(args)
		q := quotaSource{refs: []finding.ObjectRef{ref}}
		fields := []finding.Field{finding.Entry("metadata.labels["+etcdRoleLabel+"]", n.Labels[etcdRoleLabel])}
		switch {
		case set && v > 0:
			q.bytes = v
			q.what = fmt.Sprintf("k3s server %s runs its embedded etcd with --etcd-arg %s=%d", n.Name, quotaEtcdArg, v)
		case set || !hasArgs:
			// An unreadable value, or no record of the server's arguments:
			// the quota is not known for this server.
			continue
		default:
			d := facts.byName["k3s-embedded-etcd"]
			q.bytes, q.fact = d.Bytes, &d
			q.what = fmt.Sprintf("k3s server %s runs its embedded etcd without --etcd-arg %s, so etcd's default quota of %s applies",
				n.Name, quotaEtcdArg, bytesText(float64(d.Bytes)))
		}
		// node-args is kept reduced to the arguments checks read
		// (snapshot.K3sNodeArgsKept): the message says what it names.
		q.items = []finding.EvidenceItem{finding.Quote(ref, fields...)}
		if !found || q.bytes < best.bytes {
			best, found = q, true
		}
	}
	return best, found
}

// flagValue finds --flag=value or --flag value in a container's command
// or args: which list holds it ("command" or "args"), the value as
// written, and that value as a number (0 when it is none).
func flagValue(command, args []string, flag string) (list, value string, n int64, set bool) {
	for _, l := range []struct {
		name string
		vals []string
	}{{"command", command}, {"args", args}} {
		for i, a := range l.vals {
			v, eq := strings.CutPrefix(a, flag+"=")
			switch {
			case eq:
			case a == flag && i+1 < len(l.vals):
				v = l.vals[i+1]
			default:
				continue
			}
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				n = 0
			}
			return l.name, v, n, true
		}
	}
	return "", "", 0, false
}

// k3sEtcdQuota reads quota-backend-bytes from the --etcd-arg values of a
// k3s.io/node-args annotation (k3s writes "--etcd-arg=k=v" as two
// elements). set is false when no etcd-arg names it.
func k3sEtcdQuota(nodeArgs string) (int64, bool) {
	var args []string
	if json.Unmarshal([]byte(nodeArgs), &args) != nil {
		return 0, false
	}
	for i, a := range args {
		if a != "--etcd-arg" || i+1 >= len(args) {
			continue
		}
		if v, ok := strings.CutPrefix(args[i+1], quotaEtcdArg+"="); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return 0, true
			}
			return n, true
		}
	}
	return 0, false
}

// bytesText prints a size in GiB or MiB with its byte count.
func bytesText(b float64) string {
	switch {
	case b >= gib:
		return fmt.Sprintf("%.2f GiB (%.0f bytes)", b/gib, b)
	default:
		return fmt.Sprintf("%.1f MiB (%.0f bytes)", b/(1<<20), b)
	}
}
