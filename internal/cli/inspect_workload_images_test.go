package cli

import (
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
)

// pushJavaImage pushes an image holding a JDK release file at
// /opt/java/openjdk/release, as Temurin images do.
func pushJavaImage(t *testing.T, host, repo, version, date string) string {
	t.Helper()
	release := []byte("IMPLEMENTOR=\"Eclipse Adoptium\"\nJAVA_VERSION=\"" + version + "\"\nJAVA_VERSION_DATE=\"" + date + "\"\nJVM_VARIANT=\"Hotspot\"\n")
	return pushFileImage(t, host+"/"+repo, "opt/java/openjdk/release", 0o644, release)
}

// pushSchema1 stores a signed Docker schema 1 manifest as an old docker
// push did, through the registry API (go-containerregistry writes only
// schema 2 and OCI).
func pushSchema1(t *testing.T, host, repo, tag string) string {
	t.Helper()
	body := `{"schemaVersion":1,"name":"` + repo + `","tag":"` + tag + `","architecture":"amd64",` +
		`"fsLayers":[{"blobSum":"sha256:a3ed95caeb02ffe68cdd9fd84406680ae93d633cb16422d00e8a7c22955b46d4"}],` +
		`"history":[{"v1Compatibility":"{\"id\":\"x\"}"}],"signatures":[]}`
	req, err := http.NewRequest(http.MethodPut, "http://"+host+"/v2/"+repo+"/manifests/"+tag, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/vnd.docker.distribution.manifest.v1+prettyjws")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("PUT schema 1 manifest: %s", resp.Status)
	}
	return host + "/" + repo + ":" + tag
}

const workloadImagesFixture = `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: node-2204}
  status: {nodeInfo: {osImage: Ubuntu 22.04.5 LTS, kernelVersion: 5.15.0-1079-azure, containerRuntimeVersion: "containerd://2.0.5", kubeletVersion: v1.33.4, operatingSystem: linux, architecture: amd64}}
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: legacy, namespace: ops}
  spec:
    selector: {matchLabels: {app: legacy}}
    template:
      metadata: {labels: {app: legacy}}
      spec:
        containers: [{name: app, image: OLDIMAGE}]
- apiVersion: v1
  kind: Pod
  metadata: {name: orders, namespace: shop}
  spec:
    nodeName: node-2204
    containers: [{name: app, image: JAVAIMAGE}]
`

// TestAuditInspectWorkloadImages: with --inspect-images, the image checks
// read manifests and JDK release files from a registry. A schema 1 image
// and a Java 11.0.14 image on a containerd 2, cgroup v2 node are found; an
// OCI image with Java 17 is not; without the flag both checks are partial.
func TestAuditInspectWorkloadImages(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	old := pushSchema1(t, host, "library/busybox", "old")
	java11 := pushJavaImage(t, host, "shop/orders:3.2", "11.0.14", "2022-01-18")
	java17 := pushJavaImage(t, host, "shop/orders:3.3", "17.0.15", "2025-04-15")
	current := pushJavaImage(t, host, "library/busybox:1.36", "17.0.15", "2025-04-15")

	type report struct {
		Checks []struct {
			ID, Status string
		}
		Findings []struct {
			Check, Severity string
			Objects         []struct{ Kind, Name string }
		}
	}
	audit := func(oldImg, javaImg string, args ...string) report {
		fixture := filepath.Join(t.TempDir(), "cluster.yaml")
		y := strings.NewReplacer("OLDIMAGE", oldImg, "JAVAIMAGE", javaImg).Replace(workloadImagesFixture)
		os.WriteFile(fixture, []byte(y), 0o644)
		_, out, errOut := runKubegap(t, append([]string{"audit", "--from", fixture, "--checks",
			"image-manifest-compat,jvm-cgroup-compat", "-o", "json", "-q"}, args...)...)
		var rep report
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("%v\nstderr: %s", err, errOut)
		}
		return rep
	}

	gap := audit(old, java11, "--inspect-images")
	got := map[string]string{}
	for _, f := range gap.Findings {
		got[f.Check] = f.Severity
	}
	if got["image-manifest-compat"] != "high" || got["jvm-cgroup-compat"] != "high" || len(gap.Findings) != 2 {
		t.Errorf("findings %+v, want one high from each check", gap.Findings)
	}

	clean := audit(current, java17, "--inspect-images")
	if len(clean.Findings) != 0 {
		t.Errorf("clean cluster: findings %+v, want none", clean.Findings)
	}

	without := audit(old, java11)
	if len(without.Findings) != 0 {
		t.Errorf("without --inspect-images: findings %+v", without.Findings)
	}
	if len(without.Checks) != 2 {
		t.Fatalf("checks %+v, want the two image checks", without.Checks)
	}
	for _, c := range without.Checks {
		if c.Status == "pass" {
			t.Errorf("without --inspect-images %s passed; unknown is never a pass", c.ID)
		}
	}
}
