// Package evidence checks a finding's evidence items against the input
// they quote. It reads the input files a second time, as plain documents
// (not through the snapshot loader, whose typed decoding, conversion of
// legacy API versions and trimming are what could go wrong), finds each
// item's objects among them and reads each field path: a value that
// differs, an object or a field that is not there, is a mismatch.
//
// Tests use it; the audit does not, because evidence items are only as
// good as the check that wrote them, and that is what tests are for.
package evidence

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/kubegap/kubegap/internal/apimetrics"
	"github.com/kubegap/kubegap/internal/finding"
)

// metricsFile is the name the recipe gives kubectl get --raw /metrics.
const metricsFile = "metrics.txt"

// seriesKind is the kind evidence gives a /metrics series: no Kubernetes
// object, a document of its labels and value (see addSeries).
const seriesKind = "APIServerMetric"

// readMetrics reads a saved /metrics output: each
// apiserver_requested_deprecated_apis series becomes a document named as
// the exposition names the series, with its labels under "labels" (empty
// ones left out, as the API omits empty fields) and its value. Each
// apiserver_request_duration_seconds series of a single-object write
// becomes one too, named as snapshot.WriteLatency names it, with its
// count and its le="1" bucket (fields count and le1).
func (in *Input) readMetrics(name string, r io.Reader) error {
	fams, err := apimetrics.ReadWith(r, []string{apimetrics.DeprecatedAPIs}, []string{apimetrics.RequestDuration})
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	for _, s := range fams[apimetrics.DeprecatedAPIs] {
		l := s.Labels
		in.addSeries(l["group"], l["version"], l["resource"], l["subresource"], l["removed_release"], s.ValueText())
	}
	for _, s := range fams[apimetrics.RequestDuration] {
		in.addDurationSeries(s)
	}
	return nil
}

// addDurationSeries adds a request-duration histogram series of a
// single-object write with a le="1" bucket.
func (in *Input) addDurationSeries(s apimetrics.Series) {
	l := s.Labels
	if l["scope"] != "resource" || l["dry_run"] != "" {
		return
	}
	for _, b := range s.Buckets {
		if b.UpperBound != 1 {
			continue
		}
		name := fmt.Sprintf(`%s{group=%q,resource=%q,scope="resource",subresource=%q,verb=%q,version=%q}`,
			apimetrics.RequestDuration, l["group"], l["resource"], l["subresource"], l["verb"], l["version"])
		labels := map[string]any{}
		for _, k := range []string{"group", "version", "resource", "subresource", "verb"} {
			if l[k] != "" {
				labels[k] = l[k]
			}
		}
		doc := map[string]any{"kind": seriesKind, "metadata": map[string]any{"name": name}, "labels": labels,
			"count": s.ValueText(), "le1": apimetrics.Series{Value: b.Count}.ValueText()}
		key := objectKey{seriesKind, "", name}
		in.objects[key] = append(in.objects[key], doc)
		in.count++
		return
	}
}

