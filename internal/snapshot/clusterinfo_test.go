package snapshot

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	sigsyaml "sigs.k8s.io/yaml"
)

// printed is a typed list as kubectl's JSON printer prints it (indented,
// the list's kind first, its items without kind or apiVersion), which is
// what `kubectl cluster-info dump` writes.
func printed(t testing.TB, list runtime.Object, apiVersion, kind string) []byte {
	t.Helper()
	list.GetObjectKind().SetGroupVersionKind(schema.FromAPIVersionAndKind(apiVersion, kind))
	b, err := json.MarshalIndent(list, "", "    ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

func om(ns, name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: ns, Name: name} }

// clusterInfoLists are the lists of one namespace, in kubectl's order
// and with its file names.
func clusterInfoLists(t testing.TB, ns string, withObjects bool) []struct {
	file string
	data []byte
} {
	events := &corev1.EventList{}
	rcs := &corev1.ReplicationControllerList{}
	svcs := &corev1.ServiceList{}
	dss := &appsv1.DaemonSetList{}
	deps := &appsv1.DeploymentList{}
	rss := &appsv1.ReplicaSetList{}
	pods := &corev1.PodList{}
	if withObjects {
		events.Items = []corev1.Event{{ObjectMeta: om(ns, "e1"), Type: "Warning", Reason: "FailedScheduling"}}
		rcs.Items = []corev1.ReplicationController{{ObjectMeta: om(ns, "rc1")}}
		svcs.Items = []corev1.Service{{ObjectMeta: om(ns, "svc1")}}
		dss.Items = []appsv1.DaemonSet{{ObjectMeta: om(ns, "ds1")}}
		deps.Items = []appsv1.Deployment{{ObjectMeta: om(ns, "dep1")}}
		rss.Items = []appsv1.ReplicaSet{{ObjectMeta: om(ns, "dep1-5d8f")}}
		pods.Items = []corev1.Pod{{ObjectMeta: om(ns, "dep1-5d8f-abcde"),
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:1"}}}}}
	}
	return []struct {
		file string
		data []byte
	}{
		{"events", printed(t, events, "v1", "EventList")},
		{"replication-controllers", printed(t, rcs, "v1", "ReplicationControllerList")},
		{"services", printed(t, svcs, "v1", "ServiceList")},
		{"daemonsets", printed(t, dss, "apps/v1", "DaemonSetList")},
		{"deployments", printed(t, deps, "apps/v1", "DeploymentList")},
		{"replicasets", printed(t, rss, "apps/v1", "ReplicaSetList")},
		{"pods", printed(t, pods, "v1", "PodList")},
	}
}

func nodeList(t testing.TB) []byte {
	return printed(t, &corev1.NodeList{Items: []corev1.Node{{ObjectMeta: om("", "n1")}, {ObjectMeta: om("", "n2")}}}, "v1", "NodeList")
}

// clusterInfoDir writes what `kubectl cluster-info dump --output-directory
// DIR` writes for the namespaces given, pod logs included.
func clusterInfoDir(t *testing.T, namespaces ...string) string {
	dir := filepath.Join(t.TempDir(), "cluster-state")
	writeFile(t, filepath.Join(dir, "nodes.json"), string(nodeList(t)))
	for _, ns := range namespaces {
		for _, l := range clusterInfoLists(t, ns, true) {
			writeFile(t, filepath.Join(dir, ns, l.file+".json"), string(l.data))
		}
		writeFile(t, filepath.Join(dir, ns, "dep1-5d8f-abcde", "logs.txt"),
			"==== START logs for container app of pod "+ns+"/dep1-5d8f-abcde ====\n{\"not\": \"json\"\n==== END logs for container app of pod "+ns+"/dep1-5d8f-abcde ====\n")
	}
	return dir
}

var dumpedNamespaced = []Resource{Events, Services, DaemonSets, Deployments, ReplicaSets, Pods}

func TestClusterInfoDirectory(t *testing.T) {
	dir := clusterInfoDir(t, "kube-system", "default")
	var warnings []Warning
	s, notes, err := LoadPathsWith([]string{dir}, LoadOptions{Warn: func(w Warning) { warnings = append(warnings, w) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) != 0 || len(warnings) != 0 {
		t.Errorf("notes %v, warnings %v; want none (logs.txt is kubectl's own)", notes, warnings)
	}
	if c := s.Status(Nodes); !c.Complete || len(c.Namespaces) != 0 || c.Count != 2 {
		t.Errorf("nodes: %+v, want 2, complete cluster-wide", c)
	}
	for _, r := range dumpedNamespaced {
		c := s.Status(r)
		if !c.Complete || !slices.Equal(c.Namespaces, []string{"default", "kube-system"}) || c.Count != 2 {
			t.Errorf("%s: %+v, want 2 objects, complete in default and kube-system", r.Resource, c)
		}
	}
	if c := s.Status(StatefulSets); c.Complete || c.Status != StatusNotInInput {
		t.Errorf("statefulsets, which the dump does not hold: %+v", c)
	}
	if n := len(s.Custom["v1/ReplicationController"]); n != 2 {
		t.Errorf("%d ReplicationControllers kept, want 2 (their kind comes from the list)", n)
	}
	ci := s.Source.ClusterInfo
	if ci == nil || !slices.Equal(ci.Paths, []string{dir}) {
		t.Fatalf("source.clusterInfoDump = %+v, want the dump directory", ci)
	}
	want := "kubectl cluster-info dump: nodes complete; events, services, daemonsets, deployments, replicasets, pods complete in namespaces default, kube-system"
	if got := ci.String(); got != want {
		t.Errorf("scope line:\n got %s\nwant %s", got, want)
	}
	// -n on the dump: complete where it covers the namespace, not where it
	// does not.
	if err := s.Restrict([]string{"default"}); err != nil {
		t.Fatal(err)
	}
	if c := s.Status(Pods); !c.Complete || !slices.Equal(c.Namespaces, []string{"default"}) {
		t.Errorf("pods after -n default: %+v", c)
	}
	s2, _, _ := LoadPathsWith([]string{dir}, LoadOptions{})
	s2.Restrict([]string{"payments"})
	if c := s2.Status(Pods); c.Complete {
		t.Errorf("pods after -n payments, which the dump does not hold: %+v, want incomplete", c)
	}
	if c := s2.Status(Nodes); !c.Complete {
		t.Errorf("nodes after -n payments: %+v, want complete", c)
	}
}

// TestClusterInfoDirectoryYAML: with -o yaml kubectl writes the same
// lists as YAML (keys sorted, so a List's kind follows its items), in
// .yaml files; large ones are read item by item, before their kind.
func TestClusterInfoDirectoryYAML(t *testing.T) {
	for _, streamAfter := range []int{streamYAMLAfter, 64} {
		dir := clusterInfoDir(t, "default")
		err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil || !strings.HasSuffix(p, ".json") {
				return err
			}
			j, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			y, err := sigsyaml.JSONToYAML(j)
			if err != nil {
				return err
			}
			os.Remove(p)
			return os.WriteFile(strings.TrimSuffix(p, ".json")+".yaml", y, 0o644)
		})
		if err != nil {
			t.Fatal(err)
		}
		files, err := expand([]string{dir})
		if err != nil {
			t.Fatal(err)
		}
		l := newLoader(Source{Type: SourceFiles, Paths: []string{dir}}, nil)
		l.streamAfter = streamAfter
		if err := l.loadFiles(files, nil); err != nil {
			t.Fatalf("streaming after %d bytes: %v", streamAfter, err)
		}
		s := l.finish()
		for _, r := range append([]Resource{Nodes}, dumpedNamespaced...) {
			if c := s.Status(r); !c.Complete || c.Count == 0 {
				t.Errorf("streaming after %d bytes: %s: %+v, want complete", streamAfter, r.Resource, c)
			}
		}
	}
}

// TestClusterInfoDirectoryNeedsItsLayout: the same lists outside the
// layout, or lists kubectl would not have written there, prove nothing.
func TestClusterInfoDirectoryNeedsItsLayout(t *testing.T) {
	t.Run("no nodes file", func(t *testing.T) {
		dir := clusterInfoDir(t, "default")
		os.Remove(filepath.Join(dir, "nodes.json"))
		s, _, err := LoadPathsWith([]string{dir}, LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if c := s.Status(Pods); c.Complete || c.Count != 1 {
			t.Errorf("pods: %+v, want read, incomplete", c)
		}
		if s.Source.ClusterInfo != nil {
			t.Errorf("recognised as a dump: %+v", s.Source.ClusterInfo)
		}
	})
	t.Run("untyped List", func(t *testing.T) {
		dir := clusterInfoDir(t, "default")
		writeFile(t, filepath.Join(dir, "default", "pods.json"),
			`{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default"}}]}`)
		s, _, err := LoadPathsWith([]string{dir}, LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if c := s.Status(Pods); c.Complete {
			t.Errorf("pods from kubectl get's List: %+v, want incomplete", c)
		}
		if c := s.Status(Services); !c.Complete {
			t.Errorf("services: %+v, want complete in default", c)
		}
	})
	t.Run("a page of a list", func(t *testing.T) {
		dir := clusterInfoDir(t, "default")
		writeFile(t, filepath.Join(dir, "default", "pods.json"),
			`{"kind":"PodList","apiVersion":"v1","metadata":{"continue":"abc"},"items":[{"metadata":{"name":"p","namespace":"default"}}]}`)
		s, _, err := LoadPathsWith([]string{dir}, LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if c := s.Status(Pods); c.Complete {
			t.Errorf("pods from one page: %+v, want incomplete", c)
		}
	})
	t.Run("lone typed lists", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, "nodes.json"), string(nodeList(t)))
		s, _, err := LoadPathsWith([]string{dir}, LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if c := s.Status(Nodes); c.Complete || c.Count != 2 {
			t.Errorf("nodes from a lone NodeList: %+v, want 2, incomplete", c)
		}
	})
}

// clusterInfoStdout is what `kubectl cluster-info dump` prints to standard
// output: the lists, each namespace's pod logs after its PodList.
func clusterInfoStdout(t testing.TB, groups ...string) []byte {
	var b bytes.Buffer
	b.Write(nodeList(t))
	for _, ns := range groups {
		for _, l := range clusterInfoLists(t, ns, !strings.HasPrefix(ns, "empty")) {
			b.Write(l.data)
		}
		if strings.HasPrefix(ns, "empty") {
			continue
		}
		pod := ns + "/dep1-5d8f-abcde"
		b.WriteString("==== START logs for container app of pod " + pod + " ====\n")
		b.WriteString(`{"kind":"PodList","apiVersion":"v1","items":[{"metadata":{"name":"from-a-log","namespace":"x"}}]}` + "\n")
		b.WriteString("==== END logs for container other of pod " + pod + " ====\n")
		b.WriteString("Request log error: the server could not find the requested resource\n")
		b.WriteString("==== END logs for container app of pod " + pod + " ====\n")
	}
	return b.Bytes()
}

func TestClusterInfoStdout(t *testing.T) {
	data := clusterInfoStdout(t, "kube-system", "default", "empty")
	for _, via := range []string{"file", "stdin"} {
		t.Run(via, func(t *testing.T) {
			var s *Snapshot
			var err error
			if via == "file" {
				s, _, err = LoadPathsWith([]string{write(t, t.TempDir(), "dump.json", data)}, LoadOptions{})
			} else {
				s, _, err = LoadPathsWith([]string{Stdin}, LoadOptions{Stdin: bytes.NewReader(data)})
			}
			if err != nil {
				t.Fatal(err)
			}
			if c := s.Status(Nodes); !c.Complete || c.Count != 2 {
				t.Errorf("nodes: %+v", c)
			}
			for _, r := range dumpedNamespaced {
				c := s.Status(r)
				if !c.Complete || !slices.Equal(c.Namespaces, []string{"default", "kube-system"}) || c.Count != 2 {
					t.Errorf("%s: %+v, want 2, complete in default and kube-system", r.Resource, c)
				}
			}
			for _, p := range s.Pods {
				if p.Name == "from-a-log" {
					t.Error("read an object out of a pod's log")
				}
			}
			if ci := s.Source.ClusterInfo; ci == nil || ci.UnnamedNamespaces != 1 ||
				!strings.Contains(ci.String(), "1 more namespace dumped without any of these objects") {
				t.Errorf("clusterInfoDump = %+v (%s), want one unnamed namespace", ci, ci)
			}
		})
	}
	t.Run("out of kubectl's order", func(t *testing.T) {
		lists := clusterInfoLists(t, "default", true)
		var b bytes.Buffer
		b.Write(nodeList(t))
		b.Write(lists[6].data) // pods first
		b.Write(lists[0].data)
		var warnings []Warning
		s, _, err := LoadPathsWith([]string{write(t, t.TempDir(), "dump.json", b.Bytes())},
			LoadOptions{Warn: func(w Warning) { warnings = append(warnings, w) }})
		if err != nil {
			t.Fatal(err)
		}
		if c := s.Status(Pods); c.Complete || c.Count != 1 {
			t.Errorf("pods: %+v, want read, incomplete", c)
		}
		if c := s.Status(Nodes); c.Complete {
			t.Errorf("nodes: %+v, want incomplete", c)
		}
		if len(warnings) != 1 || !strings.Contains(warnings[0].Message, "do not follow kubectl's order") {
			t.Errorf("warnings %v", warnings)
		}
	})
}

func TestTypedListItemsTakeTheListsKind(t *testing.T) {
	dir := t.TempDir()
	p := write(t, dir, "raw.json", []byte(`{"kind":"DeploymentList","apiVersion":"apps/v1","items":[{"metadata":{"name":"d","namespace":"a"}},{"metadata":{"name":"e"}}]}
{"kind":"DaemonSetList","apiVersion":"extensions/v1beta1","items":[{"metadata":{"name":"old","namespace":"a"},"spec":{"template":{"metadata":{"labels":{"app":"x"}}}}}]}`))
	s, err := LoadPaths([]string{p})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Deployments) != 2 || s.Deployments[1].Namespace != "default" {
		t.Errorf("deployments %+v", s.Deployments)
	}
	if len(s.DaemonSets) != 1 || s.DaemonSets[0].Spec.UpdateStrategy.Type != appsv1.OnDeleteDaemonSetStrategyType {
		t.Errorf("an extensions/v1beta1 DaemonSetList's item is not read as that version: %+v", s.DaemonSets)
	}
	// An item that names half of its type is still refused.
	bad := write(t, dir, "bad.json", []byte(`{"kind":"PodList","apiVersion":"v1","items":[{"apiVersion":"v1","metadata":{"name":"p"}}]}`))
	if _, err := LoadPaths([]string{bad}); err == nil || !strings.Contains(err.Error(), "no kind") {
		t.Errorf("an item with apiVersion and no kind: %v", err)
	}
}

func TestKubectlVersionAnywhere(t *testing.T) {
	const version = `{
  "clientVersion": {"major": "1", "minor": "37", "gitVersion": "v1.37.2"},
  "kustomizeVersion": "v5.7.1",
  "serverVersion": {"major": "1", "minor": "35", "gitVersion": "v1.35.4"}
}
`
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "dump.yaml"), nodeYAML)
	writeFile(t, filepath.Join(dir, "version.json"), version)
	s, notes, err := LoadPathsWith([]string{dir}, LoadOptions{})
	if err != nil || s.Source.ServerVersion != "v1.35.4" || len(notes) != 0 {
		t.Errorf("in a directory: %v, version %q, notes %v", err, s.Source.ServerVersion, notes)
	}
	named := write(t, t.TempDir(), "kv.json", []byte(version))
	s, _, err = LoadPathsWith([]string{filepath.Join(dir, "dump.yaml"), named}, LoadOptions{})
	if err != nil || s.Source.ServerVersion != "v1.35.4" {
		t.Errorf("named: %v, version %q", err, s.Source.ServerVersion)
	}
	var warnings []Warning
	clientOnly := write(t, t.TempDir(), "client.json", []byte(`{"clientVersion": {"gitVersion": "v1.37.2"}}`))
	s, _, err = LoadPathsWith([]string{filepath.Join(dir, "dump.yaml"), clientOnly},
		LoadOptions{Warn: func(w Warning) { warnings = append(warnings, w) }})
	if err != nil || s.Source.ServerVersion != "" || len(warnings) != 1 || !strings.Contains(warnings[0].Message, "without serverVersion") {
		t.Errorf("client only: %v, version %q, warnings %v", err, s.Source.ServerVersion, warnings)
	}
	warnings = nil
	other := write(t, t.TempDir(), "other.json", []byte(`{"serverVersion": {"gitVersion": "v1.30.1"}}`))
	s, _, _ = LoadPathsWith([]string{named, other}, LoadOptions{Warn: func(w Warning) { warnings = append(warnings, w) }})
	if s.Source.ServerVersion != "v1.35.4" || len(warnings) != 1 || !strings.Contains(warnings[0].Message, "differs") {
		t.Errorf("two versions: %q, warnings %v", s.Source.ServerVersion, warnings)
	}
}

func TestNonKubernetesJSONInADirectory(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "pod.yaml"), "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: a}\n")
	writeFile(t, filepath.Join(dir, "package.json"), `{"name": "app", "version": "1.0.0", "dependencies": {"kind": "1"}}`)
	writeFile(t, filepath.Join(dir, ".mcp.json"), `{"mcpServers": {"kubegap": {"command": "kubegap", "args": ["mcp"]}}}`)
	writeFile(t, filepath.Join(dir, "tsconfig.json"), "{\n  // tsc --init writes comments\n  \"compilerOptions\": {}\n}\n")
	writeFile(t, filepath.Join(dir, "data.json"), `[1, 2, 3]`)
	s, notes, err := LoadPathsWith([]string{dir}, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Pods) != 1 {
		t.Errorf("%d pods", len(s.Pods))
	}
	joined := strings.Join(notes, "\n")
	for _, want := range []string{"package.json: skipped, not a Kubernetes object", ".mcp.json: skipped, not a Kubernetes object",
		"tsconfig.json: skipped, not Kubernetes objects (not valid JSON", "data.json: skipped, a JSON array"} {
		if !strings.Contains(joined, want) {
			t.Errorf("notes lack %q:\n%s", want, joined)
		}
	}
	if len(notes) != 4 {
		t.Errorf("%d notes:\n%s", len(notes), joined)
	}
	if _, _, err := LoadPathsWith([]string{dir}, LoadOptions{Strict: true}); err == nil {
		t.Error("--strict read a directory with package.json")
	}
	// Named on the command line, as with YAML, it is an error.
	if _, _, err := LoadPathsWith([]string{filepath.Join(dir, "package.json")}, LoadOptions{}); err == nil || !strings.Contains(err.Error(), "no kind") {
		t.Errorf("a named package.json: %v", err)
	}
}

