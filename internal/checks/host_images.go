package checks

import (
	"sort"

	"github.com/kubegap/kubegap/internal/snapshot"
)

// HostImage is an image whose containers write into a host binary
// directory, with the platforms of the Linux nodes it may run on:
// what --inspect-images pulls for host-binary-glibc.
type HostImage struct {
	Image     string
	Platforms []string // os/arch, e.g. linux/amd64
}

// HostBinaryImages lists the images of DaemonSets that install binaries on
// hosts, using the same host-path rules as host-binary-glibc. Platforms come
// from the nodes' reported architecture; linux/amd64 when none reports one.
func HostBinaryImages(s *snapshot.Snapshot) ([]HostImage, error) {
	facts, err := loadHostBinaryFacts()
	if err != nil {
		return nil, err
	}
	archs := map[string]bool{}
	for i := range s.Nodes {
		ni := s.Nodes[i].Status.NodeInfo
		if ni.OperatingSystem != "" && ni.OperatingSystem != "linux" {
			continue
		}
		if ni.Architecture != "" {
			archs["linux/"+ni.Architecture] = true
		}
	}
	if len(archs) == 0 {
		archs["linux/amd64"] = true
	}
	var platforms []string
	for p := range archs {
		platforms = append(platforms, p)
	}
	sort.Strings(platforms)
	seen := map[string]bool{}
	var out []HostImage
	for i := range s.DaemonSets {
		for _, w := range facts.hostWrites(&s.DaemonSets[i]) {
			if img := w.container.Image; img != "" && !seen[img] {
				seen[img] = true
				out = append(out, HostImage{Image: img, Platforms: platforms})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Image < out[j].Image })
	return out, nil
}
