package runtime

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// TestImageUsersLazyPathsAndPresence: the field paths imageUser.path
// joins on demand are those imageUsers joined for every container before,
// and hasImageUsers, which image-manifest-compat now asks before listing
// the users, agrees with listing them, on the fixtures, on each kind of
// object alone and on an empty input.
func TestImageUsersLazyPathsAndPresence(t *testing.T) {
	var inputs []*snapshot.Snapshot
	for _, file := range []string{"image-manifest-compat/gap.yaml", "image-manifest-compat/clean.yaml",
		"jvm-cgroup-compat/gap.yaml", "jvm-cgroup-compat/clean.yaml"} {
		s := checktest.Load(t, file)
		inputs = append(inputs, s, &snapshot.Snapshot{}, &snapshot.Snapshot{Pods: s.Pods}, &snapshot.Snapshot{Deployments: s.Deployments},
			&snapshot.Snapshot{DaemonSets: s.DaemonSets}, &snapshot.Snapshot{StatefulSets: s.StatefulSets}, &snapshot.Snapshot{CronJobs: s.CronJobs})
	}
	paths := 0
	for i, s := range inputs {
		users := imageUsers(s)
		old := oldImagePaths(s)
		if len(old) != len(users) {
			t.Fatalf("input %d: %d users, the old walk %d", i, len(users), len(old))
		}
		if got, want := hasImageUsers(s), len(users) > 0; got != want {
			t.Errorf("input %d: hasImageUsers %v, imageUsers lists %d", i, got, len(users))
		}
		for j, u := range users {
			if len(u.containers) != len(u.images) {
				t.Fatalf("%s: %d containers for %d images", u.ref, len(u.containers), len(u.images))
			}
			for k := range u.images {
				want := old[j][k]
				if got := u.path(k); got != want || got == "" {
					t.Errorf("%s image %d: path %q, want %q", u.ref, k, got, want)
				}
				paths++
			}
		}
	}
	if paths == 0 {
		t.Fatal("no image paths compared")
	}
}

// oldImagePaths is the paths imageUsers joined per container before, in
// its order of users.
func oldImagePaths(s *snapshot.Snapshot) [][]string {
	var out [][]string
	covered := map[[3]string]bool{}
	add := func(kind string, m *metav1.ObjectMeta, spec *corev1.PodSpec) {
		covered[[3]string{kind, m.Namespace, m.Name}] = true
		var paths []string
		for k, cs := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
			for j := range cs {
				paths = append(paths, check.ContainerField(kind, []string{check.InitContainers, check.Containers}[k], cs[j].Name, "image"))
			}
		}
		out = append(out, paths)
	}
	for i := range s.DaemonSets {
		add("DaemonSet", &s.DaemonSets[i].ObjectMeta, &s.DaemonSets[i].Spec.Template.Spec)
	}
	for i := range s.Deployments {
		add("Deployment", &s.Deployments[i].ObjectMeta, &s.Deployments[i].Spec.Template.Spec)
	}
	for i := range s.StatefulSets {
		add("StatefulSet", &s.StatefulSets[i].ObjectMeta, &s.StatefulSets[i].Spec.Template.Spec)
	}
	for i := range s.CronJobs {
		add("CronJob", &s.CronJobs[i].ObjectMeta, &s.CronJobs[i].Spec.JobTemplate.Spec.Template.Spec)
	}
	ix := s.Index()
	for i := range s.Pods {
		p := &s.Pods[i]
		if k, ok := podOwnerKey(ix, p); ok && covered[k] {
			continue
		}
		var paths []string
		for k, cs := range [][]snapshot.Container{p.Spec.InitContainers, p.Spec.Containers, p.Spec.EphemeralContainers} {
			for j := range cs {
				paths = append(paths, check.ContainerField("Pod", []string{check.InitContainers, check.Containers, check.EphemeralContainers}[k], cs[j].Name, "image"))
			}
		}
		out = append(out, paths)
	}
	return out
}
