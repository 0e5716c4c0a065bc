package versions

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
)

var staleNow = func() time.Time { return time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC) }

func TestStaleTokenClientsGap(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "stale-token-clients/gap.yaml"))
	fs, ctx, ok := checktest.Run(t, staleTokenClientsCheckAt(staleNow), s)
	if !ok {
		t.Fatal("not evaluated")
	}
	got := map[string]finding.Finding{}
	for _, f := range fs {
		got[strings.Fields(f.Title)[0]] = f
		if len(f.Cases) != 1 || f.Cases[0] != eks121Case {
			t.Errorf("%s cites %v", f.Title, f.Cases)
		}
	}
	kiali, kiam := got["kiali"], got["kiam"]
	if len(fs) != 2 || kiali.Severity != finding.High || kiam.Severity != finding.Medium {
		t.Fatalf("findings %+v", fs)
	}
	if !checktest.HasObject(fs, "ReplicaSet", "istio-system", "kiali-7f9c") ||
		!checktest.HasObject(fs, "DaemonSet", "kube-system", "kiam-server") ||
		checktest.HasObject(fs, "DaemonSet", "kube-system", "kiam-agent") ||
		checktest.HasObject(fs, "ReplicaSet", "kiali-operator", "kiali-operator-5d") {
		t.Errorf("objects: %v / %v", kiali.Objects, kiam.Objects)
	}
	if !strings.Contains(kiali.Message, "153 days ago") || !strings.Contains(kiam.Message, "EKS's 90-day limit") {
		t.Errorf("messages: %q / %q", kiali.Message, kiam.Message)
	}
	if len(ctx.Notes()) != 0 {
		t.Errorf("notes: %v", ctx.Notes())
	}
}

// Off EKS the limit is an API server flag kubegap does not read: low.
func TestStaleTokenClientsOffEKSIsLow(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "stale-token-clients/gap.yaml"))
	s.Nodes = nil
	fs, _, _ := checktest.Run(t, staleTokenClientsCheckAt(staleNow), s)
	if len(fs) != 2 {
		t.Fatalf("findings %+v", fs)
	}
	for _, f := range fs {
		if f.Severity != finding.Low {
			t.Errorf("%s: %v off EKS", f.Title, f.Severity)
		}
	}
}

func TestStaleTokenClientsClean(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "stale-token-clients/clean.yaml"))
	checktest.Quiet(t, staleTokenClientsCheckAt(staleNow), s)
}

// A tag that is not a version cannot be judged: partial, never pass.
func TestStaleTokenClientsUntaggedIsPartial(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "stale-token-clients/untagged.yaml"))
	fs, ctx, _ := checktest.Run(t, staleTokenClientsCheckAt(staleNow), s)
	if len(fs) != 0 {
		t.Errorf("findings %v", fs)
	}
	if n, ok := ctx.Notes()[staleTokenRule]; !ok || !strings.Contains(n.Reason, "latest") {
		t.Errorf("notes %v", ctx.Notes())
	}
}

// On EKS a pod whose start time is unknown is still medium, never high.
func TestStaleTokenClientsUnknownAgeOnEKS(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "stale-token-clients/gap.yaml"))
	for i := range s.Pods {
		s.Pods[i].CreationTimestamp = metav1.Time{}
	}
	fs, _, _ := checktest.Run(t, staleTokenClientsCheckAt(staleNow), s)
	for _, f := range fs {
		if f.Severity != finding.Medium {
			t.Errorf("%s: %v with no start time", f.Title, f.Severity)
		}
	}
	if len(fs) != 2 {
		t.Errorf("findings %+v", fs)
	}
}
