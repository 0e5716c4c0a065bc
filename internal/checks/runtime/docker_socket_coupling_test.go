package runtime

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
)

func TestChecksRegistered(t *testing.T) { checktest.Registered(t, Checks()) }

func severityOfObject(fs []finding.Finding, kind, ns, name string) (finding.Severity, bool) {
	for _, f := range fs {
		if len(f.Objects) > 0 && f.Objects[0].Kind == kind && f.Objects[0].Namespace == ns && f.Objects[0].Name == name {
			return f.Severity, true
		}
	}
	return 0, false
}

func TestDockerSocketCouplingGap(t *testing.T) {
	s := checktest.Load(t, "docker-socket-coupling/gap.yaml")
	fs, ctx, ok := checktest.Run(t, dockerSocketCouplingCheck(), s)
	if !ok {
		t.Fatal("not evaluated")
	}
	want := []struct {
		kind, ns, name string
		sev            finding.Severity
	}{
		{"Pod", "argo", "hello-world-x7k2p", finding.High},    // Pending on a containerd node
		{"DaemonSet", "logging", "log-agent", finding.Medium}, // targets containerd nodes, type unset
		{"Deployment", "ci", "ci-runner", finding.Medium},     // no pod seen; containerd nodes exist
	}
	for _, w := range want {
		got, found := severityOfObject(fs, w.kind, w.ns, w.name)
		if !found || got != w.sev {
			t.Errorf("%s %s/%s: severity %v (found %v), want %v", w.kind, w.ns, w.name, got, found, w.sev)
		}
	}
	if !checktest.HasObject(fs, "Node", "", "aks-nodepool1-0") {
		t.Error("the stuck pod's node is not named")
	}
	if len(fs) != len(want) {
		t.Errorf("%d findings, want %d: %+v", len(fs), len(want), fs)
	}
	if len(ctx.Notes()) != 0 {
		t.Errorf("notes %v, want none (every node reports its runtime)", ctx.Notes())
	}
}

func TestDockerSocketCouplingDaemonSetTypeSocketIsHigh(t *testing.T) {
	s := checktest.Load(t, "docker-socket-coupling/gap.yaml")
	ds := &s.DaemonSets[0]
	sock := "Socket"
	ds.Spec.Template.Spec.Volumes[0].HostPath.Type = (*corev1.HostPathType)(&sock)
	fs, _, _ := checktest.Run(t, dockerSocketCouplingCheck(), s)
	if got, _ := severityOfObject(fs, "DaemonSet", "logging", "log-agent"); got != finding.High {
		t.Errorf("DaemonSet with a type-Socket mount on containerd nodes: %v, want high", got)
	}
	// A nodeSelector that keeps it on the Docker pool clears it.
	ds.Spec.Template.Spec.NodeSelector = map[string]string{"agentpool": "legacy"}
	fs, _, _ = checktest.Run(t, dockerSocketCouplingCheck(), s)
	if got, found := severityOfObject(fs, "DaemonSet", "logging", "log-agent"); found && got > finding.Medium {
		t.Errorf("DaemonSet pinned to Docker nodes: %v", got)
	}
}

func TestDockerSocketCouplingDockerOnlyIsLow(t *testing.T) {
	s := checktest.Load(t, "docker-socket-coupling/docker-only.yaml")
	fs, _, _ := checktest.Run(t, dockerSocketCouplingCheck(), s)
	if len(fs) != 1 || fs[0].Severity != finding.Low {
		t.Fatalf("findings %+v, want one low", fs)
	}
}

func TestDockerSocketCouplingClean(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "docker-socket-coupling/clean.yaml"))
	fs, ctx, ok := checktest.Run(t, dockerSocketCouplingCheck(), s)
	if !ok || len(fs) != 0 {
		t.Fatalf("evaluated %v, findings %+v", ok, fs)
	}
	if len(ctx.Notes()) != 0 {
		t.Errorf("notes %v, want none: every rule evaluated", ctx.Notes())
	}
}

func TestDockerSocketCouplingUnknownRuntimeIsPartial(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "docker-socket-coupling/clean.yaml"))
	s.Nodes[0].Status.NodeInfo.ContainerRuntimeVersion = ""
	_, ctx, _ := checktest.Run(t, dockerSocketCouplingCheck(), s)
	if _, ok := ctx.Notes()[ruleSocketPods]; !ok {
		t.Error("a node without a runtime version must leave the rule partial")
	}
}

// Before AKS 1.19 every node runs Docker and the Argo pod's type-Socket
// mount works: the check still names it (low), the pre-incident state of
// the AKS case; the same pod left Pending on containerd nodes is high.
func TestDockerSocketCouplingBeforeRuntimeChangeIsLow(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "docker-socket-coupling/aks-118-before.yaml"))
	fs, _, _ := checktest.Run(t, dockerSocketCouplingCheck(), s)
	if got, found := severityOfObject(fs, "Pod", "argo", "hello-world-x7k2p"); !found || got != finding.Low {
		t.Fatalf("Argo pod on Docker-only nodes: %v (found %v), want low; findings %+v", got, found, fs)
	}
	for i := range s.Nodes {
		s.Nodes[i].Status.NodeInfo.ContainerRuntimeVersion = "containerd://1.4.3+azure"
	}
	s.Pods[0].Status.Phase = corev1.PodPending // the mount fails there
	fs, _, _ = checktest.Run(t, dockerSocketCouplingCheck(), s)
	if got, _ := severityOfObject(fs, "Pod", "argo", "hello-world-x7k2p"); got != finding.High {
		t.Errorf("the same pod, Pending once the nodes run containerd: %v, want high", got)
	}
}
