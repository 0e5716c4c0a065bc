package snapshot

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	json "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"k8s.io/apimachinery/pkg/util/validation"
)

// `kubectl cluster-info dump` (k8s.io/kubectl pkg/cmd/clusterinfo,
// clusterinfo_dump.go) lists, with client-go's typed clients, every Node,
// and then in each namespace it dumps every Event, ReplicationController,
// Service, DaemonSet, Deployment, ReplicaSet and Pod, in that order, and
// each pod's container logs. Each list is printed whole (one LIST, no
// limit) as a typed list: {"kind": "PodList", "apiVersion": "v1", "items":
// [...]}, whose items carry no kind or apiVersion. The namespaces are every
// namespace with --all-namespaces, those of --namespaces, or else
// kube-system and the kubeconfig context's namespace ("default" when the
// context names none).
//
// With --output-directory DIR it writes DIR/nodes.json and, per namespace,
// DIR/NS/events.json, replication-controllers.json, services.json,
// daemonsets.json, deployments.json, replicasets.json and pods.json (.yaml
// with -o yaml), and DIR/NS/POD/logs.txt. Without it, the same lists go to
// standard output as one JSON document after another, each namespace's
// pod logs after its PodList, framed by "==== START logs for container C
// of pod NS/P ====" and "==== END logs ... ====" lines.
//
// A list kubectl printed that way holds every object of its kind in its
// namespace: the loader marks Nodes complete, and each namespaced kind
// complete in the namespaces whose list of it the input holds.

// clusterInfoFiles are the files kubectl writes per namespace, in the order
// it writes them, with the resource each holds (ReplicationControllers,
// which kubegap does not read, have none) and the kind of its list.
var clusterInfoFiles = []struct {
	name     string
	res      *Resource
	listKind string
}{
	{"events", &Events, "EventList"},
	{"replication-controllers", nil, "ReplicationControllerList"},
	{"services", &Services, "ServiceList"},
	{"daemonsets", &DaemonSets, "DaemonSetList"},
	{"deployments", &Deployments, "DeploymentList"},
	{"replicasets", &ReplicaSets, "ReplicaSetList"},
	{"pods", &Pods, "PodList"},
}

// clusterInfoNodes is the one cluster-scoped file.
const clusterInfoNodes = "nodes"

// ClusterInfoDump says what a kubectl cluster-info dump in the input holds
// completely. Reports print it (see String) beside the scope.
type ClusterInfoDump struct {
	// Paths are the dump directories and files recognised.
	Paths []string `json:"paths"`
	// Resources are the resources read whole, as coverage names them, each
	// with the namespaces it was dumped in (none for Nodes).
	Resources []DumpedResource `json:"resources"`
	// UnnamedNamespaces counts namespaces a standard-output dump holds
	// that held none of the dumped kinds: their names are nowhere in it,
	// so nothing is claimed about them.
	UnnamedNamespaces int `json:"unnamedNamespaces,omitempty"`
}

// DumpedResource is one resource a dump holds whole.
type DumpedResource struct {
	Resource   string   `json:"resource"`
	Namespaces []string `json:"namespaces,omitempty"`
}

// String is "kubectl cluster-info dump: nodes complete; events, services,
// ... complete in namespaces default, kube-system".
func (d *ClusterInfoDump) String() string {
	var parts []string
	type group struct {
		names []string
		nss   []string
	}
	var groups []group
	for _, dr := range d.Resources {
		r, ok := Parse(dr.Resource)
		if !ok {
			continue
		}
		if !r.Namespaced {
			parts = append(parts, r.Resource+" complete")
			continue
		}
		i := slices.IndexFunc(groups, func(g group) bool { return slices.Equal(g.nss, dr.Namespaces) })
		if i < 0 {
			groups = append(groups, group{nss: dr.Namespaces})
			i = len(groups) - 1
		}
		groups[i].names = append(groups[i].names, r.Resource)
	}
	for _, g := range groups {
		parts = append(parts, strings.Join(g.names, ", ")+" complete in "+Scope{Namespaces: g.nss}.String())
	}
	s := "kubectl cluster-info dump: " + strings.Join(parts, "; ")
	if d.UnnamedNamespaces > 0 {
		s += "; " + pluralize(d.UnnamedNamespaces, "more namespace", "more namespaces") +
			" dumped without any of these objects (unnamed in the dump, so not covered)"
	}
	return s
}

