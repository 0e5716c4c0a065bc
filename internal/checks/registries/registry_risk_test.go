package registries

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

func TestRegistered(t *testing.T) { checktest.Registered(t, Checks()) }

func TestRegistryRiskRetired(t *testing.T) {
	fs, _, ok := checktest.Run(t, registryRiskCheck(), checktest.Load(t, "gap.yaml"))
	if !ok {
		t.Fatal("not evaluated")
	}
	want := map[string]finding.Severity{
		"k8s-gcr-io-redirect-and-freeze-2023":         finding.Medium,
		"bitnami-public-catalog-moved-to-legacy-2025": finding.High,
		"google-container-registry-shutdown-2025":     finding.Info,
	}
	got := map[string]finding.Severity{}
	for _, f := range fs {
		if f.Severity > got[f.Cases[0]] {
			got[f.Cases[0]] = f.Severity
		}
	}
	for c, sev := range want {
		if got[c] != sev {
			t.Errorf("case %s: severity %v, want %v (findings %+v)", c, got[c], sev, fs)
		}
	}
	for _, o := range [][3]string{{"Deployment", "kube-system", "metrics-server"}, {"StatefulSet", "shop", "redis"},
		{"Deployment", "shop", "pg"}, {"CronJob", "shop", "report"}} {
		if !checktest.HasObject(fs, o[0], o[1], o[2]) {
			t.Errorf("no finding names %v", o)
		}
	}
	for _, f := range fs {
		for _, e := range f.Evidence {
			if contains(e, "${PG_EXPORTER_IMAGE}") {
				t.Errorf("templated image judged: %s", e)
			}
		}
	}
}

func TestRegistryRiskHealthyPasses(t *testing.T) {
	c := registryRiskCheck()
	fs, ctx, ok := checktest.Run(t, c, checktest.Complete(checktest.Load(t, "healthy.yaml")))
	if !ok || len(fs) != 0 {
		t.Fatalf("evaluated %v, findings %+v", ok, fs)
	}
	// Too few pods to judge the fleet, but the read is complete: nothing to say.
	if n := ctx.Notes(); len(n) != 0 {
		t.Errorf("notes %v on complete input", n)
	}
}

func TestRegistryRiskSinglePoint(t *testing.T) {
	fs, _, _ := checktest.Run(t, registryRiskCheck(), checktest.Load(t, "fleet.yaml"))
	if len(fs) != 1 || fs[0].Cases[0] != "quay-io-outages-2020-2023" || fs[0].Severity != finding.Medium {
		t.Fatalf("findings %+v, want one medium quay.io finding", fs)
	}
	if !checktest.HasObject(fs, "DaemonSet", "ops", "node-agent") || !checktest.HasObject(fs, "Deployment", "shop", "api") {
		t.Errorf("objects %v", fs[0].Objects)
	}
	// Without the DaemonSet and the HPA nothing pulls on every start at
	// scale: the share alone is not reported.
	s := checktest.Load(t, "fleet.yaml")
	s.DaemonSets, s.HorizontalPodAutoscalers = nil, nil
	if fs, _, _ := checktest.Run(t, registryRiskCheck(), s); len(fs) != 0 {
		t.Errorf("findings %+v without pull exposure", fs)
	}
}

