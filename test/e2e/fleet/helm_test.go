package fleet_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/test/e2e/testcluster"
)

const chart = "../../../deploy/helm/kubegap"

// helmEnv names the helm binary (hack/helm-bin.sh builds it; hack/test.sh
// sets it). With it set a missing helm fails the test; without it, a plain
// go test skips the chart, as internal/checks/realmanifests does.
const helmEnv = "KUBEGAP_HELM"

// The ServiceMonitor CRD comes from prometheus-operator's own module, the
// version the real-manifests corpus pins, downloaded through the Go module
// proxy into the module cache: nothing of it is committed here.
const (
	promOperatorModule  = "github.com/prometheus-operator/prometheus-operator"
	promOperatorVersion = "v0.85.0"
	serviceMonitorCRD   = "example/prometheus-operator-crd/monitoring.coreos.com_servicemonitors.yaml"
)

func helmBin(t *testing.T) string {
	t.Helper()
	p := os.Getenv(helmEnv)
	if p == "" {
		t.Skipf("%s is not set (hack/test.sh sets it to hack/helm-bin.sh's helm)", helmEnv)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s=%s: %v", helmEnv, p, err)
	}
	return p
}

func run(t *testing.T, name string, args ...string) []byte {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s%s", filepath.Base(name), strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.Bytes()
}

// everything turns on the chart's optional parts and sets each value the
// templates read, so that one rendering uses them all.
var everything = []string{
	"--set", "exporter.enabled=true",
	"--set", "exporter.serviceMonitor.enabled=true",
	"--set", "exporter.serviceMonitor.interval=60s",
	"--set", "audit.checks={host-binary-glibc,version-skew}",
	"--set", "audit.skipChecks={image-pull-always}",
	"--set", "audit.targetVersion=1.35",
	"--set", "audit.timeZone=Etc/UTC",
	"--set", "severityThreshold=medium",
	"--set", "publish.format=openreports",
	"--set", "publish.credentialsPath=/var/run/secrets/elsewhere",
	"--set", "nodeSelector.kubernetes\\.io/os=linux",
	"--set", "tolerations[0].key=CriticalAddonsOnly",
	"--set", "tolerations[0].operator=Exists",
	"--set", "image.tag=v0.1.0",
	"--set", "flowControl.enabled=true",
}