func pluralize(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// clusterInfoSeen collects what cluster-info dumps proved while loading.
type clusterInfoSeen struct {
	paths    []string
	nodes    bool
	complete map[Resource][]string // namespaced resource → namespaces
	unnamed  int
}

func (c *clusterInfoSeen) addPath(p string) {
	if !slices.Contains(c.paths, p) {
		c.paths = append(c.paths, p)
	}
}

func (c *clusterInfoSeen) add(r Resource, ns string) {
	if c.complete == nil {
		c.complete = map[Resource][]string{}
	}
	if !slices.Contains(c.complete[r], ns) {
		c.complete[r] = append(c.complete[r], ns)
	}
}

// namespaces are where r was dumped whole, sorted; nil for none.
func (c *clusterInfoSeen) namespaces(r Resource) []string {
	if c == nil {
		return nil
	}
	nss := slices.Clone(c.complete[r])
	slices.Sort(nss)
	return nss
}

// source is what the report says about the dumps.
func (c *clusterInfoSeen) source() *ClusterInfoDump {
	if c == nil || len(c.paths) == 0 {
		return nil
	}
	d := &ClusterInfoDump{Paths: c.paths, UnnamedNamespaces: c.unnamed}
	if c.nodes {
		d.Resources = append(d.Resources, DumpedResource{Resource: Nodes.String()})
	}
	for _, f := range clusterInfoFiles {
		if f.res != nil && len(c.complete[*f.res]) > 0 {
			d.Resources = append(d.Resources, DumpedResource{Resource: f.res.String(), Namespaces: c.namespaces(*f.res)})
		}
	}
	return d
}

// clusterInfoFile recognises a file of a cluster-info dump directory: its
// resource (nil for replication-controllers), its namespace ("" for
// nodes) and the list kind kubectl wrote in it. A nodes file is one only
// when some namespace directory beside it holds a namespace file, and a
// namespace file only when its directory's parent holds the nodes file
// in the same format: a lone nodes.json or pods.json is just a file.
func clusterInfoFile(path string) (res *Resource, ns, listKind string, ok bool) {
	base := filepath.Base(path)
	var stem, ext string
	for _, e := range []string{".json", ".yaml"} {
		if s, found := strings.CutSuffix(base, e); found {
			stem, ext = s, e
		}
	}
	if stem == "" {
		return nil, "", "", false
	}
	dir := filepath.Dir(path)
	if stem == clusterInfoNodes {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil, "", "", false
		}
		for _, e := range entries {
			if !e.IsDir() || !isNamespaceName(e.Name()) {
				continue
			}
			for _, f := range clusterInfoFiles {
				if regular(filepath.Join(dir, e.Name(), f.name+ext)) {
					return &Nodes, "", "NodeList", true
				}
			}
		}
		return nil, "", "", false
	}
	for _, f := range clusterInfoFiles {
		if f.name != stem {
			continue
		}
		ns := filepath.Base(dir)
		if !isNamespaceName(ns) || !regular(filepath.Join(filepath.Dir(dir), clusterInfoNodes+ext)) {
			return nil, "", "", false
		}
		return f.res, ns, f.listKind, true
	}
	return nil, "", "", false
}