func (in *Input) addSeries(group, version, resource, subresource, removed, value string) {
	name := fmt.Sprintf(`%s{group=%q,removed_release=%q,resource=%q,subresource=%q,version=%q}`,
		apimetrics.DeprecatedAPIs, group, removed, resource, subresource, version)
	labels := map[string]any{}
	for k, v := range map[string]string{"group": group, "version": version, "resource": resource,
		"subresource": subresource, "removed_release": removed} {
		if v != "" {
			labels[k] = v
		}
	}
	doc := map[string]any{"kind": seriesKind, "metadata": map[string]any{"name": name}, "labels": labels, "value": value}
	key := objectKey{seriesKind, "", name}
	in.objects[key] = append(in.objects[key], doc)
	in.count++
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// Input is the objects of some input files, as plain JSON values, keyed
// by kind, namespace and name.
type Input struct {
	objects map[objectKey][]map[string]any
	count   int
}

type objectKey struct{ kind, namespace, name string }

// ReadPaths reads files and directories (walked for .yaml, .yml and .json
// files, gzipped or not), as `kubegap audit --from` takes them.
func ReadPaths(paths []string) (*Input, error) {
	in := &Input{objects: map[objectKey][]map[string]any{}}
	for _, p := range paths {
		err := filepath.WalkDir(p, func(name string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() || (name != p && !isInputFile(name)) {
				return nil
			}
			f, err := os.Open(name)
			if err != nil {
				return err
			}
			defer f.Close()
			return in.read(name, f)
		})
		if err != nil {
			return nil, err
		}
	}
	return in, nil
}

// ReadFS reads the named files of fsys, as the demo is loaded.
func ReadFS(fsys fs.FS, names []string) (*Input, error) {
	in := &Input{objects: map[objectKey][]map[string]any{}}
	for _, n := range names {
		f, err := fsys.Open(n)
		if err != nil {
			return nil, err
		}
		err = in.read(n, f)
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	return in, nil
}

func isInputFile(name string) bool {
	if filepath.Base(name) == metricsFile {
		return true
	}
	name = strings.TrimSuffix(strings.ToLower(name), ".gz")
	return strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml") || strings.HasSuffix(name, ".json")
}

func (in *Input) read(name string, r io.Reader) error {
	if strings.HasSuffix(strings.ToLower(name), ".gz") {
		z, err := gzip.NewReader(r)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		defer z.Close()
		r = z
	}
	br := bufio.NewReaderSize(r, 1<<16)
	if head, _ := br.Peek(4096); apimetrics.Looks(head) {
		return in.readMetrics(name, br)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(br, 1<<16)
	for {
		var doc map[string]any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		in.add(doc, "", "")
	}
}

// add records one document: an object, or a list (a kubectl List, a
// FooList, a kubegap snapshot) whose items are objects.
func (in *Input) add(doc map[string]any, apiVersion, kind string) {
	if doc == nil {
		return
	}
	if v, ok := doc["apiVersion"].(string); ok {
		apiVersion = v
	}
	if k, ok := doc["kind"].(string); ok {
		kind = k
	}
	if kind == "Snapshot" {
		// A kubegap snapshot keeps the /metrics series in its head.
		if ds, ok := doc["deprecatedAPIRequests"].([]any); ok {
			for _, d := range ds {
				if m, ok := d.(map[string]any); ok {
					in.addSeries(str(m["group"]), str(m["version"]), str(m["resource"]), str(m["subresource"]),
						str(m["removedRelease"]), str(m["value"]))
				}
			}
		}
	}
	if items, ok := doc["items"].([]any); ok {
		itemKind := ""
		if strings.HasSuffix(kind, "List") && kind != "List" {
			itemKind = strings.TrimSuffix(kind, "List")
		}
		for _, it := range items {
			if m, ok := it.(map[string]any); ok {
				in.add(m, apiVersion, itemKind)
			}
		}
		return
	}
	meta, _ := doc["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	if kind == "" || name == "" {
		return
	}
	ns, _ := meta["namespace"].(string)
	key := objectKey{kind, ns, name}
	in.objects[key] = append(in.objects[key], doc)
	in.count++
	if ns == "" {
		// A namespaced object written without a namespace is in
		// "default", as kubectl apply puts it.
		key.namespace = "default"
		in.objects[key] = append(in.objects[key], doc)
	}
}

// Len is how many objects the input holds.
func (in *Input) Len() int { return in.count }

// Mismatch is one way an evidence item differs from the input.
type Mismatch struct {
	Object finding.ObjectRef
	Path   string
	Want   string // what the item says
	Got    string // what the input holds
}

func (m Mismatch) String() string {
	return fmt.Sprintf("%s %s: evidence says %s, input has %s", m.Object, m.Path, m.Want, m.Got)
}

// Resolve reads every field of item on every object it names and returns
// where the input disagrees. An object the input holds several times (the
// same object in two files) agrees when one of them does.
func (in *Input) Resolve(item finding.EvidenceItem) []Mismatch {
	var out []Mismatch
	if len(item.Objects) == 0 || len(item.Fields) == 0 {
		return []Mismatch{{Want: "objects and fields", Got: "an item without them"}}
	}
	for _, o := range item.Objects {
		docs := in.objects[objectKey{o.Kind, o.Namespace, o.Name}]
		if len(docs) == 0 {
			out = append(out, Mismatch{Object: o, Want: "the object", Got: "no such object"})
			continue
		}
		for _, f := range item.Fields {
			want := describe(f.Value, !f.Absent)
			var gots []string
			agreed := false
			for _, d := range docs {
				v, found, err := Lookup(d, f.Path)
				if err != nil {
					gots = append(gots, err.Error())
					continue
				}
				// A field set to null or "" is as good as absent: the API
				// omits both. A map keeps an entry with an empty value
				// (a label such as node-role.kubernetes.io/control-plane:
				// ""), so "" also agrees with an item quoting "".
				if found && v == "" && !f.Absent && f.Value == "" {
					agreed = true
					break
				}
				if found && (v == nil || v == "") {
					found = false
				}
				got := describe(text(v), found)
				if found == !f.Absent && (f.Absent || text(v) == f.Value) {
					agreed = true
					break
				}
				gots = append(gots, got)
			}
			if !agreed {
				out = append(out, Mismatch{Object: o, Path: f.Path, Want: want, Got: strings.Join(gots, " / ")})
			}
		}
	}
	return out
}

func describe(v string, present bool) string {
	if !present {
		return "no such field"
	}
	return strconv.Quote(v)
}

// text prints a JSON value as kubectl's JSONPath output does: strings as
// they are, integers without a decimal point, lists and maps as JSON.
func text(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case int64:
		return strconv.FormatInt(x, 10)
	case json.Number:
		return x.String()
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSpace(b.String())
}

// Lookup reads a field path (see finding.Field) in a JSON object. found is
// false when some step of the path is not there; err is a path it cannot
// read.
func Lookup(obj map[string]any, path string) (v any, found bool, err error) {
	steps, err := parsePath(path)
	if err != nil {
		return nil, false, err
	}
	var cur any = obj
	for _, s := range steps {
		switch {
		case s.key != "":
			m, ok := cur.(map[string]any)
			if !ok {
				return nil, false, nil
			}
			if cur, ok = m[s.key]; !ok {
				return nil, false, nil
			}
		case s.selKey != "":
			list, ok := cur.([]any)
			if !ok {
				return nil, false, nil
			}
			var next any
			for _, el := range list {
				if m, ok := el.(map[string]any); ok && text(m[s.selKey]) == s.selValue {
					next = el
					break
				}
			}
			if next == nil {
				return nil, false, nil
			}
			cur = next
		default:
			list, ok := cur.([]any)
			if !ok || s.index >= len(list) {
				return nil, false, nil
			}
			cur = list[s.index]
		}
	}
	return cur, true, nil
}

// step is one step of a path: a map key, a list index, or the list
// element whose selKey field reads selValue.
type step struct {
	key              string
	index            int
	selKey, selValue string
}

func parsePath(path string) ([]step, error) {
	var steps []step
	rest := path
	for rest != "" {
		switch rest[0] {
		case '.':
			rest = rest[1:]
			continue
		case '[':
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return nil, fmt.Errorf("path %q: unclosed [", path)
			}
			inner := rest[1:end]
			rest = rest[end+1:]
			if k, v, ok := strings.Cut(inner, "="); ok {
				steps = append(steps, step{selKey: k, selValue: v})
			} else if n, err := strconv.Atoi(inner); err == nil && n >= 0 {
				steps = append(steps, step{index: n})
			} else if inner != "" {
				steps = append(steps, step{key: inner})
			} else {
				return nil, fmt.Errorf("path %q: empty []", path)
			}
			continue
		}
		end := strings.IndexAny(rest, ".[")
		if end < 0 {
			end = len(rest)
		}
		steps = append(steps, step{key: rest[:end]})
		rest = rest[end:]
	}
	if len(steps) == 0 {
		return nil, fmt.Errorf("empty path")
	}
	return steps, nil
}