func TestObjectInTwoFilesIsReported(t *testing.T) {
	dir := t.TempDir()
	dep := func(replicas string) string {
		return "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec: {replicas: " + replicas + "}\n"
	}
	writeFile(t, filepath.Join(dir, "a.yaml"), dep("2")+"---\n"+nodeYAML)
	writeFile(t, filepath.Join(dir, "b.yaml"), dep("5")+"---\n"+dep("5")) // twice in one file: not reported
	writeFile(t, filepath.Join(dir, "c.yaml"), "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n")
	writeFile(t, filepath.Join(dir, "d.yaml"), "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n")
	var warnings []Warning
	s, _, err := LoadPathsWith([]string{dir}, LoadOptions{Warn: func(w Warning) { warnings = append(warnings, w) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Deployments) != 1 || *s.Deployments[0].Spec.Replicas != 5 {
		t.Fatalf("deployments %+v, want b.yaml's", s.Deployments)
	}
	if len(warnings) != 2 {
		t.Fatalf("warnings %v, want 2", warnings)
	}
	w := warnings[0]
	if w.File != filepath.Join(dir, "b.yaml") || !strings.Contains(w.Message, filepath.Join(dir, "a.yaml")) ||
		!strings.Contains(w.Message, "Deployment shop/web") || !strings.Contains(w.Message, "the copy in "+filepath.Join(dir, "b.yaml")+" is read") {
		t.Errorf("warning %s", w)
	}
	if w := warnings[1]; w.File != filepath.Join(dir, "d.yaml") || !strings.Contains(w.Message, "Widget w") {
		t.Errorf("warning %s", w)
	}
}

// The duplicate warning names the same objects on every load: custom
// kinds are met in the order of their keys, not a map's.
func TestObjectInTwoFilesWarningIsStable(t *testing.T) {
	dir := t.TempDir()
	var objs []string
	for _, kind := range []string{"Widget", "Gadget", "Sprocket", "Cog", "Bolt"} {
		objs = append(objs, "apiVersion: example.com/v1\nkind: "+kind+"\nmetadata: {name: x}\n")
	}
	writeFile(t, filepath.Join(dir, "a.yaml"), strings.Join(objs, "---\n"))
	writeFile(t, filepath.Join(dir, "b.yaml"), strings.Join(objs, "---\n"))
	const want = "(Bolt x, Cog x, Gadget x and 2 more)"
	for range 20 {
		var msgs []string
		if _, _, err := LoadPathsWith([]string{dir}, LoadOptions{Warn: func(w Warning) { msgs = append(msgs, w.Message) }}); err != nil {
			t.Fatal(err)
		}
		if len(msgs) != 1 || !strings.Contains(msgs[0], want) {
			t.Fatalf("warnings %q, want one naming %s", msgs, want)
		}
	}
}

// TestStrayAPIResources: an api-resources.txt beside a kubectl get dump is
// not a recipe dump's and makes nothing "not served".
func TestStrayAPIResources(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "dump.yaml"), nodeYAML)
	writeFile(t, filepath.Join(dir, RecipeAPIResources), "nodes\npods\ndaemonsets.apps\n")
	s, notes, err := LoadPathsWith([]string{dir}, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "api-resources.txt: skipped, not in a kubegap recipe dump") {
		t.Errorf("notes %v", notes)
	}
	for _, c := range s.Coverage() {
		if c.Status == StatusNotServed || c.Complete {
			t.Errorf("%s: %+v, from a stray api-resources.txt", c.Resource, c)
		}
	}
	if _, _, err := LoadPathsWith([]string{dir}, LoadOptions{Strict: true}); err == nil || !strings.Contains(err.Error(), "read only in a kubegap recipe dump") {
		t.Errorf("--strict: %v", err)
	}
}