func regular(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

// isNamespaceName: namespace names are DNS-1123 labels.
func isNamespaceName(s string) bool { return len(validation.IsDNS1123Label(s)) == 0 }

// noteClusterInfoFile records what a file just loaded proves, when it is
// a cluster-info dump file that held exactly one list of the kind kubectl
// writes there. lists, files and snaps are the loader's counts before it.
func (l *loader) noteClusterInfoFile(name string, lists, files, snaps int) {
	res, ns, listKind, ok := clusterInfoFile(name)
	if !ok || l.lists != lists+1 || l.files != files+1 || l.snapshots != snaps || l.lastList.Kind != listKind || l.lastListPaged {
		return
	}
	if l.clusterInfo == nil {
		l.clusterInfo = &clusterInfoSeen{}
	}
	ci := l.clusterInfo
	root := filepath.Dir(name)
	if ns != "" {
		root = filepath.Dir(root)
	}
	ci.addPath(root)
	switch {
	case ns == "":
		ci.nodes = true
	case res != nil:
		ci.add(*res, ns)
	}
}

// The standard-output form.

// logStart and logEnd frame a container's logs in the standard-output form.
const (
	logStart = "==== START logs for container "
	logEnd   = "==== END logs for container "
)

// errClusterInfoYAMLStream: kubectl's YAML printer separates documents
// with "---" lines, so the log sections land inside the YAML documents.
var errClusterInfoYAMLStream = errors.New("holds kubectl cluster-info dump -o yaml output, whose pod logs break the YAML: " +
	"dump with -o json (the default) or --output-directory instead")

// isClusterInfoStream reports whether a JSON input starts as kubectl's
// cluster-info dump prints to standard output: a NodeList whose first key
// is its kind, as kubectl's JSON printer writes typed lists.
func isClusterInfoStream(br *bufio.Reader) bool {
	head, _ := br.Peek(256)
	dec := jsontext.NewDecoder(bytes.NewReader(head))
	if t, err := dec.ReadToken(); err != nil || t.Kind() != '{' {
		return false
	}
	if t, err := dec.ReadToken(); err != nil || t.String() != "kind" {
		return false
	}
	t, err := dec.ReadToken()
	return err == nil && t.String() == "NodeList"
}

// logFilter passes a cluster-info dump's standard output through without
// its log sections, so that what is left is the JSON documents. A section
// runs from a START line to the END line naming the same container and
// pod; the log lines between are never read as JSON, whatever they hold.
type logFilter struct {
	br        *bufio.Reader
	pending   []byte
	lineStart bool   // the next byte read starts a line
	inLog     string // the END line that closes the open section
	sections  int
}

func newLogFilter(br *bufio.Reader) *logFilter { return &logFilter{br: br, lineStart: true} }

func (f *logFilter) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		chunk, err := f.br.ReadSlice('\n')
		if len(chunk) == 0 && err != nil {
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			return 0, err
		}
		atStart := f.lineStart
		f.lineStart = len(chunk) > 0 && chunk[len(chunk)-1] == '\n'
		switch {
		case f.inLog != "":
			if atStart && string(bytes.TrimRight(chunk, "\r\n")) == f.inLog {
				f.inLog = ""
			}
		case atStart && bytes.HasPrefix(chunk, []byte(logStart)):
			f.sections++
			line := strings.TrimRight(string(chunk), "\r\n")
			f.inLog = logEnd + strings.TrimPrefix(line, logStart)
		default:
			f.pending = chunk
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) && len(f.pending) == 0 {
			return 0, err
		}
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}

// clusterInfoStream follows the documents of a standard-output dump: the
// NodeList, then per namespace the seven lists in kubectl's order. Each
// list's items name their namespace; a namespace none of whose lists holds
// an object goes unnamed.
type clusterInfoStream struct {
	docs []streamDoc
	bad  bool // a document out of kubectl's order: not a cluster-info dump
}

type streamDoc struct {
	kind       string
	namespaces []string
}

// list records one List document of the stream, with the namespaces its
// items name; paged is true when the server said more pages follow
// (metadata.continue), which kubectl's whole LISTs never do.
func (c *clusterInfoStream) list(tm typeMeta, paged bool, namespaces []string) {
	i := len(c.docs)
	want := "NodeList"
	if i > 0 {
		want = clusterInfoFiles[(i-1)%len(clusterInfoFiles)].listKind
	}
	if tm.Kind != want || paged {
		c.bad = true
		return
	}
	d := streamDoc{kind: tm.Kind}
	if i > 0 {
		d.namespaces = namespaces
	}
	c.docs = append(c.docs, d)
}

// other records a document that is not a List: not a cluster-info dump.
func (c *clusterInfoStream) other() { c.bad = true }

// result adds what the stream proves to seen: Nodes, and each namespaced
// list in the namespace its group's items name. A group whose items name
// two namespaces is not kubectl's: nothing is claimed from the stream.
func (c *clusterInfoStream) result(name string, seen *clusterInfoSeen) bool {
	// A NodeList alone is no cluster-info dump (kubectl get --raw prints
	// one too, maybe filtered): kubectl dumps at least one namespace.
	if c.bad || len(c.docs) < 2 {
		return false
	}
	per := len(clusterInfoFiles)
	var named []string
	unnamed := 0
	for g := 1; g < len(c.docs); g += per {
		group := c.docs[g:min(g+per, len(c.docs))]
		var nss []string
		for _, d := range group {
			for _, ns := range d.namespaces {
				if !slices.Contains(nss, ns) {
					nss = append(nss, ns)
				}
			}
		}
		switch len(nss) {
		case 0:
			unnamed++
			named = append(named, "")
		case 1:
			named = append(named, nss[0])
		default:
			return false
		}
	}
	seen.addPath(name)
	seen.nodes = true
	seen.unnamed += unnamed
	for gi, ns := range named {
		if ns == "" {
			continue
		}
		group := c.docs[1+gi*per : min(1+(gi+1)*per, len(c.docs))]
		for j := range group {
			if res := clusterInfoFiles[j].res; res != nil {
				seen.add(*res, ns)
			}
		}
	}
	return true
}

