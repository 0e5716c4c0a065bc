package snapshot

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// legacyYAML holds one object of each served-then-removed version the
// loader reads, written as old manifests are: no selector where the old
// version defaulted it, no failurePolicy, and so on.
const legacyYAML = `apiVersion: extensions/v1beta1
kind: DaemonSet
metadata: {name: old-agent, namespace: kube-system}
spec:
  template:
    metadata: {labels: {app: old-agent}}
    spec: {containers: [{name: a, image: "agent:latest", imagePullPolicy: Always}]}
---
apiVersion: extensions/v1beta1
kind: Deployment
metadata: {name: old-web, namespace: web}
spec:
  template:
    metadata: {labels: {app: old-web}}
    spec: {containers: [{name: w, image: "web:1"}]}
---
apiVersion: extensions/v1beta1
kind: ReplicaSet
metadata: {name: old-web-1, namespace: web}
spec:
  template:
    metadata: {labels: {app: old-web}}
    spec: {containers: [{name: w, image: "web:1"}]}
---
apiVersion: apps/v1beta1
kind: Deployment
metadata: {name: beta1-web, namespace: web}
spec:
  template:
    metadata: {labels: {app: beta1-web}}
    spec: {containers: [{name: w, image: "web:1"}]}
---
apiVersion: apps/v1beta1
kind: StatefulSet
metadata: {name: beta1-db, namespace: db}
spec:
  serviceName: db
  template:
    metadata: {labels: {app: beta1-db}}
    spec: {containers: [{name: d, image: "db:1"}]}
---
apiVersion: apps/v1beta2
kind: DaemonSet
metadata: {name: beta2-agent, namespace: kube-system}
spec:
  selector: {matchLabels: {app: beta2-agent}}
  template:
    metadata: {labels: {app: beta2-agent}}
    spec: {containers: [{name: a, image: "agent:2"}]}
---
apiVersion: policy/v1beta1
kind: PodDisruptionBudget
metadata: {name: none, namespace: web}
spec: {minAvailable: 1, selector: {}}
---
apiVersion: policy/v1beta1
kind: PodDisruptionBudget
metadata: {name: web, namespace: web}
spec: {maxUnavailable: 0, selector: {matchLabels: {app: old-web}}}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: all, namespace: web}
spec: {maxUnavailable: 0, selector: {}}
---
apiVersion: admissionregistration.k8s.io/v1beta1
kind: ValidatingWebhookConfiguration
metadata: {name: old-policy}
webhooks:
- name: defaults.example.com
  clientConfig: {service: {namespace: policy, name: hook}}
  rules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}]
- name: explicit.example.com
  failurePolicy: Fail
  timeoutSeconds: 5
  clientConfig: {service: {namespace: policy, name: hook}}
  rules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}]
---
apiVersion: admissionregistration.k8s.io/v1beta1
kind: MutatingWebhookConfiguration
metadata: {name: old-mutator}
webhooks:
- name: m.example.com
  clientConfig: {service: {namespace: policy, name: hook}}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: current}
webhooks:
- name: v1.example.com
  sideEffects: None
  admissionReviewVersions: [v1]
  clientConfig: {service: {namespace: policy, name: hook}}
---
apiVersion: discovery.k8s.io/v1beta1
kind: EndpointSlice
metadata: {name: hook-abc, namespace: policy, labels: {kubernetes.io/service-name: hook}}
addressType: IPv4
endpoints:
- addresses: [10.0.0.1]
  nodeName: node-1
  topology: {kubernetes.io/hostname: node-1, topology.kubernetes.io/zone: eu-1a, example.com/rack: r7}
- addresses: [10.0.0.2]
  topology: {kubernetes.io/hostname: node-2}
`