// TestRecipeDumpNeverUnservesBuiltIns: a recipe dump's api-resources.txt
// that lacks a built-in resource leaves it unknown; an add-on's CRD it
// lacks is not served.
func TestRecipeDumpNeverUnservesBuiltIns(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "nodes.json"), `{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Node","metadata":{"name":"n"}}]}`)
	writeFile(t, filepath.Join(dir, RecipeVersion), `{"serverVersion":{"gitVersion":"v1.35.0"}}`)
	writeFile(t, filepath.Join(dir, RecipeAPIResources), "nodes\npods\n")
	var warnings []Warning
	s, _, err := LoadPathsWith([]string{dir}, LoadOptions{Warn: func(w Warning) { warnings = append(warnings, w) }})
	if err != nil {
		t.Fatal(err)
	}
	if c := s.Status(Nodes); !c.Complete {
		t.Errorf("nodes.json of a recipe dump: %+v", c)
	}
	if len(warnings) != 1 || warnings[0].File != filepath.Join(dir, RecipeAPIResources) ||
		!strings.Contains(warnings[0].Message, "validatingwebhookconfigurations.admissionregistration.k8s.io") {
		t.Errorf("warnings %v, want one naming the default-served resources the file lacks", warnings)
	}
	for _, r := range []Resource{ValidatingWebhookConfigurations, APIServices, CustomResourceDefinitions, Deployments, EventCounts} {
		if c := s.Status(r); c.Status != StatusNotInInput || c.Complete {
			t.Errorf("%s: %+v, want not-in-input (served by every kube-apiserver)", r, c)
		}
	}
	for _, r := range []Resource{CertManagerCertificates, NetworkAttachmentDefinitions} {
		if c := s.Status(r); c.Status != StatusNotServed || !c.Complete {
			t.Errorf("%s: %+v, want not served", r, c)
		}
	}
	// A file the recipe does not write makes the directory no recipe dump.
	writeFile(t, filepath.Join(dir, "extra.yaml"), nodeYAML)
	s, _, _ = LoadPathsWith([]string{dir}, LoadOptions{})
	if c := s.Status(Nodes); c.Complete {
		t.Errorf("nodes beside a foreign file: %+v, want incomplete", c)
	}
	if c := s.Status(CertManagerCertificates); c.Status == StatusNotServed {
		t.Errorf("certificates beside a foreign file: %+v", c)
	}
}

