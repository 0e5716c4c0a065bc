package runtime

// host-binary-glibc's facts (data/host-binaries.yaml) and what they say of
// a DaemonSet: the host directories that hold binaries, the containers
// that write into them, and the glibc an installed image needs. The check
// itself, with its one rule, is in host_binary_glibc.go.

import (
	_ "embed"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/nodeos"
)

// hostBinaryFacts is data/host-binaries.yaml.
type hostBinaryFacts struct {
	HostBinaryPaths []string `json:"hostBinaryPaths"`
	// NotHostBinaryPaths are subtrees of those that hold no userland
	// binaries (kernel modules).
	NotHostBinaryPaths []string `json:"notHostBinaryPaths"`
	// Sources back hostBinaryPaths (each image has its own).
	Sources []string       `json:"sources"`
	Images  []imageLinkage `json:"images"`
}

// imageLinkage is what is known about the binaries one image repository
// installs on hosts.
type imageLinkage struct {
	Repository  string   `json:"repository"`
	Linkage     string   `json:"linkage"` // static or dynamic
	Glibc       string   `json:"glibc,omitempty"`
	Installs    string   `json:"installs,omitempty"`
	Alternative string   `json:"alternative,omitempty"`
	Sources     []string `json:"sources"`
	Note        string   `json:"note,omitempty"`

	glibc nodeos.Version
}

//go:embed data/host-binaries.yaml
var hostBinariesYAML []byte

// loadHostBinaryFacts parses the embedded file once; read-only after that.
var loadHostBinaryFacts = sync.OnceValues(func() (*hostBinaryFacts, error) {
	return parseHostBinaryFacts(hostBinariesYAML)
})

func parseHostBinaryFacts(data []byte) (*hostBinaryFacts, error) {
	var f hostBinaryFacts
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return nil, fmt.Errorf("parsing host-binaries.yaml: %w", err)
	}
	if len(f.HostBinaryPaths) == 0 {
		return nil, fmt.Errorf("host-binaries.yaml: no hostBinaryPaths")
	}
	for _, p := range append(slices.Clone(f.HostBinaryPaths), f.NotHostBinaryPaths...) {
		if !path.IsAbs(p) || path.Clean(p) != p || p == "/" {
			return nil, fmt.Errorf("host-binaries.yaml: path %q must be absolute, clean and not /", p)
		}
	}
	seen := map[string]bool{}
	for i := range f.Images {
		im := &f.Images[i]
		if im.Repository == "" || check.ImageRepository(im.Repository) != im.Repository {
			return nil, fmt.Errorf("host-binaries.yaml: repository %q must be set and carry no tag or digest", im.Repository)
		}
		if seen[im.Repository] {
			return nil, fmt.Errorf("host-binaries.yaml: repository %q listed twice", im.Repository)
		}
		seen[im.Repository] = true
		if len(im.Sources) == 0 {
			return nil, fmt.Errorf("host-binaries.yaml: %s has no sources", im.Repository)
		}
		switch im.Linkage {
		case "dynamic":
			v, err := nodeos.ParseVersion(im.Glibc)
			if err != nil {
				return nil, fmt.Errorf("host-binaries.yaml: %s: %w", im.Repository, err)
			}
			im.glibc = v
		case "static":
			if im.Glibc != "" {
				return nil, fmt.Errorf("host-binaries.yaml: %s is static but names glibc %s", im.Repository, im.Glibc)
			}
		default:
			return nil, fmt.Errorf("host-binaries.yaml: %s: linkage %q, want static or dynamic", im.Repository, im.Linkage)
		}
	}
	return &f, nil
}