// TestRemovedAPIVersions: objects of served-then-removed versions are read
// as the current type with their version's defaults and meaning, and the
// version recorded; extensions/v1beta1 workloads were dropped silently
// (kept as unknown kinds, so "no DaemonSet objects"), and the v1beta1
// budget and webhooks were read with v1 semantics.
func TestRemovedAPIVersions(t *testing.T) {
	p := write(t, t.TempDir(), "old.yaml", []byte(legacyYAML))
	s, err := LoadPaths([]string{p})
	if err != nil {
		t.Fatal(err)
	}
	check := func(t *testing.T, s *Snapshot) {
		if len(s.DaemonSets) != 2 || len(s.Deployments) != 2 || len(s.ReplicaSets) != 1 || len(s.StatefulSets) != 1 ||
			len(s.PodDisruptionBudgets) != 3 || len(s.ValidatingWebhookConfigurations) != 2 ||
			len(s.MutatingWebhookConfigurations) != 1 || len(s.EndpointSlices) != 1 {
			t.Fatalf("objects: ds=%d deploy=%d rs=%d sts=%d pdb=%d vwc=%d mwc=%d eps=%d", len(s.DaemonSets), len(s.Deployments),
				len(s.ReplicaSets), len(s.StatefulSets), len(s.PodDisruptionBudgets), len(s.ValidatingWebhookConfigurations),
				len(s.MutatingWebhookConfigurations), len(s.EndpointSlices))
		}
		if n := len(s.Custom); n != 0 {
			t.Errorf("%d kinds kept as unknown: %v", n, s.Custom)
		}
		if c := s.Status(DaemonSets); c.Status != StatusRead || c.Count != 2 {
			t.Errorf("DaemonSet coverage %+v", c)
		}

		ds := find(t, s.DaemonSets, "old-agent")
		if ds.APIVersion != "apps/v1" || OriginalAPIVersion(ds) != "extensions/v1beta1" {
			t.Errorf("old-agent: %s, original %q", ds.APIVersion, OriginalAPIVersion(ds))
		}
		if ds.Spec.Selector == nil || ds.Spec.Selector.MatchLabels["app"] != "old-agent" || ds.Labels["app"] != "old-agent" {
			t.Errorf("old-agent selector %v labels %v, want defaulted from the template", ds.Spec.Selector, ds.Labels)
		}
		if ds.Spec.UpdateStrategy.Type != appsv1.OnDeleteDaemonSetStrategyType {
			t.Errorf("old-agent update strategy %q, want OnDelete (extensions/v1beta1 default)", ds.Spec.UpdateStrategy.Type)
		}
		if ds := find(t, s.DaemonSets, "beta2-agent"); OriginalAPIVersion(ds) != "apps/v1beta2" || ds.Spec.UpdateStrategy.Type != "" {
			t.Errorf("beta2-agent: original %q, strategy %q (apps/v1beta2 defaults as v1 does)", OriginalAPIVersion(ds), ds.Spec.UpdateStrategy.Type)
		}

		d := find(t, s.Deployments, "old-web")
		ru := d.Spec.Strategy.RollingUpdate
		if ru == nil || ru.MaxUnavailable.String() != "1" || ru.MaxSurge.String() != "1" ||
			*d.Spec.RevisionHistoryLimit != math.MaxInt32 || *d.Spec.ProgressDeadlineSeconds != math.MaxInt32 {
			t.Errorf("old-web strategy %+v, history %v, deadline %v", ru, d.Spec.RevisionHistoryLimit, d.Spec.ProgressDeadlineSeconds)
		}
		if d := find(t, s.Deployments, "beta1-web"); d.Spec.RevisionHistoryLimit == nil || *d.Spec.RevisionHistoryLimit != 2 || d.Spec.Selector == nil {
			t.Errorf("beta1-web history %v selector %v, want 2 and defaulted", d.Spec.RevisionHistoryLimit, d.Spec.Selector)
		}
		if rs := find(t, s.ReplicaSets, "old-web-1"); rs.Spec.Selector == nil || rs.Spec.Selector.MatchLabels["app"] != "old-web" {
			t.Errorf("old-web-1 selector %v", rs.Spec.Selector)
		}
		if st := find(t, s.StatefulSets, "beta1-db"); st.Spec.UpdateStrategy.Type != appsv1.OnDeleteStatefulSetStrategyType {
			t.Errorf("beta1-db strategy %q, want OnDelete", st.Spec.UpdateStrategy.Type)
		}

		// The budgets: a v1beta1 "{}" selects no pod, a v1 "{}" every pod.
		pod := labels.Set{"app": "old-web", "anything": "x"}
		selects := func(name string) bool {
			b := find(t, s.PodDisruptionBudgets, name)
			sel, err := metav1.LabelSelectorAsSelector(b.Spec.Selector)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return sel.Matches(pod)
		}
		if selects("none") || !selects("all") || !selects("web") {
			t.Errorf("selects: v1beta1 {} %v (want false), v1 {} %v, v1beta1 app=old-web %v (want true)",
				selects("none"), selects("all"), selects("web"))
		}
		if b := find(t, s.PodDisruptionBudgets, "none"); OriginalAPIVersion(b) != "policy/v1beta1" {
			t.Errorf("budget none: original %q", OriginalAPIVersion(b))
		}

		// The webhooks: v1beta1 defaults where v1 would differ.
		old := find(t, s.ValidatingWebhookConfigurations, "old-policy").Webhooks
		if fp := old[0].FailurePolicy; fp == nil || *fp != admissionv1.Ignore || *old[0].TimeoutSeconds != 30 ||
			*old[0].MatchPolicy != admissionv1.Exact || *old[0].SideEffects != admissionv1.SideEffectClassUnknown ||
			strings.Join(old[0].AdmissionReviewVersions, ",") != "v1beta1" {
			t.Errorf("v1beta1 webhook defaults: %+v", old[0])
		}
		if *old[1].FailurePolicy != admissionv1.Fail || *old[1].TimeoutSeconds != 5 {
			t.Errorf("explicit values overwritten: %v %v", *old[1].FailurePolicy, *old[1].TimeoutSeconds)
		}
		if m := find(t, s.MutatingWebhookConfigurations, "old-mutator").Webhooks[0]; *m.FailurePolicy != admissionv1.Ignore || *m.TimeoutSeconds != 30 {
			t.Errorf("v1beta1 mutating webhook: %v %v", *m.FailurePolicy, *m.TimeoutSeconds)
		}
		if cur := find(t, s.ValidatingWebhookConfigurations, "current").Webhooks[0]; cur.FailurePolicy != nil || OriginalAPIVersion(find(t, s.ValidatingWebhookConfigurations, "current")) != "" {
			t.Errorf("a v1 webhook got v1beta1 defaults: %v", cur.FailurePolicy)
		}

		eps := s.EndpointSlices[0].Endpoints
		if eps[0].Zone == nil || *eps[0].Zone != "eu-1a" || len(eps[0].DeprecatedTopology) != 1 || eps[0].DeprecatedTopology["example.com/rack"] != "r7" {
			t.Errorf("endpoint 0: zone %v topology %v", eps[0].Zone, eps[0].DeprecatedTopology)
		}
		if eps[1].NodeName != nil || eps[1].DeprecatedTopology["kubernetes.io/hostname"] != "node-2" {
			t.Errorf("endpoint 1: nodeName %v topology %v (hostname stays without a nodeName)", eps[1].NodeName, eps[1].DeprecatedTopology)
		}
	}
	check(t, s)

	// Saved and read back, the converted objects keep their values and
	// the recorded version, and are not converted twice.
	out := filepath.Join(t.TempDir(), "snap.json")
	if err := s.SaveFile(out); err != nil {
		t.Fatal(err)
	}
	back, err := LoadPaths([]string{out})
	if err != nil {
		t.Fatal(err)
	}
	t.Run("round trip", func(t *testing.T) { check(t, back) })

	// In a JSON List the items take the parallel path: the same reading.
	var items []string
	for _, doc := range strings.Split(legacyYAML, "---\n") {
		j, _, err := yamlToJSON([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		items = append(items, string(j))
	}
	list := write(t, t.TempDir(), "list.json", []byte(`{"apiVersion":"v1","kind":"List","items":[`+strings.Join(items, ",")+`]}`))
	inList, err := LoadPaths([]string{list})
	if err != nil {
		t.Fatal(err)
	}
	t.Run("List items", func(t *testing.T) { check(t, inList) })
}

// TestRemovedAPIVersionsRefused: a typed kind in a version that never
// served it, or that kubegap does not know, is one error naming it,
// never read with the wrong meaning and never dropped.
func TestRemovedAPIVersionsRefused(t *testing.T) {
	cases := []struct{ doc, want string }{
		{"apiVersion: apps/v1beta1\nkind: DaemonSet\nmetadata: {name: x, namespace: a}\n",
			"apps/v1beta1 DaemonSet: apps/v1beta1 never served DaemonSets"},
		{"apiVersion: apps/v1beta1\nkind: ReplicaSet\nmetadata: {name: x, namespace: a}\n",
			"apps/v1beta1 never served ReplicaSets"},
		{"apiVersion: apps/v1beta3\nkind: DaemonSet\nmetadata: {name: x, namespace: a}\n",
			"apps/v1beta3 DaemonSet is not a version kubegap reads: it reads DaemonSets as apps/v1, extensions/v1beta1, apps/v1beta2"},
		{"apiVersion: policy/v2\nkind: PodDisruptionBudget\nmetadata: {name: x, namespace: a}\n",
			"reads PodDisruptionBudgets as policy/v1, policy/v1beta1"},
	}
	for _, tc := range cases {
		p := write(t, t.TempDir(), "old.yaml", []byte(tc.doc))
		_, err := LoadPaths([]string{p})
		if err == nil || !strings.Contains(err.Error(), "old.yaml: document 1: ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", strings.SplitN(tc.doc, "\n", 3)[:2], err, tc.want)
		}
	}
	// An old dump's empty typed list says the kind was read.
	p := write(t, t.TempDir(), "ds.json", []byte(`{"apiVersion":"extensions/v1beta1","kind":"DaemonSetList","items":[]}`))
	s, err := LoadPaths([]string{p})
	if err != nil {
		t.Fatal(err)
	}
	if c := s.Status(DaemonSets); c.Status != StatusRead {
		t.Errorf("empty extensions/v1beta1 DaemonSetList: %+v", c)
	}
}

// find returns the object named name.
func find[T any, PT interface {
	*T
	metav1.Object
}](t *testing.T, objs []T, name string) PT {
	t.Helper()
	for i := range objs {
		if PT(&objs[i]).GetName() == name {
			return PT(&objs[i])
		}
	}
	t.Fatalf("no object %s", name)
	return nil
}