// TestHelmChart lints and renders the chart, reads the rendered CronJob
// and RBAC back as their API types, applies the rendering to the test bed
// as a server-side dry run (the ServiceMonitor CRD installed from
// prometheus-operator's module), and audits it with kubegap: nothing at
// medium or above.
func TestHelmChart(t *testing.T) {
	helm := helmBin(t)
	run(t, helm, "lint", "--strict", chart)
	run(t, helm, append([]string{"lint", "--strict", chart}, everything...)...)

	c := testcluster.Get(t)
	ns := c.Namespace(t)
	dir := t.TempDir()
	defaults := filepath.Join(dir, "defaults.yaml")
	all := filepath.Join(dir, "everything.yaml")
	noPublish := filepath.Join(dir, "no-publish.yaml")
	for file, extra := range map[string][]string{defaults: nil, all: everything, noPublish: {"--set", "publish.enabled=false"}} {
		out := run(t, helm, append([]string{"template", "kg", chart, "--namespace", ns}, extra...)...)
		if err := os.WriteFile(file, out, 0o600); err != nil {
			t.Fatal(err)
		}
	}

	kinds := func(file string) []string {
		var ks []string
		for _, o := range testcluster.ReadYAML(t, file) {
			ks = append(ks, o.GetKind()+"/"+o.GetName())
		}
		slices.Sort(ks)
		return ks
	}
	wantDefaults := []string{"ClusterRole/kg-kubegap-publisher", "ClusterRole/kg-kubegap-reader",
		"ClusterRoleBinding/kg-kubegap-publisher", "ClusterRoleBinding/kg-kubegap-reader",
		"ConfigMap/kg-kubegap-publisher-kubeconfig", "CronJob/kg-kubegap", "Secret/kg-kubegap-publisher-token",
		"ServiceAccount/kg-kubegap-audit", "ServiceAccount/kg-kubegap-publisher"}
	if got := kinds(defaults); !slices.Equal(got, wantDefaults) {
		t.Errorf("default rendering: %v, want %v", got, wantDefaults)
	}
	wantAll := slices.Sorted(slices.Values(append(slices.Clone(wantDefaults),
		"Deployment/kg-kubegap-exporter", "FlowSchema/kg-kubegap", "PriorityLevelConfiguration/kg-kubegap",
		"Service/kg-kubegap-exporter", "ServiceMonitor/kg-kubegap-exporter")))
	if got := kinds(all); !slices.Equal(got, wantAll) {
		t.Errorf("rendering with everything on: %v, want %v", got, wantAll)
	}
	wantNoPublish := []string{"ClusterRole/kg-kubegap-reader", "ClusterRoleBinding/kg-kubegap-reader", "CronJob/kg-kubegap", "ServiceAccount/kg-kubegap-audit"}
	if got := kinds(noPublish); !slices.Equal(got, wantNoPublish) {
		t.Errorf("rendering without publish: %v, want %v", got, wantNoPublish)
	}

	checkCronJob(t, typed[batchv1.CronJob](t, defaults, "CronJob")[0], "/var/run/secrets/kubegap-publisher", "policyreport", "high", nil)
	checkCronJob(t, typed[batchv1.CronJob](t, all, "CronJob")[0], "/var/run/secrets/elsewhere", "openreports", "medium",
		[]string{"--checks=host-binary-glibc,version-skew", "--skip-checks=image-pull-always", "--target-version=1.35"})
	checkRBAC(t, typed[rbacv1.ClusterRole](t, all, "ClusterRole"))

	// The rendered chart applies to a real API server: every field is
	// one the API knows, every reference well formed.
	c.LoadYAML(t, serviceMonitorCRDPath(t))
	for _, file := range []string{defaults, all, noPublish} {
		out := run(t, c.Kubectl(), "--kubeconfig", c.Kubeconfig(t, testcluster.UserAdmin), "apply", "--server-side", "--dry-run=server",
			"--field-manager=helm-chart-test", "-f", file)
		if n := strings.Count(string(out), "serverside-applied (server dry run)"); n != len(kinds(file)) {
			t.Errorf("%s: %d objects dry-run applied, want %d:\n%s", filepath.Base(file), n, len(kinds(file)), out)
		}
	}

	// kubegap's own audit of what the chart installs: nothing at medium or
	// above.
	for _, file := range []string{defaults, all, noPublish} {
		cmd := exec.Command(testcluster.Kubegap(t), "audit", "--from", file, "-o", "json", "--fail-on", "medium", "-q")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var rep struct {
			Findings []struct {
				Check, Title string
				Severity     finding.Severity
			}
		}
		if jerr := json.Unmarshal(stdout.Bytes(), &rep); jerr != nil {
			t.Fatalf("audit --from %s: %v (%v) %s", filepath.Base(file), jerr, err, stderr.String())
		}
		for _, f := range rep.Findings {
			if f.Severity >= finding.Medium {
				t.Errorf("audit --from %s: %s %s: %s", filepath.Base(file), f.Severity, f.Check, f.Title)
			}
		}
		if err != nil {
			t.Errorf("audit --from %s --fail-on medium: %v %s", filepath.Base(file), err, stderr.String())
		}
	}
}