func TestDockerHubRepo(t *testing.T) {
	for img, want := range map[string]string{
		"bitnami/redis:7":                    "bitnami/redis",
		"docker.io/bitnami/redis:7":          "bitnami/redis",
		"index.docker.io/bitnamilegacy/pg:1": "bitnamilegacy/pg",
		"nginx":                              "library/nginx",
		"quay.io/bitnami/redis:7":            "",
	} {
		if got := dockerHubRepo(img); got != want {
			t.Errorf("dockerHubRepo(%q) = %q, want %q", img, got, want)
		}
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// The same fleet on registry.k8s.io (quay.io rewritten): only the data row
// for registry.k8s.io's regional outages makes the rule name that host.
func TestRegistryRiskSinglePointRegistryK8sIO(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "fleet.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "fleet.yaml")
	if err := os.WriteFile(p, bytes.ReplaceAll(b, []byte("quay.io/"), []byte("registry.k8s.io/")), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := snapshot.LoadPaths([]string{p})
	if err != nil {
		t.Fatal(err)
	}
	fs, _, _ := checktest.Run(t, registryRiskCheck(), s)
	if len(fs) != 1 || fs[0].Cases[0] != "registry-k8s-io-regional-backend-outages-and-blocks-2022-2024" ||
		fs[0].Severity != finding.Medium || !strings.Contains(fs[0].Title, "registry.k8s.io") {
		t.Fatalf("findings %+v, want one medium registry.k8s.io finding", fs)
	}
}

// The ghcr.io and cr.l5d.io rows: the quay.io fleet moved to each host
// (every image, the exposed DaemonSet's and Deployment's included) is
// reported as that host's single point, citing the outage case.
func TestRegistryRiskSinglePointProjectRegistries(t *testing.T) {
	fleet, err := os.ReadFile(filepath.Join("testdata", "fleet.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{"ghcr.io", "cr.l5d.io"} {
		path := filepath.Join(t.TempDir(), "fleet.yaml")
		if err := os.WriteFile(path, []byte(strings.ReplaceAll(string(fleet), "quay.io/", host+"/")), 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := snapshot.LoadPaths([]string{path})
		if err != nil {
			t.Fatal(err)
		}
		fs, _, _ := checktest.Run(t, registryRiskCheck(), s)
		if len(fs) != 1 || fs[0].Cases[0] != "project-registries-ghcr-cr-l5d-io-outages-2022-2023" || !strings.Contains(fs[0].Title, host) {
			t.Errorf("%s: findings %+v, want one finding on %s citing the ghcr.io/cr.l5d.io case", host, fs, host)
		}
	}
}

// Before registry.k8s.io blocked new Hetzner nodes and stalled a kubeadm
// upgrade: the CSI node DaemonSet and the static kube-apiserver pod pull
// from it whatever their pull policy, one low finding naming both; the
// same cluster with its images mirrored is quiet.
func TestRegistryRiskNodeStartPulls(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "node-start/hetzner-kubeadm-before.yaml"))
	fs, _, _ := checktest.Run(t, registryRiskCheck(), s)
	if len(fs) != 1 || fs[0].Severity != finding.Low || fs[0].Cases[0] != "registry-k8s-io-regional-backend-outages-and-blocks-2022-2024" ||
		!checktest.HasObject(fs, "DaemonSet", "kube-system", "hcloud-csi-node") || !checktest.HasObject(fs, "Pod", "kube-system", "kube-apiserver-cp-1") {
		t.Fatalf("findings %+v, want one low naming the DaemonSet and the static pod", fs)
	}
	b, err := os.ReadFile(filepath.Join("testdata", "node-start", "hetzner-kubeadm-before.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "mirrored.yaml")
	if err := os.WriteFile(p, bytes.ReplaceAll(b, []byte("registry.k8s.io/"), []byte("mirror.example.com/k8s/")), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := snapshot.LoadPaths([]string{p})
	if err != nil {
		t.Fatal(err)
	}
	checktest.Quiet(t, registryRiskCheck(), checktest.Complete(m))
}

// TestRegistryRiskChainguard: cgr.dev/chainguard images on version tags
// without a digest are high, citing the Chainguard case; latest,
// latest-dev, no tag, a digest and another cgr.dev organization are not
// flagged.
func TestRegistryRiskChainguard(t *testing.T) {
	c := registryRiskCheck()
	const id = "chainguard-free-tier-latest-only-2023"
	if r, ok := c.Relation(id); !ok || r != check.RelPrevents {
		t.Fatalf("the check links %s as %q (cited %v), want prevents", id, r, ok)
	}
	fs, _, _ := checktest.Run(t, c, checktest.Load(t, "chainguard/before-2023-08-16.yaml"))
	if len(fs) != 1 || fs[0].Cases[0] != id || fs[0].Severity != finding.High {
		t.Fatalf("findings %+v, want one high finding citing %s", fs, id)
	}
	for _, o := range [][3]string{{"Deployment", "selks", "nginx"}, {"StatefulSet", "shop", "db"}} {
		if !checktest.HasObject(fs, o[0], o[1], o[2]) {
			t.Errorf("no finding names %v", o)
		}
	}
	if checktest.HasObject(fs, "Deployment", "shop", "reports-db") {
		t.Errorf("postgres:latest flagged: %v", fs[0].Objects)
	}
	checktest.Quiet(t, c, checktest.Complete(checktest.Load(t, "chainguard/still-served.yaml")))
}

func TestRepoNamespace(t *testing.T) {
	for img, want := range map[string]string{
		"cgr.dev/chainguard/postgres:15":     "chainguard",
		"cgr.dev/acme.example/redis:7":       "acme.example",
		"bitnami/redis:7":                    "bitnami",
		"nginx":                              "library",
		"quay.io/tool:1":                     "",
		"localhost:5000/chainguard/nginx:1":  "chainguard",
		"cgr.dev/chainguard/go@sha256:abc12": "chainguard",
	} {
		if got := repoNamespace(img); got != want {
			t.Errorf("repoNamespace(%q) = %q, want %q", img, got, want)
		}
	}
}
