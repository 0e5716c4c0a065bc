package cli

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"text/template"

	"sigs.k8s.io/yaml"
)

type goreleaser struct {
	Builds []struct {
		Main, Binary string
		Env          []string
		Ldflags      []string
		Goos, Goarch []string
	}
	Archives []struct {
		Formats         []string
		NameTemplate    string `json:"name_template"`
		FormatOverrides []struct {
			Goos    string
			Formats []string
		} `json:"format_overrides"`
	}
}

func readGoreleaser(t *testing.T) goreleaser {
	t.Helper()
	b, err := os.ReadFile("../../.goreleaser.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var g goreleaser
	if err := yaml.UnmarshalStrict(b, &g); err != nil {
		// Strict would reject keys this struct leaves out; read loosely.
		if err := yaml.Unmarshal(b, &g); err != nil {
			t.Fatal(err)
		}
	}
	return g
}

// TestGoreleaserBuildsStaticBinariesEverywhere: linux, darwin and windows
// on amd64 and arm64, with cgo off (static), from cmd/kubegap.
func TestGoreleaserBuildsStaticBinariesEverywhere(t *testing.T) {
	g := readGoreleaser(t)
	if len(g.Builds) != 1 {
		t.Fatalf("%d builds", len(g.Builds))
	}
	b := g.Builds[0]
	if b.Main != "./cmd/kubegap" || b.Binary != "kubegap" || !slices.Contains(b.Env, "CGO_ENABLED=0") {
		t.Errorf("build %+v", b)
	}
	for _, os := range []string{"linux", "darwin", "windows"} {
		if !slices.Contains(b.Goos, os) {
			t.Errorf("no %s build", os)
		}
	}
	for _, arch := range []string{"amd64", "arm64"} {
		if !slices.Contains(b.Goarch, arch) {
			t.Errorf("no %s build", arch)
		}
	}
	if len(g.Archives) != 1 || g.Archives[0].NameTemplate != "kubegap_{{ .Os }}_{{ .Arch }}" {
		t.Errorf("archives %+v", g.Archives)
	}
}

type krewPlugin struct {
	APIVersion string
	Kind       string
	Metadata   struct{ Name string }
	Spec       struct {
		Version          string
		Homepage         string
		ShortDescription string `json:"shortDescription"`
		Description      string
		Caveats          string
		Platforms        []struct {
			Selector struct{ MatchLabels map[string]string } `json:"selector"`
			URI      string
			Sha256   string
			Bin      string
		}
	}
}

// TestKrewManifest renders .krew.yaml as krew-release-bot does and checks
// it structurally: a Plugin named gap, one platform per release archive,
// each pointing at that archive with a sha256 and the right binary name.
func TestKrewManifest(t *testing.T) {
	text, err := os.ReadFile("../../.krew.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const tag = "v1.2.3"
	funcs := template.FuncMap{"addURIAndSha": func(uri, tag string) string {
		uri = strings.ReplaceAll(uri, "{{ .TagName }}", tag)
		sum := sha256.Sum256([]byte(uri)) // the bot hashes the archive; any 64 hex digits do here
		return fmt.Sprintf("uri: %s\n    sha256: %s", uri, hex.EncodeToString(sum[:]))
	}}
	tmpl, err := template.New("krew").Funcs(funcs).Parse(string(text))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := tmpl.Execute(&out, map[string]string{"TagName": tag}); err != nil {
		t.Fatal(err)
	}
	var p krewPlugin
	if err := yaml.UnmarshalStrict(out.Bytes(), &p); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if p.APIVersion != "krew.googlecontainertools.github.com/v1alpha2" || p.Kind != "Plugin" || p.Metadata.Name != "gap" ||
		p.Spec.Version != tag || p.Spec.ShortDescription == "" || p.Spec.Description == "" || p.Spec.Homepage == "" {
		t.Errorf("plugin header %+v", p)
	}
	g := readGoreleaser(t)
	want := map[string]bool{}
	for _, os := range g.Builds[0].Goos {
		for _, arch := range g.Builds[0].Goarch {
			want[os+"/"+arch] = true
		}
	}
	hexSum := regexp.MustCompile(`^[0-9a-f]{64}$`)
	for _, pl := range p.Spec.Platforms {
		os, arch := pl.Selector.MatchLabels["os"], pl.Selector.MatchLabels["arch"]
		key := os + "/" + arch
		if !want[key] {
			t.Errorf("platform %s: not built, or listed twice", key)
		}
		delete(want, key)
		ext, bin := ".tar.gz", "kubegap"
		if os == "windows" {
			ext, bin = ".zip", "kubegap.exe"
		}
		archive := fmt.Sprintf("https://github.com/kubegap/kubegap/releases/download/%s/kubegap_%s_%s%s", tag, os, arch, ext)
		if pl.URI != archive || !hexSum.MatchString(pl.Sha256) || pl.Bin != bin {
			t.Errorf("platform %s: uri %s (want %s), sha256 %q, bin %s", key, pl.URI, archive, pl.Sha256, pl.Bin)
		}
	}
	for key := range want {
		t.Errorf("no krew platform for the %s build", key)
	}
}

// TestReleaseImageServesTheCronJob: the image deploy/cronjob.yaml runs is
// one .goreleaser.yaml builds, from the Dockerfile, for the node
// architectures, as the user the CronJob requires.
func TestReleaseImageServesTheCronJob(t *testing.T) {
	b, err := os.ReadFile("../../.goreleaser.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		DockersV2 []struct {
			Images, Tags, Platforms []string
			Dockerfile              string
		} `json:"dockers_v2"`
	}
	if err := yaml.Unmarshal(b, &g); err != nil || len(g.DockersV2) != 1 {
		t.Fatalf("dockers_v2: %v %+v", err, g)
	}
	img := g.DockersV2[0]
	cron, err := os.ReadFile("../../deploy/cronjob.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s+image: (\S+):(\S+)$`).FindStringSubmatch(string(cron))
	if m == nil || !slices.Contains(img.Images, m[1]) || !slices.Contains(img.Tags, m[2]) {
		t.Errorf("the CronJob runs %v, the release builds %v tagged %v", m, img.Images, img.Tags)
	}
	for _, p := range []string{"linux/amd64", "linux/arm64"} {
		if !slices.Contains(img.Platforms, p) {
			t.Errorf("no %s image", p)
		}
	}
	docker, err := os.ReadFile("../../" + img.Dockerfile)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"COPY ${TARGETPLATFORM}/kubegap /kubegap", "USER 65532:65532", `ENTRYPOINT ["/kubegap"]`} {
		if !strings.Contains(string(docker), want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
	if !strings.Contains(string(cron), "runAsUser: 65532") {
		t.Error("the CronJob does not run as the image's user")
	}
}