// checkCronJob: the pod runs as the audit ServiceAccount; the audit init
// container writes the JSON report to the shared emptyDir; the publish
// container reads it with the publisher's credentials, which no other
// container mounts.
func checkCronJob(t *testing.T, cj *batchv1.CronJob, credentials, format, failOn string, selection []string) {
	t.Helper()
	pod := cj.Spec.JobTemplate.Spec.Template.Spec
	if pod.ServiceAccountName != "kg-kubegap-audit" {
		t.Errorf("the pod runs as %q, want the audit ServiceAccount", pod.ServiceAccountName)
	}
	if len(pod.InitContainers) != 1 || len(pod.Containers) != 1 {
		t.Fatalf("init containers %d, containers %d; want one of each", len(pod.InitContainers), len(pod.Containers))
	}
	audit, publish := pod.InitContainers[0], pod.Containers[0]
	wantAudit := append([]string{"audit", "-o", "json", "--output-file", "/report/report.json", "--fail-on", "none", "-q"}, selection...)
	for _, a := range wantAudit {
		if !slices.Contains(audit.Args, a) {
			t.Errorf("audit args %v lack %q", audit.Args, a)
		}
	}
	wantPublish := []string{"publish", "--from", "/report/report.json", "--format", format, "--fail-on", failOn, "--kubeconfig", "/etc/kubegap-publisher/kubeconfig"}
	if !slices.Equal(publish.Args, wantPublish) {
		t.Errorf("publish args %v, want %v", publish.Args, wantPublish)
	}
	mounts := func(c corev1.Container) map[string]string {
		m := map[string]string{}
		for _, vm := range c.VolumeMounts {
			m[vm.Name] = vm.MountPath
		}
		return m
	}
	if m := mounts(audit); m["report"] != "/report" || len(m) != 1 {
		t.Errorf("audit container mounts %v, want the report directory alone", m)
	}
	if m := mounts(publish); m["publisher-token"] != credentials || m["report"] != "/report" {
		t.Errorf("publish container mounts %v, want the token at %s", m, credentials)
	}
	for _, v := range pod.Volumes {
		if v.Name == "publisher-token" && (v.Secret == nil || v.Secret.SecretName != "kg-kubegap-publisher-token") {
			t.Errorf("publisher-token volume %+v", v)
		}
	}
}

// checkRBAC: the reader only reads; the publisher only touches the four
// report resources.
func checkRBAC(t *testing.T, roles []*rbacv1.ClusterRole) {
	t.Helper()
	reports := []string{"clusterpolicyreports", "clusterreports", "policyreports", "reports"}
	for _, r := range roles {
		for _, rule := range r.Rules {
			switch r.Name {
			case "kg-kubegap-reader":
				for _, v := range rule.Verbs {
					if v != "get" && v != "list" && v != "watch" {
						t.Errorf("reader rule %v grants %s", rule, v)
					}
				}
				if slices.Contains(rule.Resources, "secrets") {
					t.Errorf("reader rule %v reads Secrets", rule)
				}
			case "kg-kubegap-publisher":
				for _, res := range rule.Resources {
					if !slices.Contains(reports, res) {
						t.Errorf("publisher rule %v grants %s", rule, res)
					}
				}
			}
		}
	}
}

// typed reads the objects of one kind from a rendering as their API type.
func typed[T any](t *testing.T, file, kind string) []*T {
	t.Helper()
	var out []*T
	for _, o := range testcluster.ReadYAML(t, file) {
		if o.GetKind() != kind {
			continue
		}
		v := new(T)
		if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(o.Object, v, true); err != nil {
			t.Fatalf("%s %s: %v", kind, o.GetName(), err)
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		t.Fatalf("%s: no %s", file, kind)
	}
	return out
}

// serviceMonitorCRDPath downloads prometheus-operator's module (a no-op
// when the module cache holds it) and returns its ServiceMonitor CRD.
func serviceMonitorCRDPath(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go is needed to download %s: %v", promOperatorModule, err)
	}
	cmd := exec.Command(goBin, "mod", "download", "-json", promOperatorModule+"@"+promOperatorVersion)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var dl struct{ Dir, Error string }
	if jerr := json.Unmarshal(out, &dl); jerr != nil || dl.Dir == "" {
		t.Fatalf("go mod download %s@%s: %v %s %s", promOperatorModule, promOperatorVersion, err, dl.Error, stderr.String())
	}
	return filepath.Join(dl.Dir, filepath.FromSlash(serviceMonitorCRD))
}