// hostBinaryDir returns the host binary directory a hostPath reaches: the
// path itself or a parent of it is listed, or the path is a parent of a
// listed directory ("/", "/opt", "/usr"); a path in a subtree listed as
// holding no userland binaries (kernel modules) is none.
func (f *hostBinaryFacts) hostBinaryDir(p string) (string, bool) {
	p = path.Clean("/" + p)
	for _, not := range f.NotHostBinaryPaths {
		if p == not || strings.HasPrefix(p, not+"/") {
			return "", false
		}
	}
	for _, dir := range f.HostBinaryPaths {
		if p == dir || strings.HasPrefix(p, dir+"/") {
			return dir, true
		}
	}
	for _, dir := range f.HostBinaryPaths {
		if p == "/" || strings.HasPrefix(dir, p+"/") {
			return dir, true
		}
	}
	return "", false
}

// hostWrite is one container of a DaemonSet that can write into a host
// binary directory.
type hostWrite struct {
	field     string // "initContainers[0]"
	container *corev1.Container
	evidence  []string
	// dirs are the host binary directories the mounts reach.
	dirs []string
}

// hostWrites lists the containers of a DaemonSet that mount a host binary
// directory writable.
func (f *hostBinaryFacts) hostWrites(ds *appsv1.DaemonSet) []hostWrite {
	spec := &ds.Spec.Template.Spec
	vols := map[string]int{}
	for i := range spec.Volumes {
		if spec.Volumes[i].HostPath != nil {
			vols[spec.Volumes[i].Name] = i
		}
	}
	if len(vols) == 0 {
		return nil
	}
	var out []hostWrite
	scan := func(kind string, cs []corev1.Container) {
		for ci := range cs {
			c := &cs[ci]
			w := hostWrite{field: fmt.Sprintf("%s[%d]", kind, ci), container: c}
			for mi, m := range c.VolumeMounts {
				vi, ok := vols[m.Name]
				if !ok || m.ReadOnly {
					continue
				}
				hostPath := spec.Volumes[vi].HostPath.Path
				if m.SubPath != "" {
					hostPath = path.Join(hostPath, m.SubPath)
				}
				dir, ok := f.hostBinaryDir(hostPath)
				if !ok {
					continue
				}
				if !slices.Contains(w.dirs, dir) {
					w.dirs = append(w.dirs, dir)
				}
				reach := ""
				if dir != spec.Volumes[vi].HostPath.Path {
					reach = " (reaches " + dir + ")"
				}
				w.evidence = append(w.evidence, fmt.Sprintf(
					"DaemonSet %s/%s spec.template.spec.volumes[%d].hostPath.path=%s%s is mounted writable by %s.volumeMounts[%d] at %s",
					ds.Namespace, ds.Name, vi, spec.Volumes[vi].HostPath.Path, reach, w.field, mi, m.MountPath))
			}
			if len(w.evidence) > 0 {
				out = append(out, w)
			}
		}
	}
	scan("initContainers", spec.InitContainers)
	scan("containers", spec.Containers)
	return out
}

// glibcNeed is what kubegap knows about the glibc an image's binaries need.
type glibcNeed struct {
	known   bool // false: neither inspected nor in the data file
	dynamic bool
	glibc   nodeos.Version
	// musl: some binary is linked against musl; no glibc host has its loader.
	musl bool
	// unconfirmed names what the binaries need from the host that node
	// OS data cannot confirm: "libstdc++.so.6 with GLIBCXX_3.4.30", "the
	// loader /opt/x/ld.so".
	unconfirmed []string
	// how says where the knowledge comes from, for evidence.
	how         string
	alternative string
}

// usualLoader reports whether a PT_INTERP path is where a node OS's C
// library keeps its loader: /lib or /lib64, with a glibc loader name
// (ld-linux*, ld.so.1, ld64.so.*: glibc's shlib-versions per port) or a
// musl one (ld-musl-*). Musl loaders are judged by the musl rule.
func usualLoader(p string) bool {
	dir, base := path.Split(p)
	if dir != "/lib/" && dir != "/lib64/" {
		return false
	}
	return strings.HasPrefix(base, "ld-linux") || base == "ld.so.1" || strings.HasPrefix(base, "ld64.so.") || strings.HasPrefix(base, "ld-musl-")
}

