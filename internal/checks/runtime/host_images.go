package runtime

import (
	"sort"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubegap/kubegap/internal/check"
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
	platforms := linuxPlatforms(s)
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

// linuxPlatforms lists the os/arch of the Linux nodes; linux/amd64 when
// none reports one.
func linuxPlatforms(s *snapshot.Snapshot) []string {
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
	return platforms
}

// The image-reading checks of this package, by ID: what --inspect-images
// must read of every image pods and workload templates run for them.
const (
	imageManifestCheckID = "image-manifest-compat" // the manifest's media type
	jvmCheckID           = "jvm-cgroup-compat"     // the files: JDK release files
)

// WorkloadImageNeeds says what the selected checks need of every workload
// image: its manifest only, or its files too. Both false: nothing beyond
// the host-binary images.
func WorkloadImageNeeds(ids []string) (manifests, files bool) {
	for _, id := range ids {
		switch id {
		case imageManifestCheckID:
			manifests = true
		case jvmCheckID:
			files = true
		}
	}
	return manifests || files, files
}

// WorkloadImages lists every distinct image of pods and of Deployment,
// StatefulSet, DaemonSet, ReplicaSet, Job and CronJob templates (init and
// ephemeral containers included), with the platforms of the cluster's
// Linux nodes. Templated references (Helm placeholders) are left out.
func WorkloadImages(s *snapshot.Snapshot) []HostImage {
	platforms := linuxPlatforms(s)
	seen := map[string]bool{}
	add := func(img string) {
		if img != "" && !seen[img] && !check.IsTemplated(img) {
			seen[img] = true
		}
	}
	for i := range s.Pods {
		sp := &s.Pods[i].Spec
		for _, cs := range [][]snapshot.Container{sp.InitContainers, sp.Containers, sp.EphemeralContainers} {
			for j := range cs {
				add(cs[j].Image)
			}
		}
	}
	for _, spec := range templateSpecs(s) {
		for _, cs := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
			for j := range cs {
				add(cs[j].Image)
			}
		}
	}
	out := make([]HostImage, 0, len(seen))
	for img := range seen {
		out = append(out, HostImage{Image: img, Platforms: platforms})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Image < out[j].Image })
	return out
}

// templateSpecs lists the pod templates of the snapshot's workloads.
func templateSpecs(s *snapshot.Snapshot) []*corev1.PodSpec {
	var out []*corev1.PodSpec
	for i := range s.Deployments {
		out = append(out, &s.Deployments[i].Spec.Template.Spec)
	}
	for i := range s.StatefulSets {
		out = append(out, &s.StatefulSets[i].Spec.Template.Spec)
	}
	for i := range s.DaemonSets {
		out = append(out, &s.DaemonSets[i].Spec.Template.Spec)
	}
	for i := range s.ReplicaSets {
		out = append(out, &s.ReplicaSets[i].Spec.Template.Spec)
	}
	for i := range s.Jobs {
		out = append(out, &s.Jobs[i].Spec.Template.Spec)
	}
	for i := range s.CronJobs {
		out = append(out, &s.CronJobs[i].Spec.JobTemplate.Spec.Template.Spec)
	}
	return out
}