// loadClusterInfoStream reads a standard-output dump: the JSON documents
// without the log sections, and, when they follow kubectl's order, what
// they hold completely.
func (l *loader) loadClusterInfoStream(name string, br *bufio.Reader) error {
	stream := &clusterInfoStream{}
	l.ciStream = stream
	defer func() { l.ciStream = nil }()
	filter := newLogFilter(br)
	if err := l.loadJSONDocuments(name, filter); err != nil {
		return err
	}
	if l.clusterInfo == nil {
		l.clusterInfo = &clusterInfoSeen{}
	}
	// A NodeList alone (a dump directory's nodes.json) or followed by
	// other documents is just input; one with kubectl's log sections or
	// its first namespace's EventList was meant as a dump.
	meant := filter.sections > 0 || len(stream.docs) > 1 && stream.docs[1].kind == "EventList"
	if !stream.result(name, l.clusterInfo) && meant {
		l.opts.warn(Warning{File: name, Message: "starts as kubectl cluster-info dump output, but its lists do not follow kubectl's order " +
			"(nodes, then per namespace events, replication controllers, services, daemonsets, deployments, replicasets, pods): " +
			"its objects are read, and none of their kinds is taken as complete"})
	}
	return nil
}

// clusterInfoItemType is the kind of the items of a cluster-info dump
// file, from its name: the List's own kind says the same, but a YAML List
// too large to hold is read item by item before its kind is reached.
func clusterInfoItemType(name string) (typeMeta, bool) {
	res, _, listKind, ok := clusterInfoFile(name)
	if !ok {
		return typeMeta{}, false
	}
	if res == nil {
		return typeMeta{APIVersion: "v1", Kind: strings.TrimSuffix(listKind, "List")}, true
	}
	return typeMeta{APIVersion: res.APIVersion(), Kind: res.Kind}, true
}

// listItemType is the kind of the items of a typed List ("PodList" holds
// Pods of the List's apiVersion), or nothing for an untyped "List".
func listItemType(tm typeMeta) typeMeta {
	k, ok := strings.CutSuffix(tm.Kind, "List")
	if !ok || k == "" || tm.APIVersion == "" {
		return typeMeta{}
	}
	return typeMeta{APIVersion: tm.APIVersion, Kind: k}
}

// withItemType gives an item of a typed List the List's kind when it
// names neither kind nor apiVersion, as client-go's typed lists print
// (kubectl cluster-info dump, kubectl get --raw). An item that names one
// of them is left as it is: a missing other half stays an error.
func withItemType(raw []byte, def typeMeta) []byte {
	if def.Kind == "" {
		return raw
	}
	if tm, ok := leadingTypeMeta(raw); ok && (tm.Kind != "" || tm.APIVersion != "") {
		return raw
	}
	var tm typeMeta
	if err := json.Unmarshal(raw, &tm); err != nil || tm.Kind != "" || tm.APIVersion != "" {
		return raw // errors are addObject's to report
	}
	rest, ok := bytes.CutPrefix(bytes.TrimLeft(raw, " \t\r\n"), []byte("{"))
	if !ok {
		return raw
	}
	head, _ := json.Marshal(def.Kind)
	av, _ := json.Marshal(def.APIVersion)
	out := make([]byte, 0, len(raw)+len(head)+len(av)+24)
	out = append(out, `{"kind":`...)
	out = append(out, head...)
	out = append(out, `,"apiVersion":`...)
	out = append(out, av...)
	if t := bytes.TrimLeft(rest, " \t\r\n"); len(t) > 0 && t[0] != '}' {
		out = append(out, ',')
	}
	return append(out, rest...)
}
