package versions

import (
	_ "embed"
	"errors"
	"fmt"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

const (
	kubeletQPSID   = "kubelet-api-rate-limit"
	ruleKubeletQPS = "kubelet-default-api-qps"
	ruleQPSBroker  = "pod-ip-broker-on-default-qps"
	caseZalandoQPS = "zalando-kubelet-api-qps-2019"
)

//go:embed data/kubelet-api-rate-limit.yaml
var kubeletQPSData []byte

type kubeletQPSFacts struct {
	Defaults []struct {
		ID       string `json:"id"`
		Below    string `json:"below"`
		QPS      int    `json:"qps"`
		Burst    int    `json:"burst"`
		RaisedTo struct {
			QPS   int `json:"qps"`
			Burst int `json:"burst"`
		} `json:"raisedTo"`
		Sources []string `json:"sources"`
	} `json:"defaults"`
	PodIPBrokers []struct {
		Name    string   `json:"name"`
		Images  []string `json:"images"`
		Fact    string   `json:"fact"`
		Sources []string `json:"sources"`
	} `json:"podIPBrokers"`
	Configz []struct {
		ID      string   `json:"id"`
		Fact    string   `json:"fact"`
		Sources []string `json:"sources"`
	} `json:"configz"`

	below check.KubeVersion
}

var loadKubeletQPSFacts = check.Facts("data/kubelet-api-rate-limit.yaml", kubeletQPSData, func(f *kubeletQPSFacts) error {
	if len(f.Defaults) != 1 || len(f.PodIPBrokers) == 0 || len(f.Configz) != 1 {
		return errors.New("data/kubelet-api-rate-limit.yaml: one defaults row, one configz row and some podIPBrokers are required")
	}
	v, ok := check.ParseKubeVersion(f.Defaults[0].Below)
	if !ok {
		return fmt.Errorf("data/kubelet-api-rate-limit.yaml: bad version %q", f.Defaults[0].Below)
	}
	f.below = v
	return nil
})

// kubeletAPIRateLimitCheck names the nodes whose kubelet predates 1.27,
// whose built-in client rate limit towards the API server is 5 queries
// per second: on a node with fast pod churn, status updates (pod IPs
// among them) then queue for minutes, and everything that waits on them
// waits too. The configured value is host configuration the Node object
// does not carry, so the finding is an inference from the version.
func kubeletAPIRateLimitCheck() check.Check {
	return check.Check{
		ID:       kubeletQPSID,
		Title:    "Kubelets old enough to run a built-in API rate limit of 5 queries per second",
		Severity: finding.Medium,
		Description: "Reads each node's status.nodeInfo.kubeletVersion. A kubelet below 1.27 talks to the API server at " +
			"kubeAPIQPS 5 and kubeAPIBurst 10 unless its configuration file or flags set other values (Kubernetes 1.27 raised " +
			"the defaults to 50 and 100); on a node where pods start and stop quickly, pod status updates, pod IPs among " +
			"them, then lag by minutes. The value a kubelet actually runs with is not in the Node object: kubegap does not " +
			"read the kubelet's /configz, which through the API server needs the nodes/proxy permission that also reaches " +
			"the kubelet's exec endpoints, so the finding is inferred from the version and says so. Low; medium when a " +
			"credential broker that serves pods by their IP (kube2iam) runs as a DaemonSet, since new pods then wait for " +
			"credentials on those status updates. Nodes whose kubelet version cannot be read leave the rules partial, and " +
			"DaemonSets not read completely leave the broker rule partial.",
		// DaemonSets only raise the severity: without them the finding
		// stands at low and the broker rule says it could not look.
		Reads: check.Needs(snapshot.Nodes, snapshot.DaemonSets),
		Rules: []check.Rule{
			{ID: ruleKubeletQPS, Summary: "no kubelet below 1.27, whose built-in kubeAPIQPS is 5, unless its configuration says otherwise",
				Needs: []snapshot.Resource{snapshot.Nodes}},
			{ID: ruleQPSBroker, Summary: "no credential broker that serves pods by their IP (kube2iam) beside such kubelets",
				Needs: []snapshot.Resource{snapshot.Nodes, snapshot.DaemonSets}},
		},
		Cases: check.Prevents(caseZalandoQPS),
		Run:   runKubeletAPIRateLimit,
	}
}

func runKubeletAPIRateLimit(ctx *check.Context) ([]finding.Finding, error) {
	facts, err := loadKubeletQPSFacts()
	if err != nil {
		return nil, err
	}
	s := ctx.Snapshot
	if len(s.Nodes) == 0 {
		return nil, check.NotEvaluated("the input holds no nodes")
	}
	var old []*corev1.Node
	unreadable := 0
	for i := range s.Nodes {
		n := &s.Nodes[i]
		v, ok := check.ParseKubeVersion(n.Status.NodeInfo.KubeletVersion)
		switch {
		case !ok:
			unreadable++
		case v.Less(facts.below):
			old = append(old, n)
		}
	}
	if unreadable > 0 {
		for _, r := range []string{ruleKubeletQPS, ruleQPSBroker} {
			ctx.Incomplete(r, "%s report no kubelet version kubegap can read", check.Plural(unreadable, "node", "nodes"))
		}
	}
	if len(old) == 0 {
		return nil, nil
	}
	sort.Slice(old, func(i, j int) bool { return old[i].Name < old[j].Name })
	return []finding.Finding{kubeletQPSFinding(ctx, facts, old)}, nil
}

// podIPBroker is the first DaemonSet running a broker that serves pods
// by their IP, with the container and image that show it.
type podIPBroker struct {
	ds               *appsv1.DaemonSet
	container, image string
	fact             string
	sources          []string
}

func findPodIPBroker(s *snapshot.Snapshot, facts *kubeletQPSFacts) (podIPBroker, bool) {
	for i := range s.DaemonSets {
		ds := &s.DaemonSets[i]
		for _, c := range ds.Spec.Template.Spec.Containers {
			name := check.ImageName(c.Image)
			for _, b := range facts.PodIPBrokers {
				for _, img := range b.Images {
					if name == img {
						return podIPBroker{ds: ds, container: c.Name, image: c.Image, fact: strings.TrimSpace(b.Fact), sources: b.Sources}, true
					}
				}
			}
		}
	}
	return podIPBroker{}, false
}

func kubeletQPSFinding(ctx *check.Context, facts *kubeletQPSFacts, old []*corev1.Node) finding.Finding {
	d := facts.Defaults[0]
	cz := facts.Configz[0]
	f := finding.Finding{
		Check:    kubeletQPSID,
		Severity: finding.Low,
		Title: fmt.Sprintf("%s a kubelet below %s, whose built-in API rate limit is %d queries per second",
			check.NodesRun(len(old), ""), facts.below.MinorString(), d.QPS),
		Message: fmt.Sprintf("These kubelets predate %s: unless their configuration file or flags set kubeAPIQPS and kubeAPIBurst, "+
			"they send the API server at most %d requests a second (bursts of %d), where %s and later default to %d and %d. "+
			"On a node where many pods start and stop, pod status updates, the pod IPs among them, then queue for minutes. "+
			"This is inferred from the version: the configured value is host configuration the Node object does not show, "+
			"and kubegap does not read the kubelet's /configz (it needs nodes/proxy).",
			facts.below.MinorString(), d.QPS, d.Burst, facts.below.MinorString(), d.RaisedTo.QPS, d.RaisedTo.Burst),
		Remediation: fmt.Sprintf("Check the value a kubelet runs with (kubectl get --raw /api/v1/nodes/%s/proxy/configz, with a "+
			"role that may get nodes/proxy; kubeletconfig.kubeAPIQPS and kubeAPIBurst in the answer are the values it runs with). "+
			"Set kubeAPIQPS and "+
			"kubeAPIBurst in the kubelet configuration of these nodes (%d and %d are what %s defaults to), or upgrade them to %s "+
			"or later; and spread bursty short-lived pods over several nodes.",
			old[0].Name, d.RaisedTo.QPS, d.RaisedTo.Burst, facts.below.MinorString(), facts.below.MinorString()),
		Cases: []string{caseZalandoQPS},
	}
	refs, more := check.NodeRefs(old)
	f.Objects = append(f.Objects, refs...)
	f.Message += check.MoreText(more)
	var versions finding.Grouper
	for i, n := range old {
		if i == check.MaxListedObjects {
			break
		}
		versions.Add(check.NodeRef(n.Name), finding.Value("status.nodeInfo.kubeletVersion", n.Status.NodeInfo.KubeletVersion))
	}
	f.AddEvidence(versions.Items()...)
	f.Evidence = append(f.Evidence,
		fmt.Sprintf("kubelet below %s: kubeAPIQPS %d, kubeAPIBurst %d unless configured (%s)", facts.below.MinorString(), d.QPS, d.Burst,
			strings.Join(d.Sources, ", ")),
		fmt.Sprintf("why the configured value is not read: %s (%s)", strings.TrimSpace(cz.Fact), strings.Join(cz.Sources, ", ")))
	if b, ok := findPodIPBroker(ctx.Snapshot, facts); ok {
		f.Severity = finding.Medium
		ref := check.Ref("apps/v1", "DaemonSet", b.ds)
		f.Objects = append(f.Objects, ref)
		f.Message += fmt.Sprintf(" DaemonSet %s/%s runs a credential broker that serves pods by their IP, so new pods on these "+
			"nodes wait for credentials until the kubelet has published their IP.", b.ds.Namespace, b.ds.Name)
		f.AddEvidence(finding.Quote(ref, finding.Value(check.ContainerField("DaemonSet", "", b.container, "image"), b.image)))
		f.Evidence = append(f.Evidence, fmt.Sprintf("%s (%s)", b.fact, strings.Join(b.sources, ", ")))
	} else if !ctx.Complete(snapshot.DaemonSets) {
		ctx.Incomplete(ruleQPSBroker, "DaemonSets were not read completely: a credential broker that serves pods by their IP "+
			"(kube2iam), which would raise the finding to medium, could not be ruled out")
	}
	return f
}
