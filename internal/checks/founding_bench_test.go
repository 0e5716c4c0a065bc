package checks

import (
	"os"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// foundingBenchChecks are the founding checks (now in runtime and
// versions) that no area benchmark times on a snapshot with their gaps.
var foundingBenchChecks = benchIDs("BenchmarkFoundingChecks", "version-skew", "node-os-lifecycle", "host-binary-glibc", "containerd-chained-cni")

// foundingSnapshot is runtimeVersionsRBACSnapshot (5,000 nodes, 100,000
// pods; a tenth of the nodes on CentOS 7, a tenth on Debian 10) served by
// a v1.33.4 API server, with a tenth of the kubelets at v1.29.0, a tenth
// of the nodes on Ubuntu 20.04, and the founding report's azure-cns
// DaemonSet with its /v2/ installer on every node (all labelled linux). No
// NetworkAttachmentDefinition: containerd-chained-cni is timed walking
// the nodes and finding no chained attachment.
func foundingSnapshot(tb testing.TB) *snapshot.Snapshot {
	s := runtimeVersionsRBACSnapshot()
	s.Source.ServerVersion = "v1.33.4"
	for i := range s.Nodes {
		if s.Nodes[i].Labels == nil {
			s.Nodes[i].Labels = map[string]string{}
		}
		s.Nodes[i].Labels["kubernetes.io/os"] = "linux"
		info := &s.Nodes[i].Status.NodeInfo
		switch i % 10 {
		case 5:
			info.KubeletVersion = "v1.29.0"
		case 6:
			info.OSImage, info.KernelVersion = "Ubuntu 20.04.6 LTS", "5.15.0-1064-azure"
		}
	}
	raw, err := os.ReadFile("testdata/azure-founding/azure-cns-v2.yaml")
	if err != nil {
		tb.Fatal(err)
	}
	var ds appsv1.DaemonSet
	if err := yaml.Unmarshal(raw, &ds); err != nil {
		tb.Fatal(err)
	}
	s.DaemonSets = append(s.DaemonSets, ds)
	return s
}

// BenchmarkFoundingChecks times the founding checks above at 5,000 nodes
// and 100,000 pods (each must stay under 0.5 s):
// go test -run NONE -bench FoundingChecks ./internal/checks/
func BenchmarkFoundingChecks(b *testing.B) {
	s := foundingSnapshot(b)
	for _, id := range foundingBenchChecks {
		c, ok := Lookup(id)
		if !ok {
			b.Fatalf("no check %s", id)
		}
		b.Run(id, func(b *testing.B) {
			defer checktest.CPUPerOp(b)()
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				fs, err := c.Run(&check.Context{Snapshot: s})
				if err != nil {
					b.Fatal(err)
				}
				n = len(fs)
			}
			if n == 0 && id != "containerd-chained-cni" {
				b.Fatalf("%s found nothing on a snapshot built with its gap", id)
			}
		})
	}
}