func TestDeclaredCompleteness(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "dump.yaml"), nodeYAML+"---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: a}\n")
	load := func() *Snapshot {
		s, _, err := LoadPathsWith([]string{dir}, LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := load()
	s.Declare(Declaration{})
	if c := s.Status(Pods); c.Complete || len(s.Source.DeclaredComplete) != 0 {
		t.Errorf("nothing declared: %+v %v", c, s.Source.DeclaredComplete)
	}
	s.Declare(Declaration{All: true})
	for _, r := range []Resource{Nodes, Pods} {
		if c := s.Status(r); !c.Complete || len(c.Namespaces) != 0 {
			t.Errorf("%s after --complete: %+v", r.Resource, c)
		}
	}
	if c := s.Status(DaemonSets); c.Complete {
		t.Errorf("daemonsets, not in the input, after --complete: %+v", c)
	}
	if !slices.Equal(s.Source.DeclaredComplete, []string{"v1/nodes", "v1/pods"}) {
		t.Errorf("declaredComplete = %v", s.Source.DeclaredComplete)
	}
	if got := DeclaredText(s.Source); got != "declared complete by the user, not observed: nodes, pods (all namespaces)" {
		t.Errorf("text %q", got)
	}

	s = load()
	rs, err := ParseKinds([]string{"pdb", "po"})
	if err != nil {
		t.Fatal(err)
	}
	s.Restrict([]string{"a"})
	s.Declare(Declaration{Resources: rs})
	if c := s.Status(PodDisruptionBudgets); !c.Complete || !slices.Equal(c.Namespaces, []string{"a"}) || c.Count != 0 {
		t.Errorf("pdbs declared in -n a: %+v", c)
	}
	if c := s.Status(Nodes); c.Complete {
		t.Errorf("nodes, not named: %+v", c)
	}

	// What a dump observed stays observed.
	ci, _, _ := LoadPathsWith([]string{clusterInfoDir(t, "default")}, LoadOptions{})
	ci.Declare(Declaration{All: true})
	if slices.Contains(ci.Source.DeclaredComplete, Nodes.String()) || !slices.Contains(ci.Source.DeclaredComplete, Pods.String()) {
		t.Errorf("declared on a cluster-info dump: %v, want pods (complete in default only) but not nodes", ci.Source.DeclaredComplete)
	}
}

func TestParseKinds(t *testing.T) {
	rs, err := ParseKinds([]string{"no", "PODS", "ds", "deploy", "rs", "daemonsets.apps", "deployments.v1.apps", "Pod", "events", "events.events.k8s.io", "crd"})
	if err != nil {
		t.Fatal(err)
	}
	want := []Resource{Nodes, Pods, DaemonSets, Deployments, ReplicaSets, Events, EventCounts, CustomResourceDefinitions}
	if !slices.Equal(rs, want) {
		t.Errorf("got %v\nwant %v", rs, want)
	}
	if _, err := ParseKinds([]string{"pods", "widgets"}); err == nil || !strings.Contains(err.Error(), `"widgets" is not a resource kubegap reads`) {
		t.Errorf("unknown name: %v", err)
	}
}

// TestClusterInfoYAMLStdoutRefusedClearly: `kubectl cluster-info dump -o
// yaml > f` puts pod logs inside YAML documents; the error says so.
func TestClusterInfoYAMLStdoutRefusedClearly(t *testing.T) {
	var b bytes.Buffer
	toYAML := func(j []byte) {
		y, err := sigsyaml.JSONToYAML(j)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(y)
	}
	toYAML(nodeList(t))
	for _, l := range clusterInfoLists(t, "default", true) {
		b.WriteString("---\n")
		toYAML(l.data)
	}
	b.WriteString("==== START logs for container app of pod default/x ====\nsome: log\n==== END logs for container app of pod default/x ====\n---\n")
	toYAML(clusterInfoLists(t, "kube-system", true)[0].data)
	_, _, err := LoadPathsWith([]string{write(t, t.TempDir(), "dump.yaml", b.Bytes())}, LoadOptions{})
	if err == nil || !strings.Contains(err.Error(), "dump.yaml: document 8: holds kubectl cluster-info dump -o yaml output") {
		t.Errorf("got %v", err)
	}
}

// BenchmarkLoadClusterInfoDump loads a cluster-info dump directory of 100
// namespaces of 50 pods each.
func BenchmarkLoadClusterInfoDump(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "state")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "nodes.json"), nodeList(b), 0o644)
	for n := range 100 {
		ns := "ns-" + strconv.Itoa(n)
		os.MkdirAll(filepath.Join(dir, ns), 0o755)
		pods := &corev1.PodList{}
		for i := range 50 {
			pods.Items = append(pods.Items, corev1.Pod{ObjectMeta: om(ns, "p-"+strconv.Itoa(i)),
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:1"}}}})
		}
		for _, l := range clusterInfoLists(b, ns, false) {
			data := l.data
			if l.file == "pods" {
				data = printed(b, pods, "v1", "PodList")
			}
			os.WriteFile(filepath.Join(dir, ns, l.file+".json"), data, 0o644)
		}
	}
	for b.Loop() {
		s, err := LoadPaths([]string{dir})
		if err != nil {
			b.Fatal(err)
		}
		if c := s.Status(Pods); !c.Complete || c.Count != 5000 {
			b.Fatalf("%+v", c)
		}
	}
}

// FuzzClusterInfoStream: whatever follows a NodeList (log sections cut
// anywhere, documents out of order), the load gives a snapshot or one
// input error, and claims completeness only for namespaces its objects name.
func FuzzClusterInfoStream(f *testing.F) {
	whole := clusterInfoStdout(f, "kube-system", "default", "empty")
	f.Add(whole)
	f.Add(whole[:len(whole)/2])
	f.Add(whole[:len(whole)*9/10])
	f.Add(append(nodeList(f), "==== START logs for container a of pod b/c ====\n{\"x\":"...))
	f.Add([]byte(`{"kind":"NodeList","apiVersion":"v1","items":[]}{"kind":"EventList","apiVersion":"v1","items":[{"metadata":{"name":"e","namespace":"a"}},{"metadata":{"name":"f","namespace":"b"}}]}`))
	f.Add([]byte(`{"clientVersion":{"gitVersion":"v1"},"serverVersion":{"gitVersion":""}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := LoadFS(fstestFS(data), Source{Type: SourceFiles}, []string{"dump.json"})
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error spans lines: %q", err)
			}
			return
		}
		for _, r := range dumpedNamespaced {
			c := s.Status(r)
			if !c.Complete {
				continue
			}
			if len(c.Namespaces) == 0 {
				t.Fatalf("%s complete cluster-wide from a stream", r.Resource)
			}
		}
	})
}

func fstestFS(data []byte) fstest.MapFS { return fstest.MapFS{"dump.json": {Data: data}} }
