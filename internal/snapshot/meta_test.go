package snapshot

import "testing"

// TestMetaFindsEveryKind: suppression looks objects up by kind, so every
// kind a finding can name must be found, not only the ones the founding
// checks reported on.
func TestMetaFindsEveryKind(t *testing.T) {
	const ignore = `annotations: {kubegap.dev/ignore: "*", kubegap.dev/ignore-reason: why}`
	p := write(t, t.TempDir(), "objs.yaml", []byte(`apiVersion: v1
kind: Pod
metadata: {name: p, namespace: a, `+ignore+`}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: ds, namespace: kube-system, `+ignore+`}
---
apiVersion: batch/v1
kind: Job
metadata: {name: migrate, namespace: a, `+ignore+`}
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly, namespace: a, `+ignore+`}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: a, `+ignore+`}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: reader, `+ignore+`}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: fast, `+ignore+`}
---
apiVersion: k8s.cni.cncf.io/v1
kind: NetworkAttachmentDefinition
metadata: {name: nad, namespace: a, `+ignore+`}
---
`+nodeYAML))
	s, err := LoadPaths([]string{p})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ kind, ns, name string }{
		{"Pod", "a", "p"},
		{"DaemonSet", "kube-system", "ds"},
		{"Job", "a", "migrate"},
		{"CronJob", "a", "nightly"},
		{"Ingress", "a", "web"},
		{"ClusterRole", "", "reader"},
		{"StorageClass", "", "fast"},
		{"NetworkAttachmentDefinition", "a", "nad"},
	} {
		m, ok := s.Meta(c.kind, c.ns, c.name)
		if !ok || m.Annotations[IgnoreAnnotation] != "*" || m.Annotations[IgnoreReasonAnnotation] != "why" {
			t.Errorf("Meta(%s %s/%s) = %v, %v; want the ignore annotations", c.kind, c.ns, c.name, m, ok)
		}
	}
	if m, ok := s.Meta("Node", "", "n1"); !ok || m.Annotations[IgnoreAnnotation] != "" {
		t.Errorf("Meta(Node n1) = %v, %v; want found, not ignored", m, ok)
	}
	for _, c := range []struct{ kind, ns, name string }{
		{"Job", "b", "migrate"}, {"Ingress", "a", "other"}, {"Widget", "a", "p"},
	} {
		if m, ok := s.Meta(c.kind, c.ns, c.name); ok {
			t.Errorf("Meta(%s %s/%s) = %v; want not found", c.kind, c.ns, c.name, m)
		}
	}
}
