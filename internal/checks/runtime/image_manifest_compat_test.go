package runtime

import (
	"slices"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
)

const (
	schema1Type = "application/vnd.docker.distribution.manifest.v1+prettyjws"
	ociType     = "application/vnd.oci.image.manifest.v1+json"
)

// manifestFacts is what --inspect-images returns for the fixtures' images
// (the CLI test reads them from a real registry).
func manifestFacts() map[string]check.ImageFacts {
	return map[string]check.ImageFacts{
		"registry.example.com/library/busybox:latest": {MediaType: schema1Type},
		"registry.example.com/library/busybox:1.36":   {MediaType: ociType, LayersRead: true},
		"registry.example.com/ops/tools:2.1":          {MediaType: "application/vnd.docker.distribution.manifest.v2+json"},
	}
}

func TestImageManifestCompatGap(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "image-manifest-compat/gap.yaml"))
	fs, _, ok := checktest.RunImages(t, imageManifestCompatCheck(), s, manifestFacts())
	if !ok || len(fs) != 1 {
		t.Fatalf("evaluated %v, findings %+v, want one", ok, fs)
	}
	f := fs[0]
	if f.Severity != finding.High || f.Cases[0] != caseSchema1 {
		t.Errorf("finding %+v, want high citing %s", f, caseSchema1)
	}
	for _, o := range [][3]string{{"Deployment", "ops", "legacy-tools"}, {"Pod", "ops", "debug"}, {"Node", "", "pool-b-1"}} {
		if !checktest.HasObject(fs, o[0], o[1], o[2]) {
			t.Errorf("finding does not name %v: %+v", o, f.Objects)
		}
	}
	if checktest.HasObject(fs, "Node", "", "pool-a-1") {
		t.Error("the containerd 1.7 node is named")
	}
	if !strings.Contains(strings.Join(f.Evidence, "\n"), schema1Type) {
		t.Errorf("evidence lacks the media type: %v", f.Evidence)
	}
}

func TestImageManifestCompatBeforeContainerd2IsMedium(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "image-manifest-compat/gap.yaml"))
	s.Nodes[1].Status.NodeInfo.ContainerRuntimeVersion = "containerd://1.7.27"
	fs, _, _ := checktest.RunImages(t, imageManifestCompatCheck(), s, manifestFacts())
	if len(fs) != 1 || fs[0].Severity != finding.Medium || checktest.HasObject(fs, "Node", "", "pool-b-1") {
		t.Fatalf("findings %+v, want one medium naming no node", fs)
	}
}

func TestImageManifestCompatClean(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "image-manifest-compat/clean.yaml"))
	checktest.QuietImages(t, imageManifestCompatCheck(), s, manifestFacts())
}

// Without --inspect-images, or with an image that could not be read, the
// rule is partial and says what to run.
func TestImageManifestCompatPartial(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "image-manifest-compat/gap.yaml"))
	fs, ctx, _ := checktest.RunImages(t, imageManifestCompatCheck(), s, nil)
	n := ctx.Notes()[ruleSchema1]
	if len(fs) != 0 || !strings.Contains(n.Reason, "--inspect-images") {
		t.Fatalf("findings %+v, note %+v, want none and a note naming --inspect-images", fs, n)
	}
	facts := manifestFacts()
	facts["registry.example.com/ops/tools:2.1"] = check.ImageFacts{Err: "UNAUTHORIZED"}
	clean := checktest.Complete(checktest.Load(t, "image-manifest-compat/clean.yaml"))
	fs, ctx, _ = checktest.RunImages(t, imageManifestCompatCheck(), clean, facts)
	if n := ctx.Notes()[ruleSchema1]; len(fs) != 0 || !strings.Contains(n.Reason, "ops/tools:2.1") {
		t.Fatalf("findings %+v, note %+v, want the unreadable image named", fs, n)
	}
}

// TestImageManifestCompatEvidenceItems: the schema 1 image is quoted as
// each user's container names it (the Deployment's init container, the
// bare pod's container) and the containerd 2 node's runtime version, as the
// fixture writes them. Files carry no manifest media types (only
// --inspect-images reads them from a registry), so the corpus test cannot
// make this check fire: its items are resolved here.
func TestImageManifestCompatEvidenceItems(t *testing.T) {
	const file = "image-manifest-compat/gap.yaml"
	fs, _, _ := checktest.RunImages(t, imageManifestCompatCheck(), checktest.Complete(checktest.Load(t, file)), manifestFacts())
	if len(fs) != 1 {
		t.Fatalf("findings %+v", fs)
	}
	want := []string{
		"Deployment/ops/legacy-tools: spec.template.spec.initContainers[name=wait].image=registry.example.com/library/busybox:latest",
		"Pod/ops/debug: spec.containers[name=sh].image=registry.example.com/library/busybox:latest",
		"Node/pool-b-1: status.nodeInfo.containerRuntimeVersion=containerd://2.0.5",
	}
	var got []string
	for _, it := range fs[0].EvidenceItems {
		got = append(got, it.String())
	}
	if !slices.Equal(got, want) {
		t.Errorf("items\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	if n := checktest.EvidenceTrue(t, fs, file); n != len(want) {
		t.Errorf("%d items resolved, want %d", n, len(want))
	}
	if !strings.Contains(strings.Join(fs[0].Evidence, "\n"), "1 node runs containerd 2.0 or later") {
		t.Errorf("evidence %q", fs[0].Evidence)
	}
}
