package availability

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/snapshot"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// TestAddonRoleFromBackendIndexAsScan: addonRole over the Services that
// fail-closed webhooks call (webhookServicesByNS) names the same role for
// every workload of every fixture as the old scan of all Services of the
// workload's namespace did, and the fixtures reach the webhook rule.
func TestAddonRoleFromBackendIndexAsScan(t *testing.T) {
	files := []string{"gap.json", "clean.json", "replica-spread/gap.json", "replica-spread/clean.json"}
	webhookRoles := 0
	for _, file := range files {
		s := checktest.Load(t, file)
		backends := failClosedBackends(s)
		all := map[string][]*corev1.Service{}
		for i := range s.Services {
			all[s.Services[i].Namespace] = append(all[s.Services[i].Namespace], &s.Services[i])
		}
		index := webhookServicesByNS(s, backends)
		for _, w := range replicatedWorkloads(s) {
			got, want := addonRole(w, index), oldAddonRole(w, backends, all)
			if got != want {
				t.Errorf("%s: %s: role %q, want %q", file, w, got, want)
			}
			if strings.HasPrefix(want, "backend") {
				webhookRoles++
			}
		}
	}
	if webhookRoles == 0 {
		t.Fatal("no fixture workload is a webhook backend: the comparison does not reach the Service rule")
	}
}

// TestEligibleNodesSelectorOnce: eligibleNodes, which builds the
// nodeSelector's selector once, admits the nodes a per-node selector did.
func TestEligibleNodesSelectorOnce(t *testing.T) {
	s := &snapshot.Snapshot{}
	for i := range 12 {
		n := corev1.Node{}
		n.Name = fmt.Sprintf("n-%02d", i)
		n.Labels = map[string]string{"pool": []string{"a", "b", "c"}[i%3]}
		n.Spec.Unschedulable = i == 4
		s.Nodes = append(s.Nodes, n)
	}
	for _, sel := range []map[string]string{nil, {"pool": "a"}, {"pool": "z"}} {
		spec := &corev1.PodSpec{NodeSelector: sel}
		var want []string
		for i := range s.Nodes {
			n := &s.Nodes[i]
			if !n.Spec.Unschedulable && tolerated(n.Spec.Taints, spec.Tolerations) &&
				labels.SelectorFromSet(spec.NodeSelector).Matches(labels.Set(n.Labels)) && requiredAffinityMatches(spec, n) {
				want = append(want, n.Name)
			}
		}
		if got := eligibleNodes(s, spec); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("selector %v: %v, want %v", sel, got, want)
		}
	}
}

// oldAddonRole is addonRole as it was: every Service of the namespace.
func oldAddonRole(w replicated, webhookBackends map[string][]string, servicesByNS map[string][]*corev1.Service) string {
	if w.meta.Namespace == "kube-system" && w.labels["k8s-app"] == "kube-dns" {
		return "CoreDNS"
	}
	for _, c := range w.spec.Containers {
		name := check.ImageName(c.Image)
		repo, _, _ := check.ImageParts(c.Image)
		switch {
		case name == "coredns" && w.meta.Namespace == "kube-system":
			return "CoreDNS"
		case name == "metrics-server":
			return "metrics-server"
		case ingressImages[name] || strings.HasSuffix(repo, "ingress-nginx/controller"):
			return "ingress controller"
		}
	}
	for _, svc := range servicesByNS[w.meta.Namespace] {
		hooks := webhookBackends[svc.Namespace+"/"+svc.Name]
		if len(hooks) == 0 || len(svc.Spec.Selector) == 0 {
			continue
		}
		if labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(w.labels)) {
			return fmt.Sprintf("backend of fail-closed %s (Service %s/%s)", check.ListText(hooks, 2), svc.Namespace, svc.Name)
		}
	}
	return ""
}