// labels names the needs for titles: GLIBC_2.34, the musl loader.
func (n glibcNeed) labels() []string {
	var out []string
	if !n.glibc.IsZero() {
		out = append(out, "GLIBC_"+n.glibc.String())
	}
	if n.musl {
		out = append(out, "the musl loader")
	}
	return out
}

func (f *hostBinaryFacts) glibcNeed(image string, images map[string]check.ImageFacts) glibcNeed {
	// Facts from the manifest alone (a schema 1 image) say nothing of files.
	if im, ok := images[image]; ok && im.Err == "" && im.LayersRead {
		need := glibcNeed{known: true}
		var hows []string
		if len(im.Musl) > 0 {
			need.dynamic, need.musl = true, true
			hows = append(hows, fmt.Sprintf("--inspect-images: %s installs musl-linked binaries, whose loader a glibc host does not have (%s)",
				image, strings.Join(firstN(im.Musl, 3), "; ")))
		}
		if im.MaxGlibc != "" {
			if v, err := nodeos.ParseVersion(im.MaxGlibc); err == nil {
				need.dynamic, need.glibc = true, v
				how := fmt.Sprintf("--inspect-images: %s needs GLIBC_%s", image, v)
				if len(im.Executables) > 0 {
					how += " (" + strings.Join(firstN(im.Executables, 3), "; ") + ")"
				}
				hows = append(hows, how)
			}
		}
		var cxx []string
		if im.MaxGlibcxx != "" {
			cxx = append(cxx, "GLIBCXX_"+im.MaxGlibcxx)
		}
		if im.MaxCxxabi != "" {
			cxx = append(cxx, "CXXABI_"+im.MaxCxxabi)
		}
		if len(cxx) > 0 {
			need.unconfirmed = append(need.unconfirmed, "libstdc++.so.6 with "+strings.Join(cxx, ", "))
			hows = append(hows, fmt.Sprintf("--inspect-images: %s installs C++ binaries that need libstdc++.so.6 with %s from the host; "+
				"kubegap has no data on which libstdc++ each node OS ships, or whether it ships one", image, strings.Join(cxx, ", ")))
		}
		for _, l := range im.Interpreters {
			if !usualLoader(l) {
				need.unconfirmed = append(need.unconfirmed, "the loader "+l)
				hows = append(hows, fmt.Sprintf("--inspect-images: %s installs binaries whose loader is %s, a path where no glibc or "+
					"musl node OS puts its loader; they start only where something else provides it", image, l))
			}
		}
		if len(hows) == 0 {
			return glibcNeed{known: true, how: "--inspect-images found no executable needing glibc in " + image}
		}
		need.how = strings.Join(hows, "; ")
		return need
	}
	repo := check.ImageRepository(image)
	for i := range f.Images {
		im := &f.Images[i]
		if im.Repository != repo {
			continue
		}
		src := strings.Join(im.Sources, ", ")
		if im.Linkage == "static" {
			return glibcNeed{known: true, how: fmt.Sprintf("kubegap data: %s installs statically linked binaries (%s)", repo, src)}
		}
		return glibcNeed{known: true, dynamic: true, glibc: im.glibc, alternative: im.Alternative,
			how: fmt.Sprintf("kubegap data: %s installs binaries that need GLIBC_%s (%s)", repo, im.glibc, src)}
	}
	return glibcNeed{}
}

// unknownNeedWhy says why an image's glibc need is unknown: not
// inspected and not in kubegap's data, or what the inspection lacked.
func unknownNeedWhy(image string, images map[string]check.ImageFacts) string {
	im, ok := images[image]
	switch {
	case images == nil:
		return "not inspected, and not in kubegap's data"
	case !ok:
		return "--inspect-images did not inspect it, and it is not in kubegap's data"
	case im.Err != "":
		return "--inspect-images could not read it: " + im.Err
	}
	what := "its manifest"
	if im.MediaType != "" {
		what += " (" + im.MediaType + ")"
	}
	return "--inspect-images read only " + what + ", not its files"
}
