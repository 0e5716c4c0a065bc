// Package placement_test runs the placement checks (selector-matches-no-node,
// critical-addon-colocation) through the kubegap binary against a real
// kube-apiserver, as the read-only user: real Node labels and taints, real
// Deployments and Pods with their status, real RBAC, and the API server's
// audit log to show nothing but reads went out.
package placement_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/test/e2e/testcluster"
)

func TestMain(m *testing.M) { os.Exit(testcluster.Main(m)) }

type finding struct {
	Check, Severity, Title string
	Objects                []struct{ Kind, Namespace, Name string }
	Cases                  []string
}

type report struct {
	Checks []struct {
		ID, Status, Reason string
	}
	Findings []finding
}

func (f finding) names(kind, ns, name string) bool {
	for _, o := range f.Objects {
		if o.Kind == kind && o.Namespace == ns && o.Name == name {
			return true
		}
	}
	return false
}

func TestPlacementChecksOnTheTestBed(t *testing.T) {
	c := testcluster.Get(t)
	c.LoadYAML(t, "testdata/nodes.yaml")
	ns := c.Namespace(t)
	c.LoadYAMLInto(t, ns, "testdata/workloads.yaml")

	mark := c.Mark(t)
	cmd := exec.Command(testcluster.Kubegap(t), "audit", "--kubeconfig", c.Kubeconfig(t, testcluster.UserReader),
		"--checks", "selector-matches-no-node,critical-addon-colocation", "-o", "json")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("exit %v, want 1 (high findings)\nstderr: %s", err, errOut.String())
	}
	var rep report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("decoding the report: %v", err)
	}

	var master, coloc bool
	for _, f := range rep.Findings {
		switch {
		case f.Check == "selector-matches-no-node" && f.names("Deployment", ns, "csi-controller"):
			master = f.Severity == "high" && strings.Contains(f.Title, "node-role.kubernetes.io/master")
		case f.Check == "critical-addon-colocation" && f.names("Deployment", ns, "metrics-server"):
			coloc = f.Severity == "high" && f.names("Node", "", "e2e-worker-a")
		case f.names("Deployment", ns, "web"):
			t.Errorf("the web Deployment is fine, but %s: %s", f.Check, f.Title)
		}
	}
	if !master {
		t.Errorf("no high finding on the master-label selector of csi-controller:\n%s", out.String())
	}
	if !coloc {
		t.Errorf("no high finding naming node e2e-worker-a for metrics-server:\n%s", out.String())
	}
	for _, ch := range rep.Checks {
		// A live read as the reader is complete: both checks judge every rule.
		if ch.Status != "fail" {
			t.Errorf("check %s is %s (%s), want fail", ch.ID, ch.Status, ch.Reason)
		}
	}

	reqs := c.RequestsSince(t, mark, testcluster.UserReader)
	if len(reqs) == 0 {
		t.Fatal("the audit log holds no request from the reader")
	}
	for _, q := range reqs {
		switch q.Verb {
		case "get", "list", "watch":
		default:
			t.Errorf("the audit sent %s %s", q.Verb, q.RequestURI)
		}
		if q.Resource == "secrets" {
			t.Errorf("the audit read secrets: %s", q.RequestURI)
		}
	}
}

// TestSchedulerVerdictAsNamespaceViewer: a user who may read one
// namespace and no Node still learns, from the scheduler's verdict the
// live read keeps on the Pending pod, that the collector's template
// matches no node; the pod reaches its Deployment by its pod-template-hash
// although no ReplicaSet exists.
func TestSchedulerVerdictAsNamespaceViewer(t *testing.T) {
	c := testcluster.Get(t)
	c.LoadYAMLInto(t, testcluster.ViewerNamespace, "testdata/unschedulable.yaml")
	cmd := exec.Command(testcluster.Kubegap(t), "audit", "--kubeconfig", c.Kubeconfig(t, testcluster.UserNSViewer),
		"-n", testcluster.ViewerNamespace, "--checks", "selector-matches-no-node", "-o", "json")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("exit %v, want 1 (a high finding)\nstderr: %s\n%s", err, errOut.String(), out.String())
	}
	var rep struct {
		Findings []struct {
			finding
			Evidence []string
		}
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("decoding the report: %v", err)
	}
	found := false
	for _, f := range rep.Findings {
		ev := strings.Join(f.Evidence, "\n")
		if f.Check == "selector-matches-no-node" && f.names("Deployment", testcluster.ViewerNamespace, "collector") && f.Severity == "high" &&
			strings.Contains(ev, "0/7 nodes are available: 7 node(s) didn't match Pod's node affinity/selector") &&
			strings.Contains(ev, "ReplicaSet collector-6b7f9c8d5 is not in the input") {
			found = true
		}
	}
	if !found {
		t.Errorf("no high finding on Deployment collector from the scheduler's verdict:\n%s", out.String())
	}
}
