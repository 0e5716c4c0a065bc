package runtime

// What the overlay rules of dataplane-node-compat share: the DaemonSets that
// run flanneld and the ConfigMap each mounts, and the lists of first fixed
// releases (the calico-iptables-auto rule uses those too). The rules are in
// dataplane_node_compat_vxlan.go (VXLAN checksum offload) and
// dataplane_node_compat_masq.go (masquerading without --random-fully); the
// check itself is in dataplane_node_compat.go.

import (
	"path"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// ascending parses a non-empty list of versions in ascending order.
func ascending(list []string) ([]check.KubeVersion, bool) {
	var out []check.KubeVersion
	for _, s := range list {
		v, ok := check.ParseKubeVersion(s)
		if !ok || len(out) > 0 && !out[len(out)-1].Less(v) {
			return nil, false
		}
		out = append(out, v)
	}
	return out, len(out) > 0
}

// carriesFix reports whether v carries a fix whose first release in each
// minor is listed: a minor newer than the last listed carries it, an
// older minor that is not listed does not.
func carriesFix(v check.KubeVersion, firsts []check.KubeVersion) bool {
	for _, f := range firsts {
		if v.Major == f.Major && v.Minor == f.Minor {
			return !v.Less(f)
		}
	}
	return !v.Less(firsts[len(firsts)-1])
}

// flannelDS is a DaemonSet running flanneld, as its template shows it.
type flannelDS struct {
	ds        *appsv1.DaemonSet
	image     string
	args      []string
	env       []corev1.EnvVar
	configMap string // the ConfigMap mounted at flanneld's config directory, "" if none
}

// flannelConfigDir is where flanneld with --kube-subnet-mgr reads
// net-conf.json, as the Flannel and Canal manifests mount it.
const flannelConfigDir = "/etc/kube-flannel"

// flannelDaemonSets finds containers that run flanneld, by command or,
// when the image's own entrypoint starts it, by a flannel image name.
func flannelDaemonSets(s *snapshot.Snapshot, facts *dataplaneFacts) []flannelDS {
	isFlannel := func(c *corev1.Container, args []string) bool {
		if slices.ContainsFunc(args, func(a string) bool { return path.Base(a) == "flanneld" }) {
			return true
		}
		for _, r := range facts.MasqRandomFully {
			if r.Agent == "flannel" && len(c.Command) == 0 && r.imageRE.MatchString(imageRepo(c.Image)) {
				return true
			}
		}
		return false
	}
	var out []flannelDS
	for i := range s.DaemonSets {
		d := &s.DaemonSets[i]
		spec := &d.Spec.Template.Spec
		for _, c := range spec.Containers {
			args := append(append([]string{}, c.Command...), c.Args...)
			if !isFlannel(&c, args) {
				continue
			}
			out = append(out, flannelDS{ds: d, image: c.Image, args: args, env: c.Env, configMap: mountedConfigMap(spec, &c)})
			break
		}
	}
	return out
}

func mountedConfigMap(spec *corev1.PodSpec, c *corev1.Container) string {
	for _, m := range c.VolumeMounts {
		if strings.TrimSuffix(m.MountPath, "/") != flannelConfigDir {
			continue
		}
		for _, v := range spec.Volumes {
			if v.Name == m.Name && v.ConfigMap != nil {
				return v.ConfigMap.Name
			}
		}
	}
	return ""
}

func imageRepo(image string) string {
	repo, _, _ := check.ImageParts(image)
	return repo
}

func versionsText(vs []check.KubeVersion) string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.String()
	}
	return strings.Join(out, " or ")
}
