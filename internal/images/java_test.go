package images

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check"
)

// A Temurin-style release file, as the JDK build writes it.
const temurinRelease = `IMPLEMENTOR="Eclipse Adoptium"
JAVA_RUNTIME_VERSION="11.0.14.1+1"
JAVA_VERSION="11.0.14.1"
JAVA_VERSION_DATE="2022-02-08"
JVM_VARIANT="Hotspot"
OS_ARCH="x86_64"
`

func TestInspectForAuditJavaAndSchema1(t *testing.T) {
	reg := newRegistry(t)
	javaImg := pushImage(t, reg, "app/java:1", image(t, "amd64",
		layer(t, file("opt/java/openjdk/release", []byte(temurinRelease)),
			file("etc/os-release", []byte("ID=debian\n")),
			file("srv/release", []byte("not a jdk\n"))),
		// An upper layer deletes a second JDK: it must not be reported.
		layer(t, file("usr/lib/jvm/old/release", []byte(`JAVA_VERSION="1.8.0_292"`))),
		layer(t, whiteout("usr/lib/jvm/.wh.old"))))
	plain := pushImage(t, reg, "app/plain:1", image(t, "amd64", layer(t, file("app/release", []byte("v1\n")))))
	old := reg.host + "/library/busybox:schema1"
	putSchema1(t, reg, "library/busybox", "schema1")

	facts := InspectForAudit(context.Background(), []ImageRef{{Reference: javaImg}, {Reference: plain}, {Reference: old}}, testOptions(t))
	j := facts[javaImg]
	want := []check.JavaRuntime{{Home: "/opt/java/openjdk", Version: "11.0.14.1", Date: "2022-02-08", VM: "Hotspot", Implementor: "Eclipse Adoptium"}}
	if j.Err != "" || len(j.Java) != 1 || j.Java[0] != want[0] {
		t.Errorf("java image facts %+v, want Java %+v", j, want)
	}
	if !strings.Contains(j.MediaType, "manifest") || isSchema1Text(j.MediaType) {
		t.Errorf("java image media type %q, want a schema 2 or OCI manifest", j.MediaType)
	}
	if p := facts[plain]; p.Err != "" || len(p.Java) != 0 {
		t.Errorf("plain image facts %+v, want no Java", p)
	}
	s := facts[old]
	if s.Err != "" || s.MediaType != "application/vnd.docker.distribution.manifest.v1+prettyjws" || s.LayersRead {
		t.Errorf("schema 1 image facts %+v, want its media type, no error, layers unread", s)
	}
	if !j.LayersRead {
		t.Errorf("java image facts %+v, want layers read", j)
	}
}

func TestInspectForAuditManifestOnly(t *testing.T) {
	reg := newRegistry(t)
	img := pushImage(t, reg, "app/java:2", image(t, "amd64", layer(t, file("opt/jdk/release", []byte(temurinRelease)))))
	before := reg.blobGets()
	facts := InspectForAudit(context.Background(), []ImageRef{{Reference: img, ManifestOnly: true}}, testOptions(t))
	f := facts[img]
	if f.Err != "" || f.LayersRead || len(f.Java) != 0 || f.MediaType == "" || !strings.HasPrefix(f.Digest, "sha256:") {
		t.Errorf("manifest-only facts %+v, want media type and digest, layers unread", f)
	}
	if got := reg.blobGets() - before; got != 0 {
		t.Errorf("manifest-only inspection fetched %d blobs, want 0", got)
	}
	// Asked for both ways, the image is read in full.
	both := InspectForAudit(context.Background(), []ImageRef{{Reference: img, ManifestOnly: true}, {Reference: img}}, testOptions(t))
	if b := both[img]; !b.LayersRead || len(b.Java) != 1 {
		t.Errorf("facts %+v, want a full inspection", b)
	}
}

func isSchema1Text(mt string) bool { return strings.Contains(mt, "manifest.v1") }

// putSchema1 stores a signed schema 1 manifest the way an old docker push
// did, through the registry's HTTP API (go-containerregistry writes only
// schema 2 and OCI).
func putSchema1(t *testing.T, reg *testRegistry, repo, tag string) {
	t.Helper()
	body := []byte(`{"schemaVersion":1,"name":"` + repo + `","tag":"` + tag + `","architecture":"amd64",` +
		`"fsLayers":[{"blobSum":"sha256:a3ed95caeb02ffe68cdd9fd84406680ae93d633cb16422d00e8a7c22955b46d4"}],` +
		`"history":[{"v1Compatibility":"{\"id\":\"x\"}"}],"signatures":[]}`)
	req, err := http.NewRequest(http.MethodPut, "http://"+reg.host+"/v2/"+repo+"/manifests/"+tag, bytes.NewReader(body))
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
}
